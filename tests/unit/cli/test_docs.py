"""The reference in docs/ covers the command line: every command has a section headed by its
name on one of the pages, and every flag of the command (aliases included) is named in that
section; `neens ci` takes one flag per input of docs/inputs.md. A flag added without its
documentation fails here."""

from __future__ import annotations

import re
from pathlib import Path

import click

from neens_action.ci import inputs as ci_inputs
from neens_action.cli.app import neens
from tests.helpers import ROOT

DOCS = ROOT / "docs"


def leaf_commands() -> dict[str, click.Command]:
    """``"neens eval run"`` -> the command, for every command that runs something."""
    found: dict[str, click.Command] = {}

    def walk(cmd: click.Command, path: str) -> None:
        if isinstance(cmd, click.Group):
            ctx = click.Context(cmd, info_name=path)
            for name in cmd.list_commands(ctx):
                sub = cmd.get_command(ctx, name)
                assert sub is not None, f"{path} {name}"
                walk(sub, f"{path} {name}")
        else:
            found[path] = cmd

    walk(neens, "neens")
    return found


def sections() -> dict[str, tuple[Path, str]]:
    """Every Markdown section of docs/*.md whose heading starts with a command in backticks
    (``## `neens eval run` ...``): the command -> (page, the section up to the next heading
    of the same or a higher level)."""
    out: dict[str, tuple[Path, str]] = {}
    for page in sorted(DOCS.glob("*.md")):
        text = page.read_text(encoding="utf-8")
        heads = list(re.finditer(r"^(#{1,6}) `(neens [a-z -]+)`", text, re.M))
        for head in heads:
            level = len(head.group(1))
            rest = re.compile(rf"^#{{1,{level}}} ", re.M)
            end = rest.search(text, head.end())
            out.setdefault(head.group(2), (page, text[head.start():end.start() if end else None]))
    return out


def flags(cmd: click.Command) -> list[str]:
    return [opt for p in cmd.params if isinstance(p, click.Option) and not p.hidden
            for opt in p.opts]


def named(flag: str, text: str) -> bool:
    """``--dataset`` is named as `` `--dataset`` `` followed by a space, a comma or the end
    of the code span, never as the prefix of a longer flag (``--dataset-version``)."""
    return re.search(rf"`{re.escape(flag)}(?![A-Za-z0-9-])", text) is not None


def test_every_command_has_a_reference_section() -> None:
    documented = sections()
    missing = sorted(set(leaf_commands()) - set(documented))
    assert not missing, f"commands without a `## \\`neens ...\\`` section in docs/: {missing}"


def test_every_flag_is_named_in_its_commands_section() -> None:
    documented = sections()
    gaps = {}
    for path, cmd in leaf_commands().items():
        if path == "neens ci":
            continue  # one flag per input: the next test
        page, text = documented[path]
        absent = [f for f in flags(cmd) if not named(f, text)]
        if absent:
            gaps[f"{path} ({page.name})"] = absent
    assert not gaps, gaps


def test_neens_ci_takes_the_documented_inputs_as_flags() -> None:
    inputs_page = (DOCS / "inputs.md").read_text(encoding="utf-8")
    table = set(re.findall(r"^\| `([a-z][a-z-]*)` \|", inputs_page, re.M))
    ci_flags = {f.removeprefix("--") for f in flags(leaf_commands()["neens ci"])}
    assert ci_flags <= table, ci_flags - table
    assert ci_flags == {i.name for i in ci_inputs.INPUTS if i.kind != "secret"}
    page, text = sections()["neens ci"]
    assert "[inputs.md](inputs.md)" in text, page


def test_the_section_finder_and_flag_matcher() -> None:
    text = "| `--dataset-version ID` | x |\n| `--json` | y |"
    assert named("--json", text) and named("--dataset-version", text)
    assert not named("--dataset", text)  # a prefix of a longer flag does not count
