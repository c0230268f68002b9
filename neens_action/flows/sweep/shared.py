"""Model sweeps, push side: ``sweep preview | start | get | decide`` (spec 7.4, 8.4, 8.5).

Each flow returns a :class:`SweepOutcome` with its exit code decided; API errors are caught
into ``outcome.error`` (exit 2). Usage errors are raised before a flow starts. The verdict is
the server's: the flows read ``verdict.outcome`` for the exit code and nothing else, and a void
or not-comparable sweep exits 2 before any verdict or per-arm number is looked at.

``sweep run`` (runner mode) lives in :mod:`neens_action.flows.sweep.runner`; the helpers it
shares with these flows (arm parsing, request bodies, polling, exit codes) live here.
"""

from __future__ import annotations

import contextlib
import math
import signal
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, Protocol

from neens_action.errors import (
    EXIT_ERROR,
    EXIT_FAILED,
    EXIT_PASSED,
    Interrupted,
    NeensError,
    UsageError,
)
from neens_action.flows.polling import PollTimeout, poll_until
from neens_action.outcome import SweepOutcome
from neens_action.world import World

TERMINAL = frozenset({"completed", "completed_with_failures", "failed", "cancelled", "void"})
FIRST_POLL_DELAY = 0.25  # polling starts fast and backs off to --poll-interval


class SweepClient(Protocol):  # the part of NeensClient the sweep flows use
    def preview_sweep(self, body: dict[str, Any]) -> dict: ...
    def create_sweep(self, body: dict[str, Any]) -> dict: ...
    def get_sweep(self, sweep_id: str) -> dict: ...
    def get_sweep_comparison(self, sweep_id: str, bar: float | None = None,
                             baseline_arm: str | None = None) -> dict: ...
    def cancel_sweep(self, sweep_id: str, *, quick: bool = False) -> dict | None: ...


@dataclass(frozen=True)
class Poll:
    interval: float = 10.0
    timeout: float = 3600.0


# ---------------------------------------------------------------- arms, targets, bodies


def parse_arms(values: list[str] | tuple[str, ...], *, runner: bool) -> list[dict[str, str]]:
    """``LABEL=CONNECTION_ID`` (push) or ``LABEL=MODEL`` (runner) arms, validated.

    Split on the first ``=``; both halves required; labels distinct; connections (push) or
    models (runner) distinct, because two arms on one connection is the same model twice.
    """
    what = "MODEL" if runner else "CONNECTION_ID"
    arms: list[dict[str, str]] = []
    labels: set[str] = set()
    targets: set[str] = set()
    for raw in values:
        label, sep, target = raw.partition("=")
        label, target = label.strip(), target.strip()
        if not sep or not label or not target:
            raise UsageError(f"invalid --arm {raw!r}: expected LABEL={what}")
        if label in labels:
            raise UsageError(f"duplicate arm label {label!r}: every --arm needs its own label")
        if target in targets:
            thing = "model" if runner else "connection"
            raise UsageError(
                f"two arms on one {thing} ({target!r}): that is the same model twice, "
                "not a comparison"
            )
        labels.add(label)
        targets.add(target)
        if runner:
            arms.append({"label": label, "model": target, "runnerMode": "runner"})
        else:
            arms.append({"label": label, "agentConnectionId": target})
    if not arms:
        raise UsageError(f"no arms: pass at least one --arm LABEL={what}")
    return arms


def target_fields(dataset_id: str | None, dataset_version_id: str | None,
                  scenario_suite_id: str | None) -> dict[str, str]:
    """Exactly one of the three sweep targets, as camelCase request fields."""
    given = {
        key: value.strip()
        for key, value in (("datasetId", dataset_id), ("datasetVersionId", dataset_version_id),
                           ("scenarioSuiteId", scenario_suite_id))
        if value and value.strip()
    }
    if not given:
        raise UsageError(
            "no sweep target: give one of --dataset-id, --dataset-version-id, --scenario-suite-id"
        )
    if len(given) > 1:
        raise UsageError(
            "give only one of --dataset-id, --dataset-version-id, --scenario-suite-id"
        )
    return given


def sweep_body(
    *,
    arms: list[dict[str, str]],
    target: dict[str, str],
    pass_k: int | None = None,
    judges: list[str] | tuple[str, ...] = (),
    name: str | None = None,
    version_label: str | None = None,
    budget_usd: float | None = None,
) -> dict[str, Any]:
    """The E12/E13 body (camelCase; unset fields omitted, never null)."""
    body: dict[str, Any] = {"arms": arms, **target}
    if name is not None:
        body["name"] = name
    if version_label is not None:
        body["versionLabel"] = version_label
    if pass_k is not None:
        body["passK"] = int(pass_k)
    if judges:
        body["judgeDeploymentIds"] = list(judges)
    if budget_usd is not None:
        body["budgetUsd"] = budget_usd
    return body


def check_pass_k(value: int | None) -> None:
    if value is not None and value < 1:
        raise UsageError(f"--pass-k must be at least 1 (got {value})")


def check_bar(value: float | None) -> None:
    if value is not None and (math.isnan(value) or not 0.0 <= value <= 1.0):
        raise UsageError(f"--bar must be a pass rate between 0 and 1 (got {value})")


def check_poll(poll: Poll) -> None:
    if math.isnan(poll.interval) or poll.interval <= 0:
        raise UsageError(f"--poll-interval must be > 0 seconds (got {poll.interval})")
    if math.isnan(poll.timeout) or poll.timeout <= 0:
        raise UsageError(f"--poll-timeout must be > 0 seconds (got {poll.timeout})")


def check_budget(value: float | None) -> None:
    if value is not None and (math.isnan(value) or value < 0):
        raise UsageError(f"--budget-usd must be a non-negative amount (got {value})")


def unwrap_estimate(payload: Any) -> tuple[dict[str, Any] | None, list[str]]:
    """An estimate bare or as ``{"estimate": {...}, "refusals": [...]}``."""
    if not isinstance(payload, dict):
        return None, []
    refusals = [str(r) for r in payload.get("refusals") or []]
    if isinstance(payload.get("estimate"), dict):
        return payload["estimate"], refusals
    if "perArm" in payload or "totalRuns" in payload:
        return payload, refusals
    return None, refusals


# ---------------------------------------------------------------- polling and signals


@contextlib.contextmanager
def signals_as_interrupt() -> Iterator[None]:
    """SIGINT and SIGTERM raise :class:`Interrupted` in the main thread (CI cancels with TERM)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def handler(signum: int, frame: Any) -> None:
        raise Interrupted()

    previous = {sig: signal.signal(sig, handler) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for sig, old in previous.items():
            signal.signal(sig, old)


def arms_progress(sweep: dict[str, Any]) -> str:
    arms = [a for a in sweep.get("arms") or [] if isinstance(a, dict)]
    done = sum(int(a.get("runsTerminal") or 0) for a in arms)
    total = sum(int(a.get("runsTotal") or 0) for a in arms)
    return f"{done}/{total} runs terminal"


def poll_sweep(
    client: SweepClient,
    sweep_id: str,
    *,
    poll: Poll,
    world: World,
    first: dict[str, Any] | None = None,
    stop: Callable[[], bool] | None = None,
) -> tuple[dict[str, Any], bool]:
    """Poll E14 until the sweep is terminal: (last sweep, timed_out).

    The one poll loop (:func:`~neens_action.flows.polling.poll_until`): the first poll is
    immediate (or ``first`` is used); the delay starts at 0.25 s and doubles up to
    ``poll.interval``, so a verdict comes within a moment of the server finishing; a server
    outage is polled through as for runs. A status change prints one line.
    """
    try:
        sweep = poll_until(
            lambda: client.get_sweep(sweep_id), world=world, interval=poll.interval,
            timeout=poll.timeout, is_done=lambda s: str(s.get("status") or "") in TERMINAL,
            describe=lambda s: f"status={s.get('status') or '?'} ({arms_progress(s)})",
            prefix=f"  sweep {sweep_id}: ", what=f"sweep {sweep_id}", first=first,
            first_delay=FIRST_POLL_DELAY, stop=stop)
    except PollTimeout as exc:
        return exc.last, True
    return sweep, False


# ---------------------------------------------------------------- exit codes (pure)


def state_exit_code(sweep: dict[str, Any], *, require_all_arms: bool) -> int:
    """``sweep start`` / ``get`` (spec 8.4), after usage and API errors were ruled out."""
    status = sweep.get("status")
    if status in ("void", "failed"):
        return EXIT_ERROR
    if not require_all_arms:
        return EXIT_PASSED
    if status not in TERMINAL:
        return EXIT_FAILED
    arms = [a for a in sweep.get("arms") or [] if isinstance(a, dict)]
    return EXIT_PASSED if arms and all(a.get("passed") is True for a in arms) else EXIT_FAILED


def comparison_is_void(comparison: dict[str, Any]) -> bool:
    return comparison.get("status") == "void" or comparison.get("comparable") is False


def decide_exit_code(comparison: dict[str, Any], *, require_winner: bool) -> int:
    """``sweep decide`` (spec 8.5): void is checked before any verdict is read."""
    if comparison_is_void(comparison):
        return EXIT_ERROR
    status = comparison.get("status")
    if status == "failed":
        return EXIT_ERROR
    if not require_winner:
        return EXIT_PASSED
    if status not in TERMINAL:
        return EXIT_FAILED
    verdict = comparison.get("verdict") if isinstance(comparison.get("verdict"), dict) else {}
    return EXIT_PASSED if verdict.get("outcome") == "winner" else EXIT_FAILED


def run_exit_code(comparison: dict[str, Any]) -> tuple[int, str | None]:
    """``sweep run`` (spec 8.5): (exit code, run error sentence or None)."""
    sweep_id = comparison.get("sweepId") or "the sweep"
    if comparison_is_void(comparison):
        reason = comparison.get("voidReason") or "the arms did not run under identical conditions"
        return EXIT_ERROR, f"sweep {sweep_id} is void: {reason}"
    status = comparison.get("status")
    if status in ("failed", "cancelled"):
        return EXIT_ERROR, f"sweep {sweep_id} ended {status}"
    if status not in TERMINAL:
        return EXIT_ERROR, f"sweep {sweep_id} is not scored yet (status={status})"
    verdict = comparison.get("verdict") if isinstance(comparison.get("verdict"), dict) else {}
    return (EXIT_PASSED if verdict.get("outcome") == "winner" else EXIT_FAILED), None


# ---------------------------------------------------------------- the flows


def _fail(outcome: SweepOutcome, err: NeensError) -> SweepOutcome:
    outcome.error = str(err)
    outcome.exit_code = err.exit_code
    outcome.interrupted = isinstance(err, Interrupted)
    return outcome


def preview_flow(client: SweepClient, body: dict[str, Any], *, world: World) -> SweepOutcome:
    outcome = SweepOutcome(command="preview")
    try:
        estimate, refusals = unwrap_estimate(client.preview_sweep(body))
    except NeensError as err:
        return _fail(outcome, err)
    if estimate is None:
        outcome.error = "the server returned no estimate for this sweep"
        outcome.exit_code = EXIT_ERROR
        return outcome
    outcome.estimate, outcome.refusals = estimate, refusals
    outcome.exit_code = EXIT_PASSED  # refusals are printed, never failed
    return outcome


def _judge_state(outcome: SweepOutcome, sweep: dict[str, Any], *, require_all_arms: bool,
                 timed_out: bool) -> SweepOutcome:
    outcome.sweep = sweep
    outcome.exit_code = state_exit_code(sweep, require_all_arms=require_all_arms)
    status = sweep.get("status")
    if status == "void":
        outcome.error = f"sweep {outcome.sweep_id} is void: the comparison is refused"
    elif status == "failed":
        outcome.error = f"sweep {outcome.sweep_id} failed" + (
            f": {sweep['error']}" if sweep.get("error") else "")
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
        outcome.sweep_id = str(created.get("id") or "")
        if not outcome.sweep_id:
            outcome.error = "the server created a sweep but returned no id"
            outcome.exit_code = EXIT_ERROR
            return outcome
        outcome.estimate, outcome.refusals = unwrap_estimate(created.get("estimate"))
        k = created.get("passK") if created.get("passK") is not None else body.get("passK", "?")
        world.log(f"Created sweep {outcome.sweep_id} ({len(body['arms'])} arms x k={k})")
        timed_out = False
        sweep = created
        if wait and created.get("status") not in TERMINAL:
            world.log("Waiting for the sweep to finish ...")
            sweep, timed_out = poll_sweep(client, outcome.sweep_id, poll=poll, world=world)
        elif not wait and created.get("status") not in TERMINAL:
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
    outcome.estimate, outcome.refusals = unwrap_estimate(sweep.get("estimate"))
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
                    f"the sweep was still {outcome.sweep.get('status')} when the poll timeout "
                    "ran out: the verdict below is not final")
        comparison = client.get_sweep_comparison(sweep_id, bar=bar, baseline_arm=baseline_arm)
    except NeensError as err:
        return _fail(outcome, err)
    outcome.comparison = comparison
    outcome.exit_code = decide_exit_code(comparison, require_winner=require_winner)
    if comparison_is_void(comparison):
        outcome.error = f"sweep {sweep_id} is void: the comparison is refused"
    elif comparison.get("status") == "failed":
        outcome.error = f"sweep {sweep_id} failed"
    elif outcome.exit_code == EXIT_FAILED:
        status = comparison.get("status")
        outcome.warnings.append(
            "--require-winner: no arm clears the bar" if status in TERMINAL
            else f"--require-winner: the sweep is still {status}, so there is no winner yet")
    return outcome
