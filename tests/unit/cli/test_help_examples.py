"""Every command's ``--help`` ends with one example that parses; a mistyped option is offered
close matches only."""

from __future__ import annotations

import shlex

import click
import pytest

from neens_action.cli.app import close_options, invoke, neens
from neens_action.cli.examples import EXAMPLES


def _leaves() -> list[tuple[str, click.Command]]:
    found: list[tuple[str, click.Command]] = []

    def walk(group: click.Group, ctx: click.Context) -> None:
        for name in group.list_commands(ctx):
            cmd = group.get_command(ctx, name)
            assert cmd is not None, name
            sub = click.Context(cmd, info_name=name, parent=ctx)
            if isinstance(cmd, click.Group):
                walk(cmd, sub)
            else:
                found.append((sub.command_path, cmd))

    walk(neens, click.Context(neens, info_name="neens"))
    return found


LEAVES = _leaves()


def test_every_command_has_an_example_and_none_is_left_over() -> None:
    paths = {path for path, _ in LEAVES}
    assert paths == set(EXAMPLES)


@pytest.mark.parametrize(("path", "cmd"), LEAVES, ids=[p for p, _ in LEAVES])
def test_help_shows_one_example_that_parses(path: str, cmd: click.Command,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    assert invoke([*path.split()[1:], "--help"]) == 0
    out = capsys.readouterr().out
    assert out.count("Example:") == 1 and EXAMPLES[path] in " ".join(out.split())
    args = shlex.split(EXAMPLES[path])[len(path.split()):]
    cmd.make_context(path.split()[-1], args)  # a flag the command lacks raises here


def test_a_typo_is_offered_close_options_only(capsys: pytest.CaptureFixture[str]) -> None:
    assert invoke(["eval", "run", "--creat"]) == 2
    err = capsys.readouterr().err
    assert "'--create'" in err and "--repo" not in err
    assert close_options("--concurency", ["--concurrency", "--commit", "--json"]) == [
        "--concurrency"]
    assert invoke(["eval", "run", "--xyz"]) == 2
    assert "Did you mean" not in capsys.readouterr().err
