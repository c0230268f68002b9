"""``scripts/demo`` end to end: both runs behave, the result and summary files stay, and the
``neens report`` command it prints works on them."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
from pathlib import Path

from tests.helpers import ROOT


def test_the_demo_leaves_its_files_and_the_printed_report_command_works(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("NEENS_", "OTEL_", "GITHUB_", "GITLAB_", "CI_"))}
    env["NEENS_DEMO_OUT"] = str(tmp_path / "out")
    proc = subprocess.run([str(ROOT / "scripts" / "demo")], env=env, cwd=ROOT,
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    result = tmp_path / "out" / "result.json"
    summary = tmp_path / "out" / "summary.md"
    assert json.loads(result.read_text())["exitCode"] == 1
    assert "Blocked" in summary.read_text()
    last = proc.stderr.strip().splitlines()[-1]
    assert last.startswith("demo: try: ")
    command = shlex.split(last.removeprefix("demo: try: "))
    assert command[:2] == [".venv/bin/neens", "report"] and command[2] == str(result)
    shown = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=60, env=env)
    assert shown.returncode == 0 and "Blocked" in shown.stdout, shown.stderr
