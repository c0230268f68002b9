"""``neens eval``: run (pull), push, watch. Each subcommand lives in its own module."""

from __future__ import annotations

import click

from neens_action.cli.app import CONTEXT, make_lazy_group

eval_group: click.Group = make_lazy_group(
    "eval",
    {
        "run": ("neens_action.cli.eval_run", "run_command"),
        "push": ("neens_action.cli.eval_push", "push_command"),
        "watch": ("neens_action.cli.eval_watch", "watch_command"),
    },
    help="Pre-prod evaluations: replay a golden dataset and gate on the verdict.",
    context_settings=CONTEXT,
)
