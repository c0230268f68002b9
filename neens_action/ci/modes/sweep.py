"""The flow of ``mode: sweep`` (built by :func:`neens_action.ci.modes.shared.plan_sweep`) and the
pipeline hooks that render a :class:`SweepOutcome`.

- Runner sweep: :func:`neens_action.flows.sweep.runner.run_flow` (create, every arm x rep x item
  through ``command``, start, poll, comparison).
- Push sweep: :func:`neens_action.flows.sweep.shared.start_flow` with ``wait``, then
  :func:`~neens_action.flows.sweep.shared.decide_flow` on the finished sweep. An interrupt cancels
  the sweep we created (push arms would otherwise keep calling the connections).

Exit code (both kinds): the ``sweep decide`` rule with ``require-winner``: a comparable,
finished sweep exits 0, or 1 when ``require-winner`` is set and no arm clears the bar; a void,
failed, cancelled or unfinished sweep (or any API / agent error) exits 2, 130 on a signal.
``pipeline.execute`` gets ``report_ci=False`` (a sweep has no single run to report on).
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, field
from typing import Any

from neens_action.errors import EXIT_ERROR, EXIT_FAILED, EXIT_INTERRUPTED, NeensError
from neens_action.flows.sweep import shared as flows
from neens_action.outcome import SweepOutcome
from neens_action.world import World


@dataclass
class SweepPlan:
    body: dict[str, Any]  # the E13 body (arms, target, passK, name, versionLabel, budgetUsd)
    push: bool
    command: list[str] = field(default_factory=list)
    poll: flows.Poll = field(default_factory=flows.Poll)
    concurrency: int = 1
    timeout: float | None = None
    bar: float | None = None
    baseline_arm: str | None = None
    require_winner: bool = False


def settle(outcome: SweepOutcome, *, require_winner: bool) -> SweepOutcome:
    """Apply the ``require-winner`` rule to a sweep that ended with a comparison."""
    if outcome.error or outcome.interrupted or outcome.comparison is None:
        return outcome
    outcome.exit_code = flows.decide_exit_code(outcome.comparison,
                                               require_winner=require_winner)
    if outcome.exit_code == EXIT_FAILED:
        outcome.warnings.append("require-winner: no arm clears the bar")
    return outcome


def _cancel(client: Any, outcome: SweepOutcome, world: World) -> None:
    if not outcome.sweep_id:
        return
    try:
        client.cancel_sweep(outcome.sweep_id, quick=True)
        world.log(f"neens: cancelled sweep {outcome.sweep_id}")
    except (NeensError, KeyboardInterrupt) as exc:
        world.log(f"neens: warning: could not cancel sweep {outcome.sweep_id} ({exc})")


def push_sweep(client: Any, plan: SweepPlan, *, world: World) -> SweepOutcome:
    """Create the push sweep, wait for it, then read the server's verdict."""
    out = flows.start_flow(client, plan.body, wait=True, require_all_arms=False,
                           poll=plan.poll, world=world)
    out.command = "run"
    if out.interrupted:
        with contextlib.suppress(NeensError, KeyboardInterrupt):
            _cancel(client, out, world)
        return out
    if out.error or out.exit_code != 0:
        return out
    status = (out.sweep or {}).get("status")
    if status not in flows.TERMINAL:
        out.warnings = [w for w in out.warnings if "poll timeout" not in w]
        out.error = (f"sweep {out.sweep_id} did not finish within poll-timeout "
                     f"{plan.poll.timeout:g}s (status={status}); it keeps running on Neens: "
                     f"neens sweep decide --sweep-id {out.sweep_id} --wait reads it later")
        out.exit_code = EXIT_ERROR
        return out
    decided = flows.decide_flow(client, out.sweep_id, bar=plan.bar,
                                baseline_arm=plan.baseline_arm, wait=False,
                                require_winner=plan.require_winner, poll=plan.poll, world=world)
    out.comparison = decided.comparison
    out.exit_code, out.error = decided.exit_code, decided.error
    out.interrupted = decided.interrupted
    out.warnings.extend(w.replace("--require-winner", "require-winner")
                        for w in decided.warnings)
    if out.interrupted:
        out.exit_code = EXIT_INTERRUPTED
    return out


def sweep_flow(client: Any, plan: SweepPlan, *, world: World) -> SweepOutcome:
    """The whole ``mode: sweep`` flow; never raises for API or agent errors."""
    if plan.push:
        return push_sweep(client, plan, world=world)
    from neens_action.flows.sweep.runner import SweepRunParams, run_flow

    params = SweepRunParams(command=list(plan.command), create_body=plan.body,
                            concurrency=plan.concurrency, timeout=plan.timeout, bar=plan.bar,
                            baseline_arm=plan.baseline_arm, poll=plan.poll)
    out = run_flow(client, params, world=world)
    return settle(out, require_winner=plan.require_winner)


# ---------------------------------------------------------------- pipeline hooks


def as_sweep(outcome: Any) -> SweepOutcome:
    """The pipeline may hand back a plain ``Outcome`` (a failed ``install`` command, a signal
    outside the flow): show it as a sweep that did not run."""
    if isinstance(outcome, SweepOutcome):
        return outcome
    interrupted = bool(getattr(outcome, "interrupted", False))
    return SweepOutcome(
        command="run", base_url=str(getattr(outcome, "base_url", "") or ""),
        error=getattr(outcome, "error", None) or "the sweep did not run",
        interrupted=interrupted, warnings=list(getattr(outcome, "warnings", []) or []),
        exit_code=EXIT_INTERRUPTED if interrupted else EXIT_ERROR,
    )


def decide(outcome: Any) -> tuple[int, str]:
    from neens_action.report.build.sweep import report_verdict

    sweep = as_sweep(outcome)
    code = EXIT_INTERRUPTED if sweep.interrupted else sweep.exit_code
    return code, report_verdict(code)


def build(outcome: Any) -> Any:
    from neens_action.report.build.sweep import build_sweep_report

    report = build_sweep_report(as_sweep(outcome))
    report.outputs["run-id"] = ""  # a sweep has child runs, not one run: see sweep-id
    return report


def to_json(outcome: Any, report: Any) -> dict[str, Any]:
    from neens_action.report.render.sweep_json import sweep_json_document

    doc = sweep_json_document(as_sweep(outcome))
    doc["mode"] = "sweep"
    doc["winner"] = report.outputs.get("winner") or None
    return doc


def render_text(report: Any) -> str:
    from neens_action.report.render.sweep_text import render_sweep_text

    return render_sweep_text(report)


def execute_kwargs() -> dict[str, Any]:
    """``build`` plus what ``ci.run`` passes on to ``pipeline.execute``."""
    return {"build": build, "decide": decide, "to_json": to_json, "render_text": render_text,
            "report_ci": False}


__all__ = ["SweepPlan", "as_sweep", "execute_kwargs", "push_sweep", "settle", "sweep_flow"]
