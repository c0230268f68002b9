"""``neens eval run``: the pull flow. Thin: parse flags, build settings, run the pipeline."""

from __future__ import annotations

from typing import Any

import click

from neens_action.cli import CONTEXT

_OPTS = dict(CONTEXT, ignore_unknown_options=False, allow_interspersed_args=False)


def load_policy(path: str | None, overrides: dict[str, Any]) -> Any:
    """``policy.build_policy`` (None without a file and without override flags)."""
    if not path and not overrides:
        return None
    from neens_action import policy as policy_mod

    return policy_mod.build_policy(path, overrides)


def declares_gates(policy: Any) -> bool:
    """True when the policy file has a ``gates`` block (it implies creating a run)."""
    block = getattr(policy, "gates_block", None)
    return bool(callable(block) and block() is not None)


def policy_options(f: Any) -> Any:
    for decorator in reversed([
        click.option("--gate-policy", metavar="FILE",
                     help="Gate-as-code policy file (env NEENS_GATE_POLICY)."),
        click.option("--max-cost-delta-pct", type=float, metavar="PCT",
                     help="Block if avg cost rises more than PCT% vs baseline."),
        click.option("--max-latency-delta-pct", type=float, metavar="PCT",
                     help="Block if avg latency rises more than PCT% vs baseline."),
        click.option("--min-avg-score", type=float, metavar="R",
                     help="Block if the run's avg score is below R (0..1)."),
        click.option("--max-abs-failures", type=int, metavar="N",
                     help="Block if absolute candidate failures exceed N."),
    ]):
        f = decorator(f)
    return f


def connection_options(f: Any) -> Any:
    for decorator in reversed([
        click.option("--base-url", metavar="URL", help="Neens API origin (env NEENS_BASE_URL)."),
        click.option("--api-key", metavar="KEY",
                     help="nk_live_… project key (env NEENS_API_KEY; prefer the variable)."),
        click.option("--project-id", metavar="ID",
                     help="X-Neens-Project-Id (env NEENS_PROJECT_ID; usually unneeded)."),
    ]):
        f = decorator(f)
    return f


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
@click.option("--max-regressions", type=int, metavar="N", help="Gate: fail if regressions > N.")
@click.option("--min-pass-rate", type=float, metavar="R",
              help="Gate: fail if pass rate < R (0..1).")
@click.option("--gates", metavar="active|ID,ID",
              help="Replay + enforce eval gates; implies creating a run (env NEENS_GATES).")
@click.option("--git-sha", metavar="SHA", help="Candidate commit (default: detected in CI).")
@click.option("--branch", metavar="NAME", help="Candidate branch (default: detected in CI).")
@click.option("--pr-number", type=int, metavar="N", help="Pull/merge request number.")
@click.option("--pr-url", metavar="URL", help="Pull/merge request URL.")
@click.option("--repo", metavar="OWNER/NAME", help="Repository (env NEENS_REPO).")
@policy_options
@connection_options
@click.option("--timeout", type=float, metavar="SECONDS", help="Per-item command timeout.")
@click.option("--concurrency", type=int, default=1, show_default=True,
              help="Parallel item invocations.")
@click.option("--poll-interval", type=float, default=5.0, show_default=True, metavar="SECONDS",
              help="Longest wait between status polls (polling starts at 0.5 s).")
@click.option("--poll-timeout", type=float, default=1800.0, show_default=True, metavar="SECONDS",
              help="Overall scoring budget.")
@click.option("--no-gate", is_flag=True, help="A failed gate exits 0 (a run error still exits 2).")
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
    from neens_action import pipeline
    from neens_action.client import NeensClient
    from neens_action.flows.pull import run_pull
    from neens_action.settings import EvalRunSettings
    from neens_action.world import World

    world = World()
    settings = EvalRunSettings.from_flags(
        {**flags, "command": list(command), "json": json_out, "junit": junit}, world.environ
    )
    policy = load_policy(settings.gate_policy, settings.overrides)
    settings.validate(declared_gates=declares_gates(policy))
    client = NeensClient(settings.base_url, settings.api_key, settings.project_id,
                         timeout=settings.request_timeout, retries=settings.retries)
    from neens_action.commands.eval_shard import execute_step, step_of

    step = step_of(settings)
    try:
        if step is not None:
            return execute_step(step, settings, client=client, world=world, policy=policy)
        return pipeline.execute(
            lambda: run_pull(settings, client=client, world=world, policy=policy),
            world=world, json_out=settings.json, junit_path=settings.junit, client=client,
            report_ci=settings.report_ci_result,
        )
    finally:
        client.close()
