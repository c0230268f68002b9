"""``neens eval run``: the pull flow. Thin: parse flags, build settings, run the pipeline."""

from __future__ import annotations

from typing import Any

import click

from neens_action.cli.app import CONTEXT
from neens_action.cli.options import (
    agent_options,
    connection_options,
    declares_gates,
    gate_options,
    load_policy,
    no_gate_option,
    policy_options,
    poll_options,
    provenance_options,
    ui_url_option,
    workers_option,
)

_OPTS = dict(CONTEXT, ignore_unknown_options=False, allow_interspersed_args=False)


@click.command("run", context_settings=_OPTS)
@click.option("--run-id", metavar="ID", help="Drive an existing run.")
@click.option("--create", is_flag=True,
              help="Create a run first (needs --dataset + --version-label).")
@click.option("--dataset", metavar="ID", help="Dataset to snapshot (its golden version, unless…).")
@click.option("--dataset-version-id", "--dataset-version", "dataset_version_id", metavar="ID",
              help="…an explicit dataset version.")
@click.option("--version-label", metavar="LABEL", help="Candidate version label (tags traces).")
@click.option("--name", metavar="NAME", help="Run name (defaults to the version label).")
@click.option("--baseline", metavar="SPEC",
              help="branch:<name> | run:<run id> | prod | prod:<range> "
                   "(default in CI: branch:<default branch>).")
@gate_options
@click.option("--repeat", metavar="K|auto",
              help="Replay every item K times, as K runs (auto: again only while an item's "
                   "verdict is in doubt, at most 5); the gate then knows noise "
                   "(docs/noise.md). Default 1.")
@click.option("--baseline-runs", type=int, metavar="N",
              help="Read the default branch's history back N runs (default 5 with --repeat "
                   "2 or more, else 1).")
@click.option("--on-inconclusive", metavar="warn|block",
              help="What an inconclusive noise-aware verdict does (default warn).")
@provenance_options("Replay + enforce eval gates; implies creating a run (env NEENS_GATES).")
@policy_options
@connection_options
@ui_url_option
@agent_options("item")
@workers_option
@poll_options()
@no_gate_option
@click.option("--shard", metavar="I/N",
              help="Sharding: replay only this job's share of --run-id's items (1-based); "
                   "implies --no-start.")
@click.option("--no-start", is_flag=True,
              help="Sharding: replay the items but leave the run waiting for --finish.")
@click.option("--finish", is_flag=True,
              help="Sharding: once every shard is done, check every item has a trace, then "
                   "start, poll and gate --run-id (no agent command).")
@click.option("--only-create", is_flag=True,
              help="Sharding: with --create, create the run and print its id (no agent).")
@click.option("--json", "json_out", is_flag=True, help="Machine-readable result on stdout.")
@click.option("--junit", metavar="PATH", help="Write a JUnit XML report to PATH.")
@click.argument("command", nargs=-1, type=click.UNPROCESSED, metavar="-- COMMAND...")
def run_command(json_out: bool, junit: str | None, command: tuple[str, ...],
                **flags: Any) -> int:
    """Replay a run's frozen prompts through your agent COMMAND and gate on the verdict.

    Exit codes: 0 gate passed, 1 gate failed, 2 run error or bad input, 130 interrupted.
    """
    from neens_action.cli.options import run_eval_job
    from neens_action.settings.run import EvalRunSettings
    from neens_action.settings.shard import step_of
    from neens_action.world import World

    world = World()
    settings = EvalRunSettings.from_flags(
        {**flags, "command": list(command), "json": json_out, "junit": junit}, world.environ
    )
    policy = load_policy(settings)
    settings.validate(declared_gates=declares_gates(policy))
    return run_eval_job(step_of(settings) or "run", settings, world=world, policy=policy)
