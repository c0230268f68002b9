"""Model sweeps, push side: ``sweep preview | start | get | decide`` (docs/sweep.md).

Each flow returns a :class:`SweepOutcome` with its exit code decided; API errors are caught
into ``outcome.error`` (exit 2). Usage errors are raised before a flow starts. The verdict is
the server's: the flows read ``verdict.outcome`` for the exit code and nothing else, and a void
or not-comparable sweep exits 2 before any verdict or per-arm number is looked at.

``sweep run`` (runner mode) lives in :mod:`neens_action.flows.sweep.runner`; the helpers it
shares with these flows (arm parsing, request bodies, polling, exit codes) live here.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

from neens_action.api.sweep_comparison import SweepComparison
from neens_action.api.sweeps import Estimate, Sweep
from neens_action.errors import (
    Interrupted,
    NeensError,
)
from neens_action.flows.polling import PollTimeout, poll_until
from neens_action.outcome import SweepOutcome
from neens_action.settings.sweep import Poll
from neens_action.verdict import SWEEP_TERMINAL
from neens_action.world import World

TERMINAL = SWEEP_TERMINAL
FIRST_POLL_DELAY = 0.25  # polling starts fast and backs off to --poll-interval


class SweepClient(Protocol):  # the part of NeensClient the sweep flows use
    def preview_sweep(self, body: dict[str, Any]) -> tuple[Estimate | None, tuple[str, ...]]: ...
    def create_sweep(self, body: dict[str, Any]) -> Sweep: ...
    def get_sweep(self, sweep_id: str) -> Sweep: ...
    def get_sweep_comparison(self, sweep_id: str, bar: float | None = None,
                             baseline_arm: str | None = None) -> SweepComparison: ...
    def cancel_sweep(self, sweep_id: str, *, quick: bool = False) -> Sweep | None: ...


# ---------------------------------------------------------------- polling and signals


def arms_progress(sweep: Sweep) -> str:
    done, total = sweep.runs_progress()
    return f"{done}/{total} runs terminal"


def poll_sweep(
    client: SweepClient,
    sweep_id: str,
    *,
    poll: Poll,
    world: World,
    first: Sweep | None = None,
    stop: Callable[[], bool] | None = None,
) -> tuple[Sweep, bool]:
    """Poll ``GET /model-sweeps/{id}`` until the sweep is terminal: (last sweep, timed_out).

    The one poll loop (:func:`~neens_action.flows.polling.poll_until`): the first poll is
    immediate (or ``first`` is used); the delay starts at 0.25 s and doubles up to
    ``poll.interval``, so a verdict comes within a moment of the server finishing; a server
    outage is polled through as for runs. A status change prints one line.
    """
    try:
        sweep = poll_until(
            lambda: client.get_sweep(sweep_id), world=world, interval=poll.interval,
            timeout=poll.timeout, is_done=lambda s: (s.status or "") in TERMINAL,
            describe=lambda s: f"status={s.status or '?'} ({arms_progress(s)})",
            prefix=f"  sweep {sweep_id}: ", what=f"sweep {sweep_id}", first=first,
            first_delay=FIRST_POLL_DELAY, stop=stop)
    except PollTimeout as exc:
        return exc.last, True
    return sweep, False


# ---------------------------------------------------------------- the flows


def _fail(outcome: SweepOutcome, err: NeensError) -> SweepOutcome:
    outcome.error = str(err)
    outcome.interrupted = isinstance(err, Interrupted)
    return outcome


def preview_flow(client: SweepClient, body: dict[str, Any], *, world: World) -> SweepOutcome:
    outcome = SweepOutcome(command="preview")
    try:
        estimate, refusals = client.preview_sweep(body)
    except NeensError as err:
        return _fail(outcome, err)
    if estimate is None:
        outcome.error = "the server returned no estimate for this sweep"
        return outcome
    # refusals are shown, never failed
    outcome.estimate, outcome.refusals = estimate, list(refusals)
    return outcome


def _judge_state(outcome: SweepOutcome, sweep: Sweep, *, require_all_arms: bool,
                 timed_out: bool) -> SweepOutcome:
    outcome.sweep = sweep
    outcome.require_all_arms = require_all_arms
    outcome.timed_out = timed_out
    status = sweep.status
    if status == "void":
        outcome.error = f"sweep {outcome.sweep_id} is void: the comparison is refused"
    elif status == "failed":
        outcome.error = f"sweep {outcome.sweep_id} failed" + (
            f": {sweep.error}" if sweep.error else "")
    elif timed_out:
        outcome.warnings.append(
            f"the sweep was still {status} when the poll timeout ran out; "
            f"check later with: neens sweep get {outcome.sweep_id}")
    return outcome


def start_flow(
    client: SweepClient, body: dict[str, Any], *, wait: bool, require_all_arms: bool,
    poll: Poll, world: World,
) -> SweepOutcome:
    outcome = SweepOutcome(command="start")
    wait = wait or require_all_arms
    try:
        created = client.create_sweep(body)
        outcome.sweep_id = created.id
        if not outcome.sweep_id:
            outcome.error = "the server created a sweep but returned no id"
            return outcome
        outcome.estimate, outcome.refusals = created.estimate, list(created.refusals)
        k = created.pass_k if created.pass_k is not None else body.get("passK", "?")
        world.log(f"Created sweep {outcome.sweep_id} ({len(body['arms'])} arms x k={k})")
        timed_out = False
        sweep = created
        if wait and created.status not in TERMINAL:
            world.log("Waiting for the sweep to finish ...")
            sweep, timed_out = poll_sweep(client, outcome.sweep_id, poll=poll, world=world)
        elif not wait and created.status not in TERMINAL:
            world.log(f"  not waiting: poll it with `neens sweep get {outcome.sweep_id}` "
                      f"and decide with `neens sweep decide --sweep-id {outcome.sweep_id}`")
    except NeensError as err:
        return _fail(outcome, err)
    return _judge_state(outcome, sweep, require_all_arms=require_all_arms, timed_out=timed_out)


def get_flow(
    client: SweepClient, sweep_id: str, *, wait: bool, require_all_arms: bool, poll: Poll,
    world: World,
) -> SweepOutcome:
    outcome = SweepOutcome(command="get", sweep_id=sweep_id)
    try:
        if wait or require_all_arms:
            sweep, timed_out = poll_sweep(client, sweep_id, poll=poll, world=world)
        else:
            sweep, timed_out = client.get_sweep(sweep_id), False
    except NeensError as err:
        return _fail(outcome, err)
    outcome.estimate, outcome.refusals = sweep.estimate, list(sweep.refusals)
    return _judge_state(outcome, sweep, require_all_arms=require_all_arms, timed_out=timed_out)


def decide_flow(
    client: SweepClient, sweep_id: str, *, bar: float | None, baseline_arm: str | None,
    wait: bool, require_winner: bool, poll: Poll, world: World,
) -> SweepOutcome:
    outcome = SweepOutcome(command="decide", sweep_id=sweep_id)
    try:
        if wait or require_winner:
            outcome.sweep, timed_out = poll_sweep(client, sweep_id, poll=poll, world=world)
            if timed_out:
                outcome.warnings.append(
                    f"the sweep was still {outcome.sweep.status} when the poll timeout "
                    "ran out: the verdict below is not final")
        comparison = client.get_sweep_comparison(sweep_id, bar=bar, baseline_arm=baseline_arm)
    except NeensError as err:
        return _fail(outcome, err)
    outcome.comparison = comparison
    outcome.require_winner = require_winner
    if comparison.void:
        outcome.error = f"sweep {sweep_id} is void: the comparison is refused"
    elif comparison.status == "failed":
        outcome.error = f"sweep {sweep_id} failed"
    return outcome
