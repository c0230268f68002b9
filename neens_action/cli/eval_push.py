"""``neens eval push``: the push flow. Thin: parse flags, build settings, run the pipeline."""

from __future__ import annotations

from typing import Any

import click

from neens_action.cli.app import CONTEXT
from neens_action.cli.options import (
    connection_options,
    declares_gates,
    gate_options,
    load_policy,
    no_gate_option,
    output_options,
    policy_options,
    poll_options,
    provenance_options,
    ui_url_option,
)


@click.command("push", context_settings=CONTEXT)
@click.option("--dataset", metavar="ID", help="Dataset to snapshot (its golden version, unless…).")
@click.option("--dataset-version", "--dataset-version-id", "dataset_version_id", metavar="ID",
              help="…an explicit dataset version.")
@click.option("--version-label", metavar="LABEL", help="Candidate version label (stamped on the "
              "run; defaults to the short commit only for eval-gates runs).")
@click.option("--agent-connection", metavar="ID",
              help="Registered agent_http connection Neens calls per prompt (required).")
@click.option("--name", metavar="NAME", help="Run name (defaults to the version label).")
@click.option("--baseline", metavar="SPEC",
              help="branch:<name> | run:<run id> | prod | prod:<range> "
                   "(default in CI: branch:<default branch>).")
@gate_options
@provenance_options("Replay + enforce eval gates (env NEENS_GATES).")
@policy_options
@connection_options
@ui_url_option
@poll_options("Overall scoring budget (also the deadline of the push trigger).")
@no_gate_option
@output_options
def push_command(json_out: bool, junit: str | None, **flags: Any) -> int:
    """Create a push run: Neens calls your agent_http connection once per frozen prompt,
    scores the answers, and the build gates on the verdict (no harness, no OTel wiring).

    Exit codes: 0 gate passed, 1 gate failed, 2 run error or bad input, 130 interrupted.
    """
    from neens_action.cli.options import run_eval_job
    from neens_action.settings.push import EvalPushSettings
    from neens_action.world import World

    world = World()
    settings = EvalPushSettings.from_flags({**flags, "json": json_out, "junit": junit},
                                           world.environ)
    policy = load_policy(settings)
    settings.validate(policy_gates=declares_gates(policy))
    return run_eval_job("push", settings, world=world, policy=policy)
