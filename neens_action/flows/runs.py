"""Run lifecycle helpers every eval flow shares: run states, the status line, waiting for a
run's verdict through the one poll loop (:mod:`neens_action.flows.polling`), baseline text."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import TYPE_CHECKING

from neens_action.api.answers import Run
from neens_action.errors import RunError
from neens_action.flows.polling import poll_until
from neens_action.items import ItemDigest
from neens_action.world import World

if TYPE_CHECKING:
    from neens_action.api.client import NeensClient

def is_terminal(run: Run | None) -> bool:
    return run is not None and run.terminal


def progress_text(run: Run) -> str:
    return f"{run.status or 'unknown'} ({run.completed}/{run.total} scored)"


def legacy_notice(run: Run) -> str | None:
    if not run.legacy_seen:
        return None
    names = ", ".join(run.legacy_attrs) or "old names"
    return (f"traces with old-brand correlation attributes ({names}) reached this run and "
            "correlate to nothing: upgrade the agent's instrumentation to the neens.* attributes")


def all_scored(run: Run) -> bool:
    """A started run whose every item is scored: only its verdict is still to come."""
    return run.status == "running" and run.total > 0 and run.completed >= run.total


def poll_run(client: NeensClient, run_id: str, *, world: World, interval: float, timeout: float,
             on_poll: Callable[[Run], None] | None = None,
             digest: ItemDigest | None = None) -> Run:
    """Poll E2 until the run is terminal (without the per-item list when the client can),
    then return the terminal run with its items, or, with ``digest``, without them: they
    are folded into the digest as they stream in (memory flat in the item count). Prints
    the legacy-correlation notice once."""
    seen = {"legacy": None}

    def watch(run: Run) -> None:
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
        if summary is None or run.items is not None:  # the items came along
            digest.reset()
            for row in run.items or ():
                digest.add_row(row)
            run = dataclasses.replace(run, items=None)
        else:
            run = client.get_run(run_id, digest=digest)
    elif summary is not None and run.items is None:  # polled without the items: read them
        run = client.get_run(run_id)
    return run
