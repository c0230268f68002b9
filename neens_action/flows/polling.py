"""The one poll loop: runs, shard capture, scenario suites and sweeps all wait through it.

Polling starts fast (the first poll is immediate, then about 0.5 s) and backs off by doubling
up to ``--poll-interval``, so a verdict arrives within a second of the server finishing
while a long run costs few requests. A poll that fails transiently (after the client's own
retries: transport errors, 429, 5xx) does not end the wait: polling goes on within the
budget, unless the server stays unreachable for :data:`MAX_OUTAGE` seconds.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import Any

from neens_action.errors import NeensApiError, RunError
from neens_action.world import World

FIRST_DELAY = 0.5
MAX_OUTAGE = 120.0  # seconds of consecutive failed polls before giving up

Obj = dict[str, Any]


class PollTimeout(RunError):
    """The budget ran out (or ``stop`` said so) before ``is_done``: ``last`` is the last
    object read, for callers that report a timeout instead of failing on it."""

    def __init__(self, message: str, last: Obj) -> None:
        super().__init__(message)
        self.last = last


def poll_delays(interval: float, *, first: float = FIRST_DELAY,
                factor: float = 2.0) -> Iterator[float]:
    """0.5, 1, 2, 4 ... capped at ``interval`` (and never above it, even when small)."""
    delay = min(first, interval)
    while True:
        yield delay
        delay = min(interval, delay * factor)


def poll_until(
    fetch: Callable[[], Obj],
    *,
    world: World,
    interval: float,
    timeout: float,
    is_done: Callable[[Obj], bool],
    describe: Callable[[Obj], str] | None = None,
    prefix: str = "",
    on_poll: Callable[[Obj], None] | None = None,
    what: str = "polling",
    nearly_done: Callable[[Obj], bool] | None = None,
    first: Obj | None = None,
    first_delay: float = FIRST_DELAY,
    stop: Callable[[], bool] | None = None,
    outage_budget: float | None = None,
) -> Obj:
    """Call ``fetch`` until ``is_done``; log ``prefix + describe(obj)`` whenever it changes
    (no lines without ``describe``).

    ``first``: an object already read, used instead of the first fetch. ``first_delay``: the
    first backed-off delay. While ``nearly_done(obj)`` holds (e.g. every item is scored, only
    the verdict is pending) the next poll comes after :data:`FIRST_DELAY` instead of the
    backed-off delay, so the verdict is seen within a second of the server finishing.

    Raises :class:`PollTimeout` (a RunError, with the last state in the message and in
    ``last``) when ``timeout`` seconds pass first, or when ``stop()`` turns true. A transient
    API error from ``fetch`` is logged once and polling goes on; the error is raised when
    ``outage_budget`` seconds (default: ``timeout``) have passed since the start, or after
    :data:`MAX_OUTAGE` seconds of failures. Other API errors propagate.
    """
    clock = world.clock
    start = clock.monotonic()
    deadline = start + timeout
    outage_end = start + (timeout if outage_budget is None else max(timeout, outage_budget))
    delays = poll_delays(interval, first=first_delay)
    last_text: str | None = None
    failing_since: float | None = None
    pending = first
    while True:
        if pending is not None:
            obj, pending = pending, None
        else:
            try:
                obj = fetch()
            except NeensApiError as exc:
                now = clock.monotonic()
                if not exc.transient or now >= outage_end or (
                        failing_since is not None and now - failing_since >= MAX_OUTAGE):
                    raise
                if failing_since is None:
                    failing_since = now
                    world.log(f"{prefix}{exc} (still polling)")
                    last_text = None
                clock.sleep(min(next(delays), outage_end - now))
                continue
        failing_since = None
        text = describe(obj) if describe is not None else None
        if text is not None and text != last_text:
            world.log(f"{prefix}{text}")
            last_text = text
        if on_poll is not None:
            on_poll(obj)
        if is_done(obj):
            return obj
        remaining = deadline - clock.monotonic()
        if remaining <= 0 or (stop is not None and stop()):
            status = obj.get("status") if isinstance(obj, Mapping) else getattr(
                obj, "status", None)  # a decoded answer, or a JSON object
            state = text if text is not None else str(status or "unknown")
            raise PollTimeout(f"{what} did not finish within {timeout:g}s (last status: "
                              f"{state}); raise --poll-timeout or check the run in Neens", obj)
        delay = next(delays)
        if nearly_done is not None and nearly_done(obj):
            delay = min(delay, FIRST_DELAY)
        clock.sleep(min(delay, remaining))


__all__ = ["FIRST_DELAY", "MAX_OUTAGE", "PollTimeout", "poll_delays", "poll_until"]
