"""``mode: run``: the pull flow (``neens eval run``) with the action's inputs."""

from __future__ import annotations

from neens_action.ci.context import CiContext, Plan
from neens_action.ci.inputs import InputError
from neens_action.ci.modes import common
from neens_action.settings.run import EvalRunSettings


def plan_run(ctx: CiContext) -> Plan:
    """``mode: run``: the pull flow (``neens eval run``) with the action's inputs."""

    inp = ctx.inputs
    common.check_mode_inputs(ctx, "run")
    if not inp.get("command"):
        raise InputError("command", "is required for mode run: your agent command, run once "
                                    "per item (e.g. python -m my_agent)")
    run_id = inp.get("run-id")
    create = inp.get("create")
    if create == "auto":
        create = not run_id
    if run_id and create:
        raise InputError("create", "cannot be true together with run-id (run-id drives an "
                                   "existing run; leave create at auto)")
    if not run_id and not create:
        raise InputError("run-id", "nothing to run: set run-id, or set dataset (create: auto "
                                   "then creates the run)")
    policy = common.policy_from_inputs(ctx)  # gate-policy + the override inputs
    declared = common.declares_gates(policy)
    if create and not inp.get("dataset") and not inp.get("gates") and not declared:
        raise InputError("dataset", "is required to create a run (or set run-id to drive an "
                                    "existing one, or gates to run eval gates)")
    settings = EvalRunSettings(
        **common.eval_fields(ctx), run_id=run_id, create=bool(create),
        dataset=inp.get("dataset"), dataset_version_id=inp.get("dataset-version-id"),
        command=list(inp["command"]), gates=inp.get("gates"),
        full_run_items=True,  # the result file is the whole --json document
    )
    if settings.create and not settings.version_label:
        settings.version_label = common.short_sha(ctx)
    settings.resolve_provenance(ctx.environ)
    settings.validate(declared_gates=declared)
    return Plan("run", settings, policy)
