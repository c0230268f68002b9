"""``neens sweep``: preview, start, get, decide (push sweeps) and run (runner mode).

Thin: parse and validate the flags into :class:`~neens_action.settings.sweep.SweepSettings`, then
run the command's job (``sweep-preview`` ... ``sweep-run``, see ``neens_action.jobs``) through the
one pipeline: text block on stderr, ``--json`` document on stdout, the exit code of
``verdict.decide_sweep`` (the table in docs/sweep.md). Bad input is one line on stderr and exit 2.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import click

from neens_action.cli.app import CONTEXT
from neens_action.errors import UsageError
from neens_action.world import World

F = Callable[..., Any]


def _connection(f: F) -> F:
    f = click.option("--project-id", envvar="NEENS_PROJECT_ID", default=None, metavar="ID",
                     help="X-Neens-Project-Id (env NEENS_PROJECT_ID; usually unneeded)")(f)
    f = click.option("--api-key", envvar="NEENS_API_KEY", default=None, metavar="KEY",
                     help="nk_live_… project key (env NEENS_API_KEY)")(f)
    f = click.option("--base-url", envvar="NEENS_BASE_URL", default=None, metavar="URL",
                     help="Neens API origin (env NEENS_BASE_URL)")(f)
    return f


def _target(f: F) -> F:
    f = click.option("--judge-deployment-id", "--judge", "judges", multiple=True, metavar="ID",
                     help="judge deployment (repeatable; default: the project's deployed judges, "
                          "pinned once for every arm)")(f)
    f = click.option("--pass-k", "--k", "pass_k", type=int, default=None, metavar="K",
                     help="repetitions per arm (default: the deployment's)")(f)
    f = click.option("--scenario-suite-id", default=None, metavar="ID",
                     help="…or a ready scenario suite's frozen version")(f)
    f = click.option("--dataset-version-id", "--dataset-version", "dataset_version_id",
                     default=None, metavar="ID", help="…or an explicit dataset version")(f)
    f = click.option("--dataset-id", "--dataset", "dataset_id", default=None, metavar="ID",
                     help="dataset whose frozen golden version every arm replays")(f)
    return f


def _polling(f: F) -> F:
    f = click.option("--poll-timeout", type=float, default=3600.0, show_default=True,
                     metavar="SECONDS", help="overall wait budget")(f)
    f = click.option("--poll-interval", type=float, default=10.0, show_default=True,
                     metavar="SECONDS", help="status poll cadence (must be > 0)")(f)
    return f


def _json_flag(f: F) -> F:
    return click.option("--json", "as_json", is_flag=True,
                        help="machine-readable result on stdout (logs stay on stderr)")(f)


def run_sweep_job(name: str, /, *, as_json: bool, base_url: str | None, api_key: str | None,
                  project_id: str | None, **fields: Any) -> int:
    """Check these settings (``SweepSettings.validate``) and run sweep job ``name`` through
    the pipeline; the exit code. ``fields`` are ``SweepSettings`` fields."""
    from neens_action import pipeline
    from neens_action.jobs import job
    from neens_action.settings.sweep import SweepSettings

    world = World()
    settings = SweepSettings(base_url=base_url or "", api_key=api_key, project_id=project_id,
                             json=as_json, **fields)
    settings.validate(name.removeprefix("sweep-"))
    return pipeline.execute(job(name), settings, world=world, json_out=as_json)


@click.group("sweep", context_settings=CONTEXT)
def sweep_group() -> None:
    """Multi-model sweeps: N model arms x k repetitions over one frozen dataset, one verdict."""


@sweep_group.command("preview", context_settings=CONTEXT)
@click.option("--arm", "arms", multiple=True, metavar="LABEL=CONNECTION_ID",
              help="an arm: a registered agent_http connection (repeatable)")
@click.option("--runner", is_flag=True,
              help="arms are LABEL=MODEL runner arms (the estimate for `neens sweep run`)")
@_target
@_json_flag
@_connection
def preview_command(arms: tuple[str, ...], runner: bool, dataset_id: str | None,
                    dataset_version_id: str | None, scenario_suite_id: str | None,
                    pass_k: int | None, judges: tuple[str, ...], as_json: bool,
                    base_url: str | None, api_key: str | None, project_id: str | None) -> int:
    """What would this sweep cost? Writes nothing, spends nothing (exit 0 with refusals)."""
    return run_sweep_job("sweep-preview", as_json=as_json, base_url=base_url, api_key=api_key,
                         project_id=project_id, arms=list(arms), runner=runner,
                         dataset_id=dataset_id, dataset_version_id=dataset_version_id,
                         scenario_suite_id=scenario_suite_id, pass_k=pass_k,
                         judges=list(judges))


@sweep_group.command("start", context_settings=CONTEXT)
@click.option("--name", default=None, help="sweep name (required)")
@click.option("--version-label", default=None, metavar="LABEL",
              help="candidate version label (required)")
@click.option("--arm", "arms", multiple=True, metavar="LABEL=CONNECTION_ID",
              help="an arm: a registered agent_http connection (repeatable)")
@_target
@click.option("--budget-usd", type=float, default=None, metavar="USD",
              help="refuse the sweep (HTTP 422) when the estimate is above this")
@click.option("--wait", is_flag=True, help="poll until the sweep is finished")
@click.option("--require-all-arms", is_flag=True,
              help="exit 1 unless every arm hits pass^k (implies --wait)")
@_polling
@_json_flag
@_connection
def start_command(name: str | None, version_label: str | None, arms: tuple[str, ...],
                  dataset_id: str | None, dataset_version_id: str | None,
                  scenario_suite_id: str | None, pass_k: int | None, judges: tuple[str, ...],
                  budget_usd: float | None, wait: bool, require_all_arms: bool,
                  poll_interval: float, poll_timeout: float, as_json: bool,
                  base_url: str | None, api_key: str | None, project_id: str | None) -> int:
    """Launch a push sweep (Neens calls each arm's connection) and optionally wait."""
    # SIGTERM like Ctrl-C: exit 130, nothing cancelled
    return run_sweep_job("sweep-start", as_json=as_json, base_url=base_url, api_key=api_key,
                         project_id=project_id, create=True, runner=False, name=name,
                         version_label=version_label, arms=list(arms), dataset_id=dataset_id,
                         dataset_version_id=dataset_version_id,
                         scenario_suite_id=scenario_suite_id, pass_k=pass_k,
                         judges=list(judges), budget_usd=budget_usd,
                         wait=wait or require_all_arms, require_all_arms=require_all_arms,
                         poll_interval=poll_interval, poll_timeout=poll_timeout)


@sweep_group.command("get", context_settings=CONTEXT)
@click.argument("sweep_id", required=False)
@click.option("--sweep-id", "sweep_id_opt", default=None, metavar="ID", help="the sweep")
@click.option("--wait", is_flag=True, help="poll until the sweep is finished")
@click.option("--require-all-arms", is_flag=True,
              help="exit 1 unless every arm hits pass^k (implies --wait)")
@_polling
@_json_flag
@_connection
def get_command(sweep_id: str | None, sweep_id_opt: str | None, wait: bool,
                require_all_arms: bool, poll_interval: float, poll_timeout: float,
                as_json: bool, base_url: str | None, api_key: str | None,
                project_id: str | None) -> int:
    """Show a sweep's state: per arm, pass^k so far and child-run progress."""
    target = _one_id(sweep_id, sweep_id_opt, "sweep get")
    return run_sweep_job("sweep-get", as_json=as_json, base_url=base_url, api_key=api_key,
                         project_id=project_id, sweep_id=target, wait=wait,
                         require_all_arms=require_all_arms, poll_interval=poll_interval,
                         poll_timeout=poll_timeout)


@sweep_group.command("decide", context_settings=CONTEXT)
@click.option("--sweep-id", default=None, metavar="ID", help="the sweep (required)")
@click.option("--bar", type=float, default=None, metavar="RATE",
              help="pass rate an arm must clear, 0..1 (default: the sweep's gate, else the "
                   "deployment default; the source is always reported)")
@click.option("--baseline-arm", default=None, metavar="ARM_ID",
              help="the incumbent savings are measured against (default: the first arm)")
@click.option("--require-winner", is_flag=True,
              help="exit 1 unless an arm clears the bar (implies --wait)")
@click.option("--wait", is_flag=True, help="poll until the sweep is finished first")
@_polling
@_json_flag
@_connection
def decide_command(sweep_id: str | None, bar: float | None, baseline_arm: str | None,
                   require_winner: bool, wait: bool, poll_interval: float, poll_timeout: float,
                   as_json: bool, base_url: str | None, api_key: str | None,
                   project_id: str | None) -> int:
    """The server's verdict: which arm to ship, per-arm table and one verdict per agent."""
    target = _one_id(None, sweep_id, "sweep decide")
    return run_sweep_job("sweep-decide", as_json=as_json, base_url=base_url, api_key=api_key,
                         project_id=project_id, sweep_id=target, bar=bar,
                         baseline_arm=baseline_arm or None, wait=wait,
                         require_winner=require_winner, poll_interval=poll_interval,
                         poll_timeout=poll_timeout)


def _one_id(positional: str | None, option: str | None, what: str) -> str:
    values = [v.strip() for v in (positional, option) if v and v.strip()]
    if not values:
        raise UsageError(f"{what} needs a sweep id (--sweep-id ID)")
    if len(set(values)) > 1:
        raise UsageError(f"{what}: two different sweep ids given")
    return values[0]


@sweep_group.command("run", context_settings={
    **CONTEXT, "allow_interspersed_args": False})
@click.option("--create", is_flag=True, help="create a runner sweep first")
@click.option("--sweep-id", default=None, metavar="ID",
              help="attach to (and resume) an existing runner sweep")
@click.option("--name", default=None, help="sweep name (with --create)")
@click.option("--version-label", default=None, metavar="LABEL",
              help="candidate version label (with --create; tags every trace)")
@click.option("--arm", "arms", multiple=True, metavar="LABEL=MODEL",
              help="an arm: the model handed to your command as $NEENS_EVAL_MODEL (repeatable)")
@_target
@click.option("--budget-usd", type=float, default=None, metavar="USD",
              help="refuse the sweep (HTTP 422) when the estimate is above this")
@click.option("--concurrency", type=int, default=1, show_default=True, metavar="N",
              help="agent invocations in parallel, across all arms")
@click.option("--workers", type=int, default=None, metavar="N",
              help="worker mode: N long-lived agent processes, one item at a time each "
                   "(docs/worker-protocol.md); replaces --concurrency")
@click.option("--timeout", type=float, default=None, metavar="SECONDS",
              help="per-invocation deadline")
@click.option("--bar", type=float, default=None, metavar="RATE",
              help="pass rate an arm must clear, 0..1")
@click.option("--baseline-arm", default=None, metavar="ARM_ID",
              help="the incumbent savings are measured against (default: the first arm)")
@_polling
@_json_flag
@_connection
@click.argument("command", nargs=-1, type=click.UNPROCESSED)
def run_command(create: bool, sweep_id: str | None, name: str | None,
                version_label: str | None, arms: tuple[str, ...], dataset_id: str | None,
                dataset_version_id: str | None, scenario_suite_id: str | None,
                pass_k: int | None, judges: tuple[str, ...], budget_usd: float | None,
                concurrency: int, workers: int | None, timeout: float | None,
                bar: float | None, baseline_arm: str | None, poll_interval: float,
                poll_timeout: float,
                as_json: bool, base_url: str | None, api_key: str | None,
                project_id: str | None, command: tuple[str, ...]) -> int:
    """Runner mode: run YOUR agent for every arm x rep x item, then print the verdict.

    Everything after `--` is your command; it gets $NEENS_EVAL_MODEL and the sweep variables.
    """
    argv = list(command)
    if not argv:
        raise UsageError("no agent command: put it after '--', e.g. neens sweep run --create "
                         "... -- python -m my_agent")
    return run_sweep_job("sweep-run", as_json=as_json, base_url=base_url, api_key=api_key,
                         project_id=project_id, command=argv,
                         sweep_id=sweep_id.strip() if sweep_id else None, create=create,
                         name=name, version_label=version_label, arms=list(arms),
                         dataset_id=dataset_id, dataset_version_id=dataset_version_id,
                         scenario_suite_id=scenario_suite_id, pass_k=pass_k,
                         judges=list(judges), budget_usd=budget_usd, concurrency=concurrency,
                         workers=workers, timeout=timeout, bar=bar,
                         baseline_arm=baseline_arm or None, poll_interval=poll_interval,
                         poll_timeout=poll_timeout)


__all__ = ["run_sweep_job", "sweep_group"]
