"""One example per command, shown at the end of its ``--help`` (kept apart from the option
declarations so every command reads the same way)."""

from __future__ import annotations

import click

EXAMPLES: dict[str, str] = {
    "neens eval run": "neens eval run --create --dataset ds_refunds --version-label v2 "
                      "--max-regressions 0 -- python agent.py",
    "neens eval push": "neens eval push --dataset ds_refunds --version-label v2 "
                       "--agent-connection conn_prod --max-regressions 0",
    "neens eval watch": "neens eval watch --dataset ds_refunds -- python agent.py",
    "neens stress generate": "neens stress generate refunds-stress --failure-mode fm_wrong_amount "
                             "--wait",
    "neens stress get": "neens stress get sts_123",
    "neens stress regenerate": "neens stress regenerate sts_123 --wait",
    "neens stress launch": "neens stress launch sts_123 --version-label v2",
    "neens stress run": "neens stress run --failure-mode fm_wrong_amount --version-label v2 "
                        "-- python agent.py",
    "neens sweep preview": "neens sweep preview --dataset-id ds_refunds --arm big=conn_big "
                           "--arm small=conn_small",
    "neens sweep start": "neens sweep start --dataset-id ds_refunds --arm big=conn_big "
                         "--arm small=conn_small --wait",
    "neens sweep get": "neens sweep get swp_123",
    "neens sweep decide": "neens sweep decide --sweep-id swp_123",
    "neens sweep run": "neens sweep run --create --dataset-id ds_refunds --arm big=gpt-4o "
                       "--arm small=gpt-4o-mini -- python agent.py",
    "neens sandbox serve": "neens sandbox serve --db sandbox.db --seed examples/sandbox.yaml "
                           "--api-key nk_live_local",
    "neens doctor": "neens doctor --base-url https://neens.example.com",
    "neens ci": "neens ci --mode run --dataset ds_refunds -- python agent.py",
    "neens report": "neens report result.json --format comment",
}


def with_example(command: click.Command, path: str) -> click.Command:
    """``command`` (and, for a group, each subcommand) with its example as the epilog."""
    example = EXAMPLES.get(path)
    if example and not command.epilog:
        command.epilog = f"\b\nExample:\n  {example}"
    if isinstance(command, click.Group) and not getattr(command, "lazy", None):
        for name, sub in command.commands.items():
            with_example(sub, f"{path} {name}")
    return command
