"""``doctor: true`` in the CI front door: the checks run first; a failure stops the step with
exit 2, the fix in the log, and the errored result still published."""

from __future__ import annotations

from pathlib import Path

from tests.fakes.github_server import FakeGitHub, parse_outputs
from tests.helpers import Sandbox
from tests.integration.publish.test_entrypoint import _github_env, _run, gh  # noqa: F401


def test_doctor_passes_then_the_run_goes_on(sandbox: Sandbox, gh: FakeGitHub,  # noqa: F811
                                            tmp_path: Path) -> None:
    env = _github_env(sandbox, gh, tmp_path, "good")
    env.update({"INPUT_DOCTOR": "true", "INPUT_COMMENT": "off"})
    proc = _run(env, tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "neens doctor: " + sandbox.url in proc.stderr
    assert "  ok   API key accepted" in proc.stderr
    assert "  ok   exporter headers carry the key" in proc.stderr
    assert parse_outputs((tmp_path / "output.txt").read_text())["verdict"] == "passed"
    assert sandbox.api_key not in proc.stderr.replace(f"::add-mask::{sandbox.api_key}", "")


def test_doctor_failure_is_exit_2_with_the_fix_and_nothing_runs(
        sandbox: Sandbox, gh: FakeGitHub, tmp_path: Path) -> None:  # noqa: F811
    env = _github_env(sandbox, gh, tmp_path, "good")
    env.update({"INPUT_DOCTOR": "true", "INPUT_COMMENT": "off",
                "OTEL_EXPORTER_OTLP_HEADERS": "Authorization=Bearer nk_live_not_the_key"})
    proc = _run(env, tmp_path)
    assert proc.returncode == 2, proc.stderr
    assert "FAIL OTLP endpoint reachable and accepts the key" in proc.stderr
    assert "fix: export OTEL_EXPORTER_OTLP_HEADERS" in proc.stderr
    assert "Created run" not in proc.stderr and "Running " not in proc.stderr  # nothing ran
    outputs = parse_outputs((tmp_path / "output.txt").read_text())
    assert outputs["verdict"] == "errored" and outputs["exit-code"] == "2"
    assert "neens doctor: 2 check(s) failed" in (tmp_path / "summary.md").read_text()
