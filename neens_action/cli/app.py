"""The click side of the ``neens`` command (imported only when a command really runs, so
``neens --version`` starts without click: see ``neens_action/cli/main.py``)."""

from __future__ import annotations

import importlib
from typing import Any

import click

from neens_action import __version__

# command name -> (module, attribute)
_COMMANDS: dict[str, tuple[str, str]] = {
    "eval": ("neens_action.cli.eval", "eval_group"),
    "sweep": ("neens_action.cli.sweep", "sweep_group"),
    "stress": ("neens_action.cli.stress", "stress_group"),
    "sandbox": ("neens_sandbox.cli", "sandbox_group"),
    "doctor": ("neens_action.cli.doctor", "doctor_command"),
    "ci": ("neens_action.cli.ci", "ci_command"),
    "report": ("neens_action.cli.report", "report_command"),
}

CONTEXT = {"help_option_names": ["-h", "--help"], "max_content_width": 100}


class LazyGroup(click.Group):
    """A click group whose subcommands are imported on first use (fast start-up)."""

    lazy: dict[str, tuple[str, str]] = _COMMANDS

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(self.lazy)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        target = self.lazy.get(cmd_name)
        if target is None:
            return None
        try:
            module = importlib.import_module(target[0])
        except ImportError as exc:
            extra = _OPTIONAL.get(cmd_name)
            if extra is None or not _missing_optional(exc, target[0].partition(".")[0]):
                raise
            return _not_installed(cmd_name, extra)
        from neens_action.cli.examples import with_example

        return with_example(getattr(module, target[1]), f"{ctx.command_path} {cmd_name}")


# Commands whose package comes with an extra of neens-action -> (extra, what it is called).
_OPTIONAL: dict[str, tuple[str, str]] = {"sandbox": ("sandbox", "the sandbox")}
# Dependencies of those extras: their absence means "not installed" too.
_OPTIONAL_DEPENDENCIES = ("opentelemetry", "google.protobuf")


def _missing_optional(exc: ImportError, package: str) -> bool:
    """True when ``exc`` says ``package`` (or a dependency of an extra) is not installed here;
    a bug inside an installed package (``cannot import name X from <package>.app``) is not
    hidden behind that message."""
    name = exc.name or ""
    return (not name or name == package
            or any(name == m or name.startswith(m + ".") for m in _OPTIONAL_DEPENDENCIES))


def _not_installed(cmd_name: str, extra: tuple[str, str]) -> click.Command:
    """A stand-in for a command whose package is not installed: any use is one line, exit 2."""
    message = f"{extra[1]} is not installed here: pip install 'neens-action[{extra[0]}]'"

    def fail() -> None:
        from neens_action.errors import UsageError

        raise UsageError(message)

    return click.Command(
        cmd_name, callback=fail, add_help_option=False,
        help=f"Not installed here: pip install 'neens-action[{extra[0]}]'.",
        context_settings={"ignore_unknown_options": True, "allow_extra_args": True},
    )


def make_lazy_group(name: str, commands: dict[str, tuple[str, str]], **kw: Any) -> click.Group:
    """A group named ``name`` whose subcommands are ``{name: (module, attribute)}``."""
    cls = type(f"Lazy_{name}", (LazyGroup,), {"lazy": commands})
    return cls(name=name, **kw)


@click.group(cls=LazyGroup, context_settings=CONTEXT)
@click.version_option(__version__, "--version", prog_name="neens", message="%(prog)s %(version)s")
def neens() -> None:
    """Neens pre-prod evaluations in CI: replay a golden dataset, gate the build."""


CLOSE = 0.75  # difflib ratio a suggested option must reach (click's own is 0.6)


def close_options(typed: str, options: list[str]) -> list[str]:
    """The options a typo plausibly meant: a close spelling, or one that contains what was
    typed (``--creat``: ``--create``, ``--only-create``; never ``--repo``)."""
    import difflib

    word = typed.lstrip("-")
    return [o for o in options
            if difflib.SequenceMatcher(None, typed, o).ratio() >= CLOSE
            or (len(word) >= 3 and word in o.lstrip("-"))]


def invoke(argv: list[str] | None = None) -> int:
    """Run the click command line and map every outcome to an exit code."""
    from neens_action.errors import EXIT_INTERRUPTED, NeensError

    try:
        result: Any = neens.main(args=argv, prog_name="neens", standalone_mode=False)
    except click.exceptions.Exit as exc:  # --help / --version
        return int(exc.exit_code)
    except click.exceptions.Abort:
        click.echo("neens: interrupted", err=True)
        return EXIT_INTERRUPTED
    except click.ClickException as exc:  # usage errors: one line, exit 2
        if isinstance(exc, click.NoSuchOption) and exc.possibilities:
            # click's own cut-off also offers far names (--creat: --repo)
            object.__setattr__(exc, "possibilities",
                               close_options(exc.option_name, exc.possibilities) or None)
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
