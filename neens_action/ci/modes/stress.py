"""``mode: stress``: ``neens stress run``: generate a scenario suite from ``failure-modes`` (or
reuse ``suite-id``), wait for it (``ready-timeout``), launch it, drive it with ``command`` (pull)
or ``agent-connection`` (push), gate. The summary shows the pass rate per failure mode and per
strategy."""

from __future__ import annotations

from neens_action.ci.context import CiContext, Plan
from neens_action.ci.inputs import InputError
from neens_action.ci.modes import common
from neens_action.settings.stress import StressSettings


def plan_stress(ctx: CiContext) -> Plan:
    """``mode: stress``: suite -> ready -> launch -> drive (pull or push) -> gate."""
    common.check_mode_inputs(ctx, "stress")
    inp = ctx.inputs
    if not inp.get("suite-id") and not inp.get("failure-modes"):
        raise InputError("failure-modes", "is required for mode stress: the failure modes to "
                                          "attack (ids), or set suite-id to reuse a suite")
    fresh = [n for n in ("failure-modes", "per-mode", "strategies") if inp.get(n)]
    if inp.get("suite-id") and fresh:
        raise InputError(fresh[0], "only applies to a new suite: suite-id reuses a generated "
                                   "one as it is (drop one of them)")
    if any(s.lower() == "replay" for s in inp.get("strategies") or []):
        raise InputError("strategies", "replay is always on: strategies picks among "
                                       "paraphrase, escalate, boundary")
    command, conn = inp.get("command"), inp.get("agent-connection")
    if command and conn:
        raise InputError("agent-connection", "and command exclude each other: command runs "
                                             "your agent here (pull), agent-connection lets "
                                             "Neens call it (push); set one")
    if not command and not conn:
        raise InputError("command", "mode stress needs an agent: command (run once per "
                                    "scenario) or agent-connection (Neens calls it)")
    policy = common.policy_from_inputs(ctx)
    settings = StressSettings(
        **common.eval_fields(ctx), command=list(command or []), agent_connection=conn,
        suite_id=inp.get("suite-id"), failure_modes=list(inp.get("failure-modes") or []),
        per_mode=inp.get("per-mode"), strategies=list(inp.get("strategies") or []),
        ready_timeout=inp.get("ready-timeout", 600.0),
    )
    settings.validate_stress(ctx.environ, drive=True, policy=policy)
    return Plan("stress", settings, policy)
