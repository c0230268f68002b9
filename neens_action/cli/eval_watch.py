"""``neens eval watch``: the local dev loop. Thin: parse flags, build settings, run the loop."""

from __future__ import annotations

from typing import Any

import click

from neens_action.cli.app import CONTEXT
from neens_action.cli.options import (
    agent_options,
    connection_options,
    gate_options,
    load_policy,
    no_gate_option,
    policy_options,
    poll_options,
)

_OPTS = dict(CONTEXT, ignore_unknown_options=False, allow_interspersed_args=False)


@click.command("watch", context_settings=_OPTS)
@click.option("--dataset", metavar="ID", help="Dataset every iteration replays (its golden "
              "version, unless…).")
@click.option("--dataset-version-id", "--dataset-version", "dataset_version_id", metavar="ID",
              help="…an explicit dataset version.")
@click.option("--version-label", metavar="LABEL",
              help="Base label; iteration N is <LABEL>-watch.<session>.<N>. [default: local]")
@click.option("--name", metavar="NAME",
              help="Run name (default: '<label> (watch #N)').")
@click.option("--baseline", metavar="SPEC",
              help="branch:<name> | run:<run id> | prod | prod:<range> (no CI default here).")
@gate_options
@click.option("--path", "paths", multiple=True, metavar="P",
              help="Directory or file to watch (repeatable). [default: .]")
@click.option("--include", multiple=True, metavar="GLOB",
              help="Only these files (root-relative path or base name; repeatable).")
@click.option("--exclude", multiple=True, metavar="GLOB",
              help="Never these files or directories (repeatable).")
@click.option("--debounce", type=float, default=1.0, show_default=True, metavar="SECONDS",
              help="Quiet time after a save before an iteration starts.")
@click.option("--max-iterations", type=int, metavar="N",
              help="Stop after N iterations; exit with the last one's code.")
@click.option("--once", is_flag=True,
              help="Run one iteration and exit with its gate code (for a pre-push hook).")
@policy_options
@connection_options
@agent_options("item")
@poll_options("Scoring budget per iteration.")
@no_gate_option
@click.option("--json", "json_out", is_flag=True,
              help="One compact JSON object per iteration on stdout.")
@click.argument("command", nargs=-1, type=click.UNPROCESSED, metavar="-- COMMAND...")
def watch_command(paths: tuple[str, ...], include: tuple[str, ...], exclude: tuple[str, ...],
                  debounce: float, max_iterations: int | None, once: bool, json_out: bool,
                  command: tuple[str, ...], **flags: Any) -> int:
    """Re-run the gate against your local agent COMMAND on every file save.

    Every iteration is a real pre-prod run scored by your judges (it costs judge tokens).
    Exit codes: --once => that iteration's 0/1/2; --max-iterations => the last one's;
    2 when no run can be created; 130 on Ctrl-C (the in-flight run is cancelled).
    """
    from neens_action.errors import UsageError
    from neens_action.pipeline import SignalGuard
    from neens_action.settings.connection import make_client
    from neens_action.settings.run import EvalRunSettings
    from neens_action.watch_session import DEFAULT_LABEL, WatchOptions, run_watch
    from neens_action.world import World

    world = World()
    label = flags.pop("version_label")
    settings = EvalRunSettings.from_flags(
        {**flags, "command": list(command), "json": json_out, "create": True,
         "version_label": DEFAULT_LABEL if label is None else label,
         "report_ci_result": False},
        world.environ,
    )
    settings.gates = None  # eval gates are a CI concern: NEENS_GATES does not apply here
    if not settings.dataset:
        raise UsageError("neens eval watch needs --dataset ID (the golden set every "
                         "iteration replays)")
    if not (settings.version_label or "").strip():
        raise UsageError("--version-label is empty (leave it out for the default 'local')")
    if not settings.command:
        raise UsageError("no agent command: put it after '--', e.g. neens eval watch "
                         "--dataset ds_1 -- python -m my_agent")
    opts = WatchOptions(paths=list(paths) or ["."], include=tuple(include),
                        exclude=tuple(exclude), debounce=debounce,
                        max_iterations=max_iterations, once=once).validate()
    policy = load_policy(settings)
    settings.validate(declared_gates=False)
    client = make_client(settings)
    try:
        with SignalGuard():
            return run_watch(settings, opts, client=client, world=world, policy=policy)
    finally:
        client.close()
