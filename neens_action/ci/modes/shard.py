"""CI modes ``create``, ``shard`` and ``finish``: one run replayed across matrix legs
(docs/sharding.md; the flows are in ``neens_action/flows/shard.py``).

- ``mode: create``: create the run (``dataset``, ``version-label`` (default the short
  commit), ``baseline``, gate knobs, ``gate-policy``, ``gates``) and expose its id as the
  ``run-id`` output (GitLab dotenv: ``NEENS_RUN_ID``). Nothing is replayed or started.
- ``run-id`` defaults to ``NEENS_RUN_ID`` in modes shard and finish (the create job's GitLab
  dotenv report).
- ``mode: shard``: replay this job's share of ``run-id``'s items with ``command``; the run is
  not started. The share is the ``shard`` input, ``I/N`` (1-based), e.g.
  ``${{ matrix.shard }}/${{ strategy.job-total }}``; in a GitLab ``parallel: N`` job it
  defaults to ``$CI_NODE_INDEX/$CI_NODE_TOTAL``.
- ``mode: finish``: check that every item of ``run-id`` has a trace (else exit 2 naming the
  missing items), then start, poll, gate and report like ``mode: run``.

One PR/MR comment per sharded run, shared by the ``create`` and ``finish`` jobs: ``create``
posts "running" once the run exists, ``finish`` says it is scoring, then edits it into the
verdict; the ``shard`` legs post none (docs/modes.md). ``create`` and ``shard`` send no
ci-result.
"""

from __future__ import annotations

from typing import Any

from neens_action.ci.context import CiContext, Plan
from neens_action.ci.inputs import InputError
from neens_action.ci.modes import common
from neens_action.policy import GatePolicy
from neens_action.settings.run import EvalRunSettings
from neens_action.settings.shard import needs_command


def shard_spec(ctx: CiContext) -> str:
    """The ``shard`` input, else GitLab's ``CI_NODE_INDEX/CI_NODE_TOTAL``."""
    value = ctx.inputs.get("shard")
    if value:
        return str(value)
    index = ctx.environ.get("CI_NODE_INDEX", "").strip()
    total = ctx.environ.get("CI_NODE_TOTAL", "").strip()
    if index and total:
        return f"{index}/{total}"
    raise InputError("shard", "is required for mode shard: this job's share as I/N, e.g. "
                              "matrix.shard/strategy.job-total (GitLab parallel jobs default "
                              "to CI_NODE_INDEX/CI_NODE_TOTAL)")


def run_id_of(ctx: CiContext) -> str | None:
    """The ``run-id`` input, else ``NEENS_RUN_ID`` (what the create job's GitLab dotenv
    report hands to the jobs that ``need`` it)."""
    return ctx.inputs.get("run-id") or ctx.environ.get("NEENS_RUN_ID", "").strip() or None


def _settings(ctx: CiContext, **fields: Any) -> EvalRunSettings:
    inp = ctx.inputs
    values = common.eval_fields(ctx)
    values.update(run_id=run_id_of(ctx), dataset=inp.get("dataset"),
                  dataset_version_id=inp.get("dataset-version-id"), gates=inp.get("gates"),
                  command=list(inp.get("command") or []))
    values.update(fields)
    settings = EvalRunSettings(**values, full_run_items=True)  # the result file needs them
    settings.resolve_provenance(ctx.environ)
    return settings


def _validate(settings: EvalRunSettings, *, declared_gates: bool = False) -> None:
    settings.validate(need_command=needs_command(settings), declared_gates=declared_gates)


def _plan(ctx: CiContext, step: str, settings: EvalRunSettings,
          policy: GatePolicy | None) -> Plan:
    if step == "shard":  # the create and finish jobs own the run's one comment
        ctx.inputs.values["comment"] = "off"
    return Plan(step, settings, policy)


def plan_create(ctx: CiContext) -> Plan:
    """``mode: create``: the run create (``POST /preprod-evals``) only; the ``run-id`` output
    feeds the shard and finish jobs."""
    common.check_mode_inputs(ctx, "create")
    policy = common.policy_from_inputs(ctx)
    declared = common.declares_gates(policy)
    if not ctx.inputs.get("dataset") and not ctx.inputs.get("gates") and not declared:
        raise InputError("dataset", "is required for mode create: the dataset to snapshot "
                                    "(or gates: active)")
    settings = _settings(ctx, create=True, only_create=True, command=[])
    if not settings.version_label:
        settings.version_label = common.short_sha(ctx)
    _validate(settings, declared_gates=declared)
    return _plan(ctx, "create", settings, policy)


def plan_shard(ctx: CiContext) -> Plan:
    """``mode: shard``: replay this job's share; the run is not started."""
    common.check_mode_inputs(ctx, "shard")
    if not run_id_of(ctx):
        raise InputError("run-id", "is required for mode shard: the create job's run-id "
                                   "output (GitLab: NEENS_RUN_ID from its dotenv report)")
    if not ctx.inputs.get("command"):
        raise InputError("command", "is required for mode shard: your agent command, run "
                                    "once per item of this job's share")
    settings = _settings(ctx, shard=shard_spec(ctx))
    _validate(settings)
    return _plan(ctx, "shard", settings, None)


def plan_finish(ctx: CiContext) -> Plan:
    """``mode: finish``: every item has a trace => start, poll, gate, report."""
    common.check_mode_inputs(ctx, "finish")
    if not run_id_of(ctx):
        raise InputError("run-id", "is required for mode finish: the create job's run-id "
                                   "output (GitLab: NEENS_RUN_ID from its dotenv report)")
    policy = common.policy_from_inputs(ctx)
    settings = _settings(ctx, finish=True, command=[])
    _validate(settings)
    return _plan(ctx, "finish", settings, policy)


__all__ = ["plan_create", "plan_finish", "plan_shard", "run_id_of", "shard_spec"]
