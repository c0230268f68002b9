"""Interrupts and abandoned runs (exit 130, docs/cli.md), shared by the pull, push, stress and watch
flows: cancel the run this process created, or say how to resume one it was given."""

from __future__ import annotations

import shlex
from collections.abc import Sequence
from typing import TYPE_CHECKING

from neens_action.errors import NeensError
from neens_action.outcome import Outcome
from neens_action.world import World

if TYPE_CHECKING:
    from neens_action.api.client import NeensClient


def cancel_created_run(client: NeensClient, outcome: Outcome, world: World) -> None:
    """Best effort, one quick attempt: never leave a run we created waiting for traces."""
    try:
        client.cancel_run(outcome.run_id, quick=True)
        world.log(f"neens: cancelled run {outcome.run_id}")
    except (NeensError, KeyboardInterrupt) as exc:
        world.log(f"neens: warning: could not cancel run {outcome.run_id} ({exc})")


def resume_hint(run_id: str, command: Sequence[str] | str) -> str:
    cmd = command if isinstance(command, str) else shlex.join(command)
    return f"neens eval run --run-id {shlex.quote(run_id)} -- {cmd}"


def handle_interrupt(client: NeensClient, outcome: Outcome, *, world: World,
                     command: Sequence[str] | str) -> None:
    """Agents are already killed; cancel the run we created, or print how to resume one given."""
    outcome.interrupted = True
    outcome.error = "interrupted (SIGINT/SIGTERM): agent processes were killed"
    world.log("neens: interrupted: agent processes killed")
    if not outcome.run_id:
        return
    if outcome.created:
        cancel_created_run(client, outcome, world)
    else:
        world.log(f"neens: run {outcome.run_id} was left as is; resume it with: "
                  f"{resume_hint(outcome.run_id, command)}")


def abandon(client: NeensClient, outcome: Outcome, world: World) -> None:
    """A run we created but could not start is cancelled so it does not wait forever."""
    if outcome.created and not outcome.started:
        try:
            client.cancel_run(outcome.run_id, quick=True)
        except NeensError:  # the run error already says why (often: the server is gone)
            outcome.error = (outcome.error or "") + (
                f"; run {outcome.run_id} could not be cancelled either")
