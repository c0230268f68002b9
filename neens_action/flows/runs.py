"""Run lifecycle helpers every eval flow shares: run states, the status line, waiting for a
run's verdict through the one poll loop (:mod:`neens_action.flows.polling`), baseline text."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from neens_action.errors import RunError
from neens_action.flows.polling import poll_until
from neens_action.items import ItemDigest
from neens_action.world import World

if TYPE_CHECKING:
    from neens_action.api.client import NeensClient

TERMINAL_RUN = frozenset({"completed", "completed_with_regressions", "failed", "cancelled"})


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


def all_scored(run: dict[str, Any]) -> bool:
    """A started run whose every item is scored: only its verdict is still to come."""
    total = _int(run.get("total"))
    return run.get("status") == "running" and total > 0 and _int(run.get("completed")) >= total


def poll_run(client: NeensClient, run_id: str, *, world: World, interval: float, timeout: float,
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
                         timeout=timeout, is_done=is_terminal, describe=progress_text,
                         prefix="  run status: ", what="scoring", on_poll=watch,
                         nearly_done=all_scored)
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
