"""Every exit-code rule, and the ci-result body. Pure functions.

One rule per kind of job, each ``outcome -> (exit code, build verdict)``:

- :func:`decide`: eval-style outcomes (``eval run``, ``eval push``, ``--finish``, stress runs,
  each ``eval watch`` iteration); the policy was evaluated before (pipeline).
- :func:`decide_step`: the sharding steps that gate nothing (``create``, ``shard``).
- :func:`decide_sweep`: every sweep command and ``mode: sweep``.
- :func:`decide_watch`: the exit code of a whole ``eval watch`` session.

Exit codes: 0 passed, 1 gate failed, 2 run error or bad input, 130 interrupted. Measuring
nothing is never a pass.

Order of the eval build verdict (first match wins): interrupted or run error => ``errored``;
exit != 0 => ``blocked``; a policy rule ended ``warn`` => ``warned``; the gate response has
truthy ``guardrailWarnings`` => ``warned``; ``--no-gate`` let a failed gate or a blocking
policy through => ``warned``; otherwise ``passed``. Measuring nothing is never a pass: an
outcome without a gate response is a run error.
"""

from __future__ import annotations

from typing import Any

from neens_action import __version__
from neens_action.api.answers import Run
from neens_action.api.sweep_comparison import SweepComparison
from neens_action.api.sweeps import Sweep
from neens_action.errors import EXIT_ERROR, EXIT_FAILED, EXIT_INTERRUPTED, EXIT_PASSED
from neens_action.outcome import Outcome, SweepOutcome
from neens_action.policy.result import PolicyEval, RuleResult

Verdict = tuple[int, str]  # (exit code, build verdict)
SWEEP_TERMINAL = frozenset({"completed", "completed_with_failures", "failed", "cancelled",
                            "void"})

SDK = {"name": "neens-action", "version": __version__, "language": "python"}


def gate_passed(outcome: Outcome) -> bool | None:
    """The server gate's ``passed`` as read: True/False, None when absent or not a bool."""
    return None if outcome.gate is None else outcome.gate.passed


def policy_flags(policy_eval: PolicyEval | None) -> tuple[bool, bool]:
    """(blocked, warned) of a policy evaluation; (False, False) without one."""
    if policy_eval is None:
        return False, False
    return policy_eval.blocked, policy_eval.warned


COMPLETED = frozenset({"completed", "completed_with_regressions"})


def nothing_measured(outcome: Outcome) -> str | None:
    """Why an eval-style outcome measured nothing, or None: the fail-closed rule.

    A verdict is read only from a run that completed with at least one scored item and
    whose agents did not all fail; anything else is a run error whatever ``--no-gate``
    says, even when the server's gate says ``passed: true``.
    """
    ok = outcome.agents_ok
    if ok is None:
        ok = sum(1 for inv in outcome.invocations if inv.ok)
    if outcome.invocations and ok == 0:
        return "every agent invocation failed: nothing was measured"
    run = outcome.run
    if run is None or run.empty:
        return None  # no run object to read (a flow that measured something always has one)
    if run.status not in COMPLETED:
        return f"the run ended {run.status[:40]!r}, not completed: nothing was measured"
    scored = scored_items(run)
    if scored is not None and scored < 1:
        return "no item was scored: nothing was measured"
    return None


def scored_items(run: Run) -> int | None:
    """How many items the run scored: its ``completed`` count, else its items that carry a
    ``passed`` verdict; None when the run says neither."""
    if run.completed_said:
        return run.completed
    if run.items:
        return sum(1 for item in run.items if item.passed is not None)
    return None


def decide(outcome: Outcome) -> Verdict:
    """(exit code, build verdict) for an eval-style outcome."""
    if outcome.interrupted:
        return EXIT_INTERRUPTED, "errored"
    if outcome.error:
        return EXIT_ERROR, "errored"
    if outcome.gate is None:
        return EXIT_ERROR, "errored"
    why = nothing_measured(outcome)
    if why is not None:  # fail closed; the reason becomes the run error the report shows
        outcome.error = why
        return EXIT_ERROR, "errored"
    blocked, warned = policy_flags(outcome.policy_eval)
    failed = gate_passed(outcome) is not True or blocked
    if outcome.noise is not None:  # repeats / history: the noise-aware decision joins in
        noisy = outcome.noise.decision.outcome
        failed = failed or noisy == "block" or any(
            rep.gate_passed is False for rep in outcome.noise.reps)
        warned = warned or noisy == "warn"
    if failed and outcome.enforced:
        return EXIT_FAILED, "blocked"
    if warned or outcome.gate.guardrail_warnings:
        return EXIT_PASSED, "warned"
    if failed:  # --no-gate let a breach through
        return EXIT_PASSED, "warned"
    return EXIT_PASSED, "passed"


def decide_step(outcome: Outcome) -> Verdict:
    """``create`` / ``shard`` steps measure nothing, so they never claim a pass: ``created`` or
    ``replayed`` (exit 0) once their work is done, else ``errored``."""
    if outcome.interrupted:
        return EXIT_INTERRUPTED, "errored"
    if outcome.error or not outcome.run_id:
        return EXIT_ERROR, "errored"
    return EXIT_PASSED, "created" if outcome.mode == "create" else "replayed"


def decide_watch(last_iteration: int | None, *, interrupted: bool) -> int:
    """A watch session exits with its last iteration's code; 130 when stopped by a signal;
    2 when no iteration ran."""
    if interrupted:
        return EXIT_INTERRUPTED
    return EXIT_ERROR if last_iteration is None else last_iteration


# ---------------------------------------------------------------- sweeps


def sweep_state_code(sweep: Sweep, *, require_all_arms: bool) -> int:
    """``sweep start`` / ``get``, after usage and API errors were ruled out."""
    if sweep.status in ("void", "failed"):
        return EXIT_ERROR
    if not require_all_arms:
        return EXIT_PASSED
    if sweep.status not in SWEEP_TERMINAL:
        return EXIT_FAILED
    arms = sweep.arms
    return EXIT_PASSED if arms and all(a.passed is True for a in arms) else EXIT_FAILED


def sweep_decide_code(comparison: SweepComparison, *, require_winner: bool) -> int:
    """``sweep decide`` and ``mode: sweep``: void is checked before any verdict."""
    if comparison.void or comparison.status == "failed":
        return EXIT_ERROR
    if not require_winner:
        return EXIT_PASSED
    if comparison.status not in SWEEP_TERMINAL:
        return EXIT_FAILED
    return EXIT_PASSED if comparison.verdict.has_winner else EXIT_FAILED


def sweep_run_problem(comparison: SweepComparison) -> str | None:
    """Why a finished ``sweep run`` has no verdict to read (void, failed, unfinished), or None."""
    sweep_id = comparison.sweep_id or "the sweep"
    if comparison.void:
        reason = comparison.void_reason or "the arms did not run under identical conditions"
        return f"sweep {sweep_id} is void: {reason}"
    status = comparison.status
    if status in ("failed", "cancelled"):
        return f"sweep {sweep_id} ended {status}"
    if status not in SWEEP_TERMINAL:
        return f"sweep {sweep_id} is not scored yet (status={status})"
    return None


def sweep_run_code(comparison: SweepComparison) -> int:
    """``neens sweep run``: a winner passes, no winner fails, no verdict errors."""
    if sweep_run_problem(comparison) is not None:
        return EXIT_ERROR
    return EXIT_PASSED if comparison.verdict.has_winner else EXIT_FAILED


def sweep_verdict(code: int) -> str:
    return {EXIT_PASSED: "passed", EXIT_FAILED: "blocked"}.get(code, "errored")


def decide_sweep(outcome: SweepOutcome) -> Verdict:
    """Every sweep command: the rule of its command over what the flow recorded."""
    if outcome.interrupted:
        return EXIT_INTERRUPTED, "errored"
    if outcome.error:
        return EXIT_ERROR, "errored"
    if outcome.command == "preview":
        code = EXIT_PASSED if outcome.estimate is not None else EXIT_ERROR
    elif outcome.command in ("start", "get"):
        if outcome.sweep is None:
            return EXIT_ERROR, "errored"
        code = sweep_state_code(outcome.sweep, require_all_arms=outcome.require_all_arms)
    elif outcome.comparison is None:
        return EXIT_ERROR, "errored"
    elif outcome.command == "run" and outcome.require_winner is None:
        code = sweep_run_code(outcome.comparison)
    else:
        code = sweep_decide_code(outcome.comparison, require_winner=bool(outcome.require_winner))
    return code, sweep_verdict(code)



def policy_results(policy_eval: PolicyEval | None) -> list[RuleResult]:
    """The rule results of a policy evaluation; [] without one."""
    return [] if policy_eval is None else list(policy_eval.results)


def rule_entries(policy_eval: PolicyEval | None) -> list[dict[str, Any]]:
    """Policy results as ci-result ``rules[]`` entries."""
    return [r.to_ci_rule() for r in policy_results(policy_eval)]


def noise_rule_entries(outcome: Outcome) -> list[dict[str, Any]]:
    """The noise-aware rules (observed, threshold, outcome) as ci-result ``rules[]`` entries;
    [] without repeats or history."""
    if outcome.noise is None:
        return []
    return [{"rule": f"noise:{r.rule}", "observed": r.observed, "threshold": r.threshold,
             "severity": "block", "outcome": r.outcome, "message": ""}
            for r in outcome.noise.decision.rules]


def ci_result_payload(outcome: Outcome) -> dict[str, Any]:
    """The ci-result body for an outcome whose verdict has been decided."""
    if outcome.build_verdict is None:
        code, verdict = decide(outcome)
    else:
        code, verdict = outcome.exit_code, outcome.build_verdict
    return {
        "verdict": verdict,
        "exit_code": code,
        "enforced": bool(outcome.enforced),
        "gate_passed": gate_passed(outcome),
        "rules": rule_entries(outcome.policy_eval) + noise_rule_entries(outcome),
        "policy": outcome.policy_identity,
        "sdk": dict(SDK),
    }
