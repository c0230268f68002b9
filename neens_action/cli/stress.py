"""``neens stress``: scenario suites generated from failure modes (docs/stress.md). Thin: parse
flags, call the flow functions in ``flows/stress.py``, print, exit.

- ``generate NAME --failure-mode ID...``: ``POST /scenario-suites``; prints the suite id on
  stdout (``--wait`` polls until ready; a failed generation exits 2 with the server's reason).
- ``get SUITE``: status and the scenario table (exit 2 when the generation failed).
- ``regenerate SUITE [overrides]``: ``POST /scenario-suites/{id}/regenerate`` (a fresh
  golden version).
- ``launch SUITE``: ``POST /scenario-suites/{id}/launch`` with the pre-prod knobs; prints the
  run id on stdout.
- ``run``: generate (or ``--suite-id``), wait, launch, drive like ``eval run`` / ``eval
  push``, gate. Exit codes: 0 gate passed, 1 gate failed, 2 run error or bad input, 130.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import click

from neens_action.cli.app import CONTEXT, make_lazy_group
from neens_action.cli.options import (
    agent_options,
    connection_options,
    load_policy,
    no_gate_option,
    output_options,
    policy_options,
    poll_options,
    ui_url_option,
)

stress_group: click.Group = make_lazy_group(
    "stress",
    {
        "generate": ("neens_action.cli.stress", "generate_command"),
        "get": ("neens_action.cli.stress", "get_command"),
        "regenerate": ("neens_action.cli.stress", "regenerate_command"),
        "launch": ("neens_action.cli.stress", "launch_command"),
        "run": ("neens_action.cli.stress", "run_command"),
    },
    help="Stress tests: scenario suites generated from failure modes, launched and gated.",
    context_settings=CONTEXT,
)
if TYPE_CHECKING:
    from neens_action.api.client import NeensClient
    from neens_action.api.suites import Suite

_RUN_OPTS = dict(CONTEXT, ignore_unknown_options=False, allow_interspersed_args=False)


def _client(flags: dict[str, Any]) -> NeensClient:
    """A client from --base-url/--api-key/--project-id (or NEENS_*), checked first."""
    import os

    from neens_action.settings.connection import Connection, make_client

    return make_client(Connection.from_flags(flags, os.environ))


def _suite_id(value: str) -> str:
    from neens_action.errors import UsageError

    if not value.strip():
        raise UsageError("the SUITE id is empty")
    return value.strip()


def _log(line: str = "") -> None:
    click.echo(line, err=True)


def _print_json(obj: Any) -> None:
    click.echo(json.dumps(obj, indent=2, ensure_ascii=False))


def _show_suite(suite: Suite, *, table: bool = True) -> None:
    from neens_action.flows.stress import skipped_lines, suite_progress
    from neens_action.report.build.stress import attacked_modes, scenario_table
    from neens_action.report.render.text import clean, render_table

    _log(f"Scenario suite {clean(suite.id)} {clean(suite.name)!r}: "
         f"{clean(suite_progress(suite))}")
    modes = attacked_modes(suite) or list(suite.failure_mode_ids)
    if modes:
        _log(f"  failure modes: {clean(', '.join(modes))}")
    if suite.dataset_version_id:
        _log(f"  golden version: {clean(suite.dataset_version_id)}")
    for line in skipped_lines(suite):
        _log(f"  warning: {clean(line)}")
    if table and suite.status == "ready":
        for line in render_table(scenario_table(suite), indent="  "):
            _log(line)


def _finish(suite: Suite, json_out: bool) -> int:
    from neens_action.errors import RunError
    from neens_action.flows.stress import failed_reason

    if json_out:
        _print_json(suite.raw)  # the suite as the server sent it
    if suite.status == "failed":
        raise RunError(failed_reason(suite))
    return 0


def _wait(client: NeensClient, suite_id: str, ready_timeout: float,
          poll_interval: float) -> Suite:
    from neens_action.flows.stress import wait_ready
    from neens_action.settings.connection import check_number
    from neens_action.world import World

    check_number("ready_timeout", ready_timeout, positive=True)
    check_number("poll_interval", poll_interval, positive=True)
    _log(f"Waiting for scenario suite {suite_id} to be ready ...")
    return wait_ready(client, suite_id, world=World(), interval=poll_interval,
                      timeout=ready_timeout, raise_failed=False)


def generation_options(f: Any) -> Any:
    for decorator in reversed([
        click.option("--per-mode", type=int, metavar="N",
                     help="LLM-written scenarios per failure mode (1-25; server default 5)."),
        click.option("--strategy", "strategies", multiple=True, metavar="S",
                     help="paraphrase | escalate | boundary (repeatable; default all three)."),
        click.option("--connection", metavar="ID",
                     help="Pin the LLM connection used for generation."),
    ]):
        f = decorator(f)
    return f


def wait_options(f: Any) -> Any:
    for decorator in reversed([
        click.option("--wait", is_flag=True, help="Poll until the suite is ready (or failed)."),
        click.option("--ready-timeout", type=float, default=600.0, show_default=True,
                     metavar="SECONDS", help="How long --wait waits for generation."),
        click.option("--poll-interval", type=float, default=5.0, show_default=True,
                     metavar="SECONDS", help="Longest wait between status polls."),
        click.option("--json", "json_out", is_flag=True, help="The suite as JSON on stdout."),
    ]):
        f = decorator(f)
    return f


@click.command("generate", context_settings=CONTEXT)
@click.argument("name")
@click.option("--failure-mode", "failure_modes", multiple=True, metavar="ID",
              help="Failure mode to attack (repeatable, required).")
@generation_options
@click.option("--no-replay", is_flag=True, help="Do not replay the exemplars verbatim.")
@wait_options
@connection_options
def generate_command(name: str, failure_modes: tuple[str, ...], per_mode: int | None,
                     strategies: tuple[str, ...], connection: str | None, no_replay: bool,
                     wait: bool, ready_timeout: float, poll_interval: float, json_out: bool,
                     **flags: Any) -> int:
    """Generate a scenario suite NAME from failure modes (prints the suite id)."""
    from neens_action.errors import UsageError
    from neens_action.flows.stress import suite_body
    from neens_action.settings.stress import check_per_mode, ids, parse_strategies

    if not name.strip():
        raise UsageError("the suite NAME is empty")
    modes = ids(failure_modes, "failure_modes")
    if not modes:
        raise UsageError("neens stress generate needs --failure-mode ID (repeatable)")
    check_per_mode(per_mode)
    body = suite_body(name.strip(), modes, per_mode=per_mode,
                      strategies=parse_strategies(strategies), replay=not no_replay,
                      connection=(connection or "").strip() or None)
    client = _client(flags)
    try:
        suite = client.create_suite(body)
        suite_id = suite.id
        _log(f"Created scenario suite {suite_id} ({suite.status or 'generating'})")
        if not json_out:
            click.echo(suite_id)  # at once: a script has the id even if generation fails
        if wait:
            suite = _wait(client, suite_id, ready_timeout, poll_interval)
            _show_suite(suite, table=False)
        return _finish(suite, json_out)
    finally:
        client.close()


@click.command("get", context_settings=CONTEXT)
@click.argument("suite_id", metavar="SUITE")
@click.option("--json", "json_out", is_flag=True, help="The suite as JSON on stdout.")
@connection_options
def get_command(suite_id: str, json_out: bool, **flags: Any) -> int:
    """Show a suite's status and its scenarios (exit 2 when its generation failed)."""
    client = _client(flags)
    try:
        suite = client.get_suite(_suite_id(suite_id))
    finally:
        client.close()
    _show_suite(suite)
    return _finish(suite, json_out)


@click.command("regenerate", context_settings=CONTEXT)
@click.argument("suite_id", metavar="SUITE")
@generation_options
@click.option("--replay/--no-replay", default=None,
              help="Replay the exemplars verbatim (default: keep the suite's setting).")
@wait_options
@connection_options
def regenerate_command(suite_id: str, per_mode: int | None, strategies: tuple[str, ...],
                       connection: str | None, replay: bool | None, wait: bool,
                       ready_timeout: float, poll_interval: float, json_out: bool,
                       **flags: Any) -> int:
    """Rebuild a suite's scenarios (a fresh golden version), optionally with overrides."""
    from neens_action.flows.stress import regenerate_body
    from neens_action.settings.stress import check_per_mode, parse_strategies

    check_per_mode(per_mode)
    body = regenerate_body(per_mode=per_mode, strategies=parse_strategies(strategies),
                           replay=replay, connection=(connection or "").strip() or None)
    suite_id = _suite_id(suite_id)
    client = _client(flags)
    try:
        suite = client.regenerate_suite(suite_id, body)
        _log(f"Regenerating scenario suite {suite_id} ({suite.status or 'generating'})")
        if wait:
            suite = _wait(client, suite_id, ready_timeout, poll_interval)
            _show_suite(suite, table=False)
        return _finish(suite, json_out)
    finally:
        client.close()


def launch_options(f: Any) -> Any:
    for decorator in reversed([
        click.option("--version-label", metavar="LABEL",
                     help="Candidate version label (default in CI: the short commit)."),
        click.option("--name", metavar="NAME", help="Run name."),
        click.option("--agent-connection", metavar="ID",
                     help="Push: the agent_http connection Neens calls per scenario."),
        click.option("--judge", "judges", multiple=True, metavar="ID",
                     help="Judge deployment to score with (repeatable; default: each "
                          "failure mode's judges)."),
        click.option("--baseline", metavar="SPEC",
                     help="branch:<name> | run:<run id> | prod | prod:<range>."),
        click.option("--max-regressions", type=int, metavar="N",
                     help="Gate: fail if regressions > N."),
        click.option("--min-pass-rate", type=float, metavar="R",
                     help="Gate: fail if pass rate < R (0..1)."),
        click.option("--git-sha", metavar="SHA", help="Candidate commit (default: detected)."),
        click.option("--branch", metavar="NAME", help="Candidate branch (default: detected)."),
        click.option("--pr-number", type=int, metavar="N", help="Pull/merge request number."),
        click.option("--pr-url", metavar="URL", help="Pull/merge request URL."),
        click.option("--repo", metavar="OWNER/NAME", help="Repository (env NEENS_REPO)."),
    ]):
        f = decorator(f)
    return f


def _settings(flags: dict[str, Any], *, drive: bool) -> tuple[Any, Any, Any]:
    """-> (validated StressSettings, policy, world)."""
    from neens_action.settings.stress import StressSettings
    from neens_action.world import World

    world = World()
    settings = StressSettings.from_flags(flags, world.environ)
    policy = load_policy(settings)
    settings.validate_stress(world.environ, drive=drive, policy=policy)
    return settings, policy, world


@click.command("launch", context_settings=CONTEXT)
@click.argument("suite_id", metavar="SUITE")
@launch_options
@click.option("--runner-mode", type=click.Choice(["push", "runner"]),
              help="Default: push with --agent-connection, else runner.")
@policy_options
@connection_options
@click.option("--json", "json_out", is_flag=True, help="The created run as JSON on stdout.")
def launch_command(suite_id: str, json_out: bool, **flags: Any) -> int:
    """Launch a ready suite as a pre-prod run (prints the run id)."""
    from neens_action.flows.stress import launch, launch_body
    from neens_action.settings.connection import make_client

    settings, policy, world = _settings({**flags, "suite_id": _suite_id(suite_id)},
                                        drive=False)
    prov = settings.resolve_provenance(world.environ)
    client = make_client(settings)
    try:
        run = launch(client, settings.suite_id, launch_body(settings, prov, policy), world=world)
    finally:
        client.close()
    if run.runner_mode == "push":
        world.log(f"Trigger it with POST /preprod-evals/{run.id}/run, or let 'neens stress "
                  f"run --suite-id {settings.suite_id} --agent-connection ID' do everything")
    else:
        world.log(f"Drive it with: neens eval run --run-id {run.id} -- <your agent command>")
    if json_out:
        _print_json(dict(run.raw))  # the created run as the server sent it
    else:
        click.echo(run.id)
    return 0


@click.command("run", context_settings=_RUN_OPTS)
@click.option("--suite-id", metavar="ID", help="Reuse a generated suite instead of generating.")
@click.option("--suite-name", metavar="NAME", help="Name of the generated suite.")
@click.option("--failure-mode", "failure_modes", multiple=True, metavar="ID",
              help="Failure mode to attack (repeatable).")
@generation_options
@click.option("--no-replay", is_flag=True, help="Do not replay the exemplars verbatim.")
@click.option("--ready-timeout", type=float, default=600.0, show_default=True,
              metavar="SECONDS", help="How long to wait for the suite to be generated.")
@launch_options
@policy_options
@connection_options
@ui_url_option
@agent_options("scenario")
@poll_options()
@no_gate_option
@output_options
@click.argument("command", nargs=-1, type=click.UNPROCESSED, metavar="[-- COMMAND...]")
def run_command(json_out: bool, junit: str | None, command: tuple[str, ...],
                **flags: Any) -> int:
    """Generate (or reuse) a suite, launch it, drive your agent, gate on the verdict.

    Pull: the agent COMMAND after '--' runs once per scenario. Push: --agent-connection.
    Exit codes: 0 gate passed, 1 gate failed, 2 run error or bad input, 130 interrupted.
    """
    from neens_action.cli.options import run_eval_job

    settings, policy, world = _settings(
        {**flags, "command": list(command), "json": json_out, "junit": junit}, drive=True)
    return run_eval_job("stress", settings, world=world, policy=policy)
