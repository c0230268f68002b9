"""``neens report RESULT.json`` re-renders a saved result with no CI environment."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from neens_action.report.render.json import dumps, eval_document
from neens_action.report.render.markdown import render_summary
from tests.unit.report import cases


def _saved(tmp_path: Path) -> tuple[Path, str]:
    outcome = cases.regressions()
    report = cases._eval(lambda: outcome)()
    path = tmp_path / "neens-result.json"
    path.write_text(dumps(eval_document(outcome, report)), encoding="utf-8")
    return path, render_summary(report)


def _neens(*args: str) -> subprocess.CompletedProcess[str]:
    env = {"PATH": "/usr/bin:/bin"}  # no CI variables, no key, no server
    return subprocess.run([sys.executable, "-m", "neens_action", "report", *args],
                          capture_output=True, text=True, env=env, timeout=60)


def test_report_reproduces_the_job_summary_byte_for_byte(tmp_path: Path) -> None:
    path, summary = _saved(tmp_path)
    out = _neens(str(path))
    assert out.returncode == 0, out.stderr
    assert out.stdout == summary
    assert "[full summary in the CI job](https://github.com/o/r/actions/runs/9)" in _neens(
        str(path), "--format", "comment").stdout
    assert "regressed" in _neens(str(path), "--format", "text").stdout
    assert "<testsuites" in _neens(str(path), "--format", "junit").stdout


def test_report_of_a_file_without_report_is_one_error_line(tmp_path: Path) -> None:
    path = tmp_path / "old.json"
    path.write_text(json.dumps({"format": 1}))
    out = _neens(str(path))
    assert out.returncode == 2
    assert out.stderr.count("\n") == 1 and "neens: error:" in out.stderr
