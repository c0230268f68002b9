"""The ``neens`` command: a thin click front door over plain functions.

Subcommand groups live in ``neens_action.commands.<name>`` (and the sandbox server in
``neens_action.sandbox.cli``) and are imported only when used, so ``neens --version`` starts
fast. Every error is turned into one line on stderr and the exit-code contract here:
0 gate passed, 1 gate failed, 2 run error / bad usage, 130 interrupted.
"""

from __future__ import annotations

import importlib
import sys
from typing import Any

import click

from neens_action import __version__

# command name -> (module, attribute)
_COMMANDS: dict[str, tuple[str, str]] = {
    "eval": ("neens_action.commands.eval", "eval_group"),
    "sweep": ("neens_action.commands.sweep", "sweep_group"),
    "stress": ("neens_action.commands.stress", "stress_group"),
    "sandbox": ("neens_action.sandbox.cli", "sandbox_group"),
    "doctor": ("neens_action.commands.doctor", "doctor_command"),
}


class LazyGroup(click.Group):
    """A click group whose subcommands are imported on first use (fast start-up)."""

    lazy: dict[str, tuple[str, str]] = _COMMANDS

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(self.lazy)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        target = self.lazy.get(cmd_name)
        if target is None:
            return None
        module = importlib.import_module(target[0])
        return getattr(module, target[1])


def make_lazy_group(name: str, commands: dict[str, tuple[str, str]], **kw: Any) -> click.Group:
    """A group named ``name`` whose subcommands are ``{name: (module, attribute)}``."""
    cls = type(f"Lazy_{name}", (LazyGroup,), {"lazy": commands})
    return cls(name=name, **kw)


CONTEXT = {"help_option_names": ["-h", "--help"], "max_content_width": 100}


@click.group(cls=LazyGroup, context_settings=CONTEXT)
@click.version_option(__version__, "--version", prog_name="neens", message="%(prog)s %(version)s")
def neens() -> None:
    """Neens pre-prod evaluations in CI: replay a golden dataset, gate the build."""


def main(argv: list[str] | None = None) -> None:
    """Console-script entry point: run the CLI and map every outcome to an exit code."""
    sys.exit(run(argv))


def run(argv: list[str] | None = None) -> int:
    from neens_action.errors import EXIT_INTERRUPTED, NeensError

    try:
        result: Any = neens.main(args=argv, prog_name="neens", standalone_mode=False)
    except click.exceptions.Exit as exc:  # --help / --version
        return int(exc.exit_code)
    except click.exceptions.Abort:
        click.echo("neens: interrupted", err=True)
        return EXIT_INTERRUPTED
    except click.ClickException as exc:  # usage errors: one line, exit 2
        ctx = getattr(exc, "ctx", None)
        where = f" {ctx.command_path}" if ctx is not None and ctx.command_path else ""
        hint = f" (see 'neens{where.removeprefix(' neens')} --help')" if where else ""
        click.echo(f"neens: error: {exc.format_message()}{hint}", err=True)
        return 2
    except NeensError as exc:
        click.echo(f"neens: error: {exc}", err=True)
        return exc.exit_code
    except KeyboardInterrupt:
        click.echo("neens: interrupted", err=True)
        return EXIT_INTERRUPTED
    return int(result or 0)


if __name__ == "__main__":  # pragma: no cover
    main()
