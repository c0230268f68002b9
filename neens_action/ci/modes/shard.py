"""CI modes ``create``, ``shard`` and ``finish``: one run replayed across matrix legs
(issue 10; the flows are in ``neens_action/flows/shard.py``).

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

``create`` and ``shard`` post no PR/MR comment (the ``finish`` job owns it) and send no
ci-result. This module registers the ``shard`` input on import (``ci_inputs`` imports it), so
it must not import :mod:`neens_action.ci.main` at module level.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from neens_action.ci import inputs as ci_inputs
from neens_action.ci.inputs import Input, InputError
from neens_action.ci.modes import shared as ci_modes
from neens_action.errors import UsageError

if TYPE_CHECKING:
    from neens_action.ci.main import CiContext, ModePlan

ci_inputs.register(Input(
    "shard", "str", "",
    "mode shard: this job's share of the run, I/N (1-based); default in a GitLab "
    "parallel job: $CI_NODE_INDEX/$CI_NODE_TOTAL",
))

_CREATE_ONLY = ("dataset", "dataset-version-id", "version-label", "name", "baseline",
                "max-regressions", "min-pass-rate", "gates")
NOT_FOR: dict[str, tuple[str, ...]] = {
    "create": ("command", "run-id", "shard"),
    "shard": (*_CREATE_ONLY, "create"),
    "finish": (*_CREATE_ONLY, "create", "command", "shard"),
}
HINTS = {
    ("create", "command"): "the run is replayed by the shard jobs (mode shard)",
    ("create", "run-id"): "mode create makes a new run; give its run-id output to the others",
    ("shard", "dataset"): "the run was created by the create job: set run-id",
    ("finish", "command"): "finish runs no agent: the shard jobs did",
    ("finish", "dataset"): "the run was created by the create job: set run-id",
}


def _check(ctx: CiContext, mode: str) -> None:
    for name in NOT_FOR[mode]:
        if ci_modes.explicitly_set(ctx.environ, name):
            hint = HINTS.get((mode, name))
            raise InputError(name, f"does not apply to mode {mode}" + (f": {hint}" if hint
                                                                      else ""))


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


def _settings(ctx: CiContext, **fields: Any) -> Any:
    from neens_action.settings.run import EvalRunSettings

    inp = ctx.inputs
    common = ci_modes._common(ctx)
    common.update(run_id=run_id_of(ctx), dataset=inp.get("dataset"),
                  dataset_version_id=inp.get("dataset-version-id"), gates=inp.get("gates"),
                  command=list(inp.get("command") or []))
    common.update(fields)
    return EvalRunSettings(**common, full_run_items=True)  # the result file needs them


def _validate(settings: Any, *, declared_gates: bool = False) -> None:
    from neens_action.settings.shard import needs_command

    try:
        settings.validate(need_command=needs_command(settings), declared_gates=declared_gates)
    except UsageError as exc:
        raise ci_modes.as_input_error(exc) from None


def _plan(ctx: CiContext, step: str, settings: Any, policy: Any) -> ModePlan:
    from neens_action.ci.main import ModePlan
    from neens_action.cli.eval_shard import flow_for
    from neens_action.report.build.shard import execute_kwargs

    client = ci_modes._client(settings)
    kwargs = execute_kwargs(step)
    build = kwargs.pop("build", None)
    kwargs.pop("mode", None)
    if step != "finish":
        ctx.inputs.values["comment"] = "off"  # one comment per run: the finish job's
    return ModePlan(flow=flow_for(step, settings, client=client, world=ctx.world,
                                  policy=policy),
                    mode=step, client=client, build=build, execute_kwargs=kwargs,
                    close=client.close)


def plan_create(ctx: CiContext) -> ModePlan:
    """``mode: create``: E1 only; the ``run-id`` output feeds the shard and finish jobs."""
    _check(ctx, "create")
    policy = ci_modes.policy_from_inputs(ctx)
    declared = ci_modes.declares_gates(policy)
    if not ctx.inputs.get("dataset") and not ctx.inputs.get("gates") and not declared:
        raise InputError("dataset", "is required for mode create: the dataset to snapshot "
                                    "(or gates: active)")
    settings = _settings(ctx, create=True, only_create=True, command=[])
    if not settings.version_label:
        settings.version_label = ci_modes.short_sha(ctx)
    _validate(settings, declared_gates=declared)
    return _plan(ctx, "create", settings, policy)


def plan_shard(ctx: CiContext) -> ModePlan:
    """``mode: shard``: replay this job's share; the run is not started."""
    _check(ctx, "shard")
    if not run_id_of(ctx):
        raise InputError("run-id", "is required for mode shard: the create job's run-id "
                                   "output (GitLab: NEENS_RUN_ID from its dotenv report)")
    if not ctx.inputs.get("command"):
        raise InputError("command", "is required for mode shard: your agent command, run "
                                    "once per item of this job's share")
    settings = _settings(ctx, shard=shard_spec(ctx))
    _validate(settings)
    return _plan(ctx, "shard", settings, None)


def plan_finish(ctx: CiContext) -> ModePlan:
    """``mode: finish``: every item has a trace => start, poll, gate, report."""
    _check(ctx, "finish")
    if not run_id_of(ctx):
        raise InputError("run-id", "is required for mode finish: the create job's run-id "
                                   "output (GitLab: NEENS_RUN_ID from its dotenv report)")
    policy = ci_modes.policy_from_inputs(ctx)
    settings = _settings(ctx, finish=True, command=[])
    _validate(settings)
    return _plan(ctx, "finish", settings, policy)


__all__ = ["NOT_FOR", "plan_create", "plan_finish", "plan_shard", "run_id_of", "shard_spec"]
