"""Pieces shared by the run flows: polling with a fast start, status lines, baseline text.

Polling starts fast (the first poll is immediate, then about 0.5 s) and backs off by doubling
up to ``--poll-interval``, so a verdict arrives within a second of the server finishing
while a long run costs few requests. A poll that fails transiently (after the client's own
retries: transport errors, 429, 5xx) does not end the wait: polling goes on within
``--poll-timeout``, unless the server stays unreachable for :data:`MAX_OUTAGE` seconds.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from neens_action.errors import NeensApiError, RunError
from neens_action.items import ItemDigest
from neens_action.world import World

TERMINAL_RUN = frozenset({"completed", "completed_with_regressions", "failed", "cancelled"})
FIRST_DELAY = 0.5
MAX_OUTAGE = 120.0  # seconds of consecutive failed polls before giving up


def poll_delays(interval: float, *, first: float = FIRST_DELAY,
                factor: float = 2.0) -> Iterator[float]:
    """0.5, 1, 2, 4 ... capped at ``interval`` (and never above it, even when small)."""
    delay = min(first, interval)
    while True:
        yield delay
        delay = min(interval, delay * factor)


def is_terminal(run: dict[str, Any] | None) -> bool:
    return isinstance(run, dict) and run.get("status") in TERMINAL_RUN


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def progress_text(run: dict[str, Any]) -> str:
    return (f"{run.get('status') or 'unknown'} "
            f"({_int(run.get('completed'))}/{_int(run.get('total'))} scored)")


def legacy_notice(run: dict[str, Any]) -> str | None:
    if not run.get("legacyCorrelationSeenAt"):
        return None
    attrs = run.get("legacyCorrelationAttrs") or []
    names = ", ".join(str(a) for a in attrs) if isinstance(attrs, list) and attrs else "old names"
    return (f"traces with old-brand correlation attributes ({names}) reached this run and "
            "correlate to nothing: upgrade the agent's instrumentation to the neens.* attributes")


def poll_until(
    fetch: Callable[[], dict[str, Any]],
    *,
    world: World,
    interval: float,
    timeout: float,
    is_done: Callable[[dict[str, Any]], bool] = is_terminal,
    describe: Callable[[dict[str, Any]], str] = progress_text,
    prefix: str = "  run status: ",
    on_poll: Callable[[dict[str, Any]], None] | None = None,
    what: str = "scoring",
    nearly_done: Callable[[dict[str, Any]], bool] | None = None,
) -> dict[str, Any]:
    """Call ``fetch`` until ``is_done``; log a line whenever ``describe`` changes.

    While ``nearly_done(obj)`` holds (e.g. every item is scored, only the verdict is
    pending) the next poll comes after :data:`FIRST_DELAY` instead of the backed-off delay,
    so the verdict is seen within a second of the server finishing.

    Raises RunError when ``timeout`` seconds pass first (with the last state in the
    message). A transient API error from ``fetch`` is logged once and polling goes on (the
    error is raised when the budget is spent or after :data:`MAX_OUTAGE` seconds of
    failures); other API errors propagate.
    """
    clock = world.clock
    deadline = clock.monotonic() + timeout
    delays = poll_delays(interval)
    last_text = None
    failing_since: float | None = None
    while True:
        try:
            obj = fetch()
        except NeensApiError as exc:
            now = clock.monotonic()
            if not exc.transient or now >= deadline or (
                    failing_since is not None and now - failing_since >= MAX_OUTAGE):
                raise
            if failing_since is None:
                failing_since = now
                world.log(f"{prefix}{exc} (still polling)")
                last_text = None
            clock.sleep(min(next(delays), deadline - now))
            continue
        failing_since = None
        text = describe(obj)
        if text != last_text:
            world.log(f"{prefix}{text}")
            last_text = text
        if on_poll is not None:
            on_poll(obj)
        if is_done(obj):
            return obj
        remaining = deadline - clock.monotonic()
        if remaining <= 0:
            raise RunError(f"{what} did not finish within {timeout:g}s (last status: {text}); "
                           "raise --poll-timeout or check the run in Neens")
        delay = next(delays)
        if nearly_done is not None and nearly_done(obj):
            delay = min(delay, FIRST_DELAY)
        clock.sleep(min(delay, remaining))


def all_scored(run: dict[str, Any]) -> bool:
    """A started run whose every item is scored: only its verdict is still to come."""
    total = _int(run.get("total"))
    return run.get("status") == "running" and total > 0 and _int(run.get("completed")) >= total


def poll_run(client: Any, run_id: str, *, world: World, interval: float, timeout: float,
             on_poll: Callable[[dict[str, Any]], None] | None = None,
             digest: ItemDigest | None = None) -> dict[str, Any]:
    """Poll E2 until the run is terminal (without the per-item list when the client can),
    then return the terminal run with its items, or, with ``digest``, without them: they
    are folded into the digest as they stream in (memory flat in the item count). Prints
    the legacy-correlation notice once."""
    seen = {"legacy": None}

    def watch(run: dict[str, Any]) -> None:
        if seen["legacy"] is None:
            notice = legacy_notice(run)
            if notice:
                seen["legacy"] = notice
                world.log(f"neens: notice: {notice}")
        if on_poll is not None:
            on_poll(run)

    summary = getattr(client, "get_run_summary", None)
    fetch = summary or client.get_run
    try:
        run = poll_until(lambda: fetch(run_id), world=world, interval=interval,
                         timeout=timeout, on_poll=watch, nearly_done=all_scored)
    except RunError as exc:
        if seen["legacy"]:
            raise RunError(f"{exc} ({seen['legacy']})") from None
        raise
    if digest is not None:
        if summary is None or isinstance(run.get("items"), list):  # the items came along
            digest.reset()
            for row in run.pop("items", None) or []:
                digest.add(row)
        else:
            run = client.get_run(run_id, digest=digest)
    elif summary is not None and "items" not in run:  # polled without the items: read them
        run = client.get_run(run_id)
    return run


def describe_baseline(baseline: Any, resolution: Any = None) -> str:
    """``Baseline: <this>`` (spec 4.1.4, decision 8 shapes)."""
    if not isinstance(baseline, dict) or not baseline:
        text = "server default"
    else:
        kind = baseline.get("kind")
        if kind == "preprod_run":
            text = f"run {baseline.get('runId') or baseline.get('value') or '?'}"
        elif kind == "prod_window":
            text = f"production window ({baseline.get('range') or '7d'})"
        elif kind == "branch":
            text = f"branch {baseline.get('value') or '?'}"
        else:
            text = str(kind or "server default")
    if isinstance(resolution, dict) and resolution:
        requested = resolution.get("requested")
        detail = resolution.get("detail") or ""
        resolved = resolution.get("resolvedRunId") or resolution.get("resolved")
        fell_back = (not resolved) or (resolution.get("resolved") == "prod_window" and (
            isinstance(requested, str) and not requested.startswith("prod")
        ))
        if requested:
            text += f" — {requested}{' fell back' if fell_back else ''}: {detail}".rstrip(": ")
        elif detail:
            text += f" — {detail}"
    return text
