"""``mode: push``: ``neens eval push``: Neens calls ``agent-connection`` once per prompt; the
step creates the run, triggers it and gates. No ``command`` runs."""

from __future__ import annotations

from neens_action.ci.context import CiContext, Plan
from neens_action.ci.inputs import InputError
from neens_action.ci.modes import common
from neens_action.settings.push import EvalPushSettings


def plan_push(ctx: CiContext) -> Plan:
    """``mode: push``: Neens calls ``agent-connection`` per prompt; create, trigger, gate."""
    common.check_mode_inputs(ctx, "push")
    inp = ctx.inputs
    if not inp.get("agent-connection"):
        raise InputError("agent-connection", "is required for mode push: the agent_http "
                                             "connection Neens calls once per prompt")
    policy = common.policy_from_inputs(ctx)
    declared = common.declares_gates(policy)
    if not inp.get("dataset") and not inp.get("gates") and not declared:
        raise InputError("dataset", "is required for mode push: the dataset whose golden "
                                    "version Neens replays (or select eval gates: gates: active)")
    settings = EvalPushSettings(**common.eval_fields(ctx), dataset=inp.get("dataset"),
                                dataset_version_id=inp.get("dataset-version-id"),
                                gates=inp.get("gates"),
                                agent_connection=inp.get("agent-connection"))
    if not settings.version_label:
        settings.version_label = common.short_sha(ctx)
    settings.resolve_provenance(ctx.environ)
    settings.validate(policy_gates=declared)
    return Plan("push", settings, policy)
