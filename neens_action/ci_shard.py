"""CI modes ``create``, ``shard`` and ``finish``: one run replayed across matrix legs.

- ``mode: create``: create the run (``dataset``, ``version-label`` (default the short
  commit), ``baseline``, gate knobs, ``gate-policy``) and expose its id as the ``run-id``
  output (GitLab dotenv: ``NEENS_RUN_ID``). Nothing is replayed.
- ``mode: shard``: replay this job's share of ``run-id``'s items with ``command``; the run is
  not started. The share is the ``shard`` input, ``I/N`` (1-based), e.g.
  ``${{ matrix.shard }}/${{ strategy.job-total }}``; in a GitLab ``parallel: N`` job it
  defaults to ``$CI_NODE_INDEX/$CI_NODE_TOTAL``.
- ``mode: finish``: check every item of ``run-id`` has a trace (else exit 2 naming the
  missing items), start, poll, gate and report like ``mode: run``.

``create`` and ``shard`` never post a PR/MR comment (the ``finish`` job owns it) and send no
ci-result. Registered in ``ci.MODES``; the ``shard`` input is added with
``ci_inputs.register``.
"""

from __future__ import annotations

from typing import Any

from neens_action import ci_inputs
from neens_action.ci import CiContext, ModePlan, _flag_to_input
from neens_action.ci_inputs import Input, InputError
from neens_action.errors import UsageError

SHARD_INPUT = Input(
    "shard", "str", "",
    "mode shard: this job's share of the run, I/N (1-based); default in a GitLab "
    "`parallel:` job: $CI_NODE_INDEX/$CI_NODE_TOTAL",
)
ci_inputs.register(SHARD_INPUT)


def shard_spec(ctx: CiContext) -> str:
    """The ``shard`` input, else GitLab's ``CI_NODE_INDEX/CI_NODE_TOTAL``."""
    value = ci_inputs.parse_inputs(ctx.environ, ["shard"]).get("shard")
    if value:
        return str(value)
    index = ctx.environ.get("CI_NODE_INDEX", "").strip()
    total = ctx.environ.get("CI_NODE_TOTAL", "").strip()
    if index and total:
        return f"{index}/{total}"
    raise InputError("shard", "is required for mode shard: this job's share as I/N, e.g. "
                              "${{ matrix.shard }}/${{ strategy.job-total }} (GitLab "
                              "`parallel:` jobs default to $CI_NODE_INDEX/$CI_NODE_TOTAL)")


def _settings(ctx: CiContext, **flags: Any) -> Any:
    from neens_action.settings import EvalRunSettings

    inp = ctx.inputs
    settings = EvalRunSettings(
        base_url=inp.get("base-url", ""), api_key=inp.get("api-key"),
        project_id=ctx.environ.get("NEENS_PROJECT_ID") or None,
        run_id=inp.get("run-id"), dataset=inp.get("dataset"),
        dataset_version_id=inp.get("dataset-version-id"),
        version_label=inp.get("version-label"), name=inp.get("name"),
        baseline=inp.get("baseline"), max_regressions=inp.get("max-regressions"),
        min_pass_rate=inp.get("min-pass-rate"), gate_policy=inp.get("gate-policy"),
        command=list(inp.get("command") or []), timeout=inp.get("timeout"),
        concurrency=inp.get("concurrency", 1), poll_interval=inp.get("poll-interval", 5.0),
        poll_timeout=inp.get("poll-timeout", 1800.0), no_gate=bool(inp.get("no-gate")),
    )
    for name, value in flags.items():
        setattr(settings, name, value)
    return settings


def _validate(settings: Any, *, need_command: bool) -> None:
    from neens_action.flows.shard import check_flags

    try:
        settings.validate(need_command=need_command)
        check_flags(settings)
    except InputError:
        raise
    except UsageError as exc:
        name, text = _flag_to_input(str(exc))
        raise InputError(name, text.removeprefix(f"{name} ").strip()) from None


def _policy(settings: Any) -> Any:
    if not (settings.gate_policy or settings.overrides):
        return None
    from neens_action.policy import build_policy

    try:
        return build_policy(settings.gate_policy, settings.overrides)
    except UsageError as exc:
        raise InputError("gate-policy", str(exc)) from None


def _plan(ctx: CiContext, step: str, settings: Any, policy: Any) -> ModePlan:
    from neens_action.client import NeensClient
    from neens_action.commands.eval_shard import flow_for
    from neens_action.report.shard import execute_kwargs

    client = NeensClient(settings.base_url, settings.api_key, settings.project_id,
                         timeout=settings.request_timeout, retries=settings.retries)
    kwargs = execute_kwargs(step)
    build = kwargs.pop("build", None)
    kwargs.pop("mode", None)
    if step in ("create", "shard"):
        ctx.inputs.values["comment"] = "off"  # only the finish job comments
    return ModePlan(flow=flow_for(step, settings, client=client, world=ctx.world,
                                  policy=policy),
                    mode=step, client=client if step == "finish" else None, build=build,
                    execute_kwargs=kwargs, close=client.close)


def plan_create(ctx: CiContext) -> ModePlan:
    """``mode: create``: E1 only; the ``run-id`` output feeds the shard and finish jobs."""
    inp = ctx.inputs
    if inp.get("run-id"):
        raise InputError("run-id", "must be empty for mode create (it creates the run)")
    if not inp.get("dataset"):
        raise InputError("dataset", "is required for mode create: the dataset to snapshot")
    settings = _settings(ctx, create=True, only_create=True, command=[])
    if not settings.version_label:
        from neens_action import provenance

        settings.version_label = provenance.resolve(ctx.environ).short_sha or None
    _validate(settings, need_command=False)
    return _plan(ctx, "create", settings, _policy(settings))


def plan_shard(ctx: CiContext) -> ModePlan:
    """``mode: shard``: replay this job's share; the run is not started."""
    inp = ctx.inputs
    if not inp.get("run-id"):
        raise InputError("run-id", "is required for mode shard: the id the create job "
                                   "printed (its run-id output)")
    if not inp.get("command"):
        raise InputError("command", "is required for mode shard: your agent command, run "
                                    "once per item of this job's share")
    settings = _settings(ctx, shard=shard_spec(ctx))
    _validate(settings, need_command=True)
    return _plan(ctx, "shard", settings, None)


def plan_finish(ctx: CiContext) -> ModePlan:
    """``mode: finish``: every item has a trace => start, poll, gate, report."""
    if not ctx.inputs.get("run-id"):
        raise InputError("run-id", "is required for mode finish: the id the create job "
                                   "printed (its run-id output)")
    settings = _settings(ctx, finish=True, command=[])
    _validate(settings, need_command=False)
    return _plan(ctx, "finish", settings, _policy(settings))


__all__ = ["SHARD_INPUT", "plan_create", "plan_finish", "plan_shard", "shard_spec"]
