"""actionlint and zizmor over every workflow we ship (and action.yml), with clean output.

Each linter is also run on a deliberately broken workflow, so a linter that silently checks
nothing cannot make these tests pass.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import ROOT

pytestmark = pytest.mark.e2e

VENV_BIN = Path(sys.executable).parent
WORKFLOWS = sorted(
    [
        *(ROOT / ".github" / "workflows").glob("*.yml"),
        *(ROOT / "examples" / "workflows").glob("*.yml"),
        *(ROOT / "tests" / "e2e" / "github").glob("*.yml"),
    ]
)
# What we publish: zizmor audits these. The e2e workflows under tests/e2e/github use
# `actions/checkout@v4` by tag on purpose (act swaps that exact action for a local copy).
AUDITED = [ROOT / ".github" / "workflows", ROOT / "examples" / "workflows", ROOT / "action.yml",
           ROOT / "host" / "action.yml"]
BROKEN = """\
on: pull_request
jobs:
  a:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v4
      - run: echo "${{ github.event.pull_request.title }}" ${{ github.no_such_thing }}
"""


def _tool(name: str) -> str:
    path = shutil.which(name, path=f"{VENV_BIN}{os.pathsep}{os.environ.get('PATH', '')}")
    if path is None:
        pytest.fail(f"{name} is not installed: run `scripts/test e2e`, which sets it up in .venv")
    return path


def _run(args: list[str], cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        args, cwd=cwd, capture_output=True, text=True, timeout=240,
        env={**os.environ, "NO_COLOR": "1"},
    )


def test_the_workflows_exist():
    names = {p.relative_to(ROOT).as_posix() for p in WORKFLOWS}
    assert {".github/workflows/ci.yml", ".github/workflows/release.yml"} <= names
    assert any(n.startswith("examples/workflows/") for n in names)
    assert any(n.startswith("tests/e2e/github/") for n in names)


def test_actionlint_is_clean():
    proc = _run([_tool("actionlint"), *map(str, WORKFLOWS)])
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.strip() == "", proc.stdout


def test_actionlint_flags_a_broken_workflow(tmp_path):
    bad = tmp_path / "bad.yml"
    bad.write_text(BROKEN)
    proc = _run([_tool("actionlint"), str(bad)], cwd=tmp_path)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "github.event.pull_request.title" in proc.stdout, proc.stdout


def test_zizmor_is_clean():
    proc = _run([
        _tool("zizmor"), "--offline", "--strict-collection", "--no-progress",
        "--config", str(ROOT / ".github" / "zizmor.yml"), *map(str, AUDITED),
    ])
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "No findings to report" in proc.stdout, proc.stdout


def test_zizmor_flags_a_template_injection(tmp_path):
    wf = tmp_path / ".github" / "workflows"
    wf.mkdir(parents=True)
    (wf / "bad.yml").write_text(BROKEN)
    proc = _run([_tool("zizmor"), "--offline", "--no-progress", str(wf / "bad.yml")],
                cwd=tmp_path)
    assert proc.returncode != 0, proc.stdout + proc.stderr
    assert "template-injection" in proc.stdout, proc.stdout
