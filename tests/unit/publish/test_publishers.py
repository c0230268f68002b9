"""Publishers with the comment switched off (no network): files, summary, annotations,
outputs, dotenv, agent output echo."""

from __future__ import annotations

import io
import json
from pathlib import Path

from neens_action.outcome import Invocation, Outcome
from neens_action.publish.actions import Commands, GuardedStream
from neens_action.publish.publishers import (
    FilesPublisher,
    GitHubPublisher,
    GitLabPublisher,
    PublishConfig,
)
from tests.fakes.gh_runner_log import run_commands
from tests.fakes.github_server import parse_outputs
from tests.unit.report import samples

DOC = {"runId": "ppr_124", "exitCode": 1}


def _config(tmp: Path, environ: dict[str, str], lines: list[str], **kw) -> PublishConfig:
    ws = tmp / "ws"
    ws.mkdir(exist_ok=True)
    values = dict(environ=environ, workspace=ws, result_file=ws / "neens-result.json",
                  summary_file=ws / "neens-summary.md", dotenv_file=ws / "neens.env",
                  comment="off", log=lines.append)
    values.update(kw)
    return PublishConfig(**values)


def _outcome() -> Outcome:
    return Outcome(mode="run", invocations=[
        Invocation("it_1", "in", returncode=0, output="fine"),
        Invocation("it_2", "in", returncode=3, error="rc=3", output="boom\n::error::injected"),
    ])


def test_github_publisher(tmp_path: Path) -> None:
    out_file, summary = tmp_path / "out.txt", tmp_path / "summary.md"
    env = {"GITHUB_OUTPUT": str(out_file), "GITHUB_STEP_SUMMARY": str(summary)}
    raw = io.StringIO()
    stream = GuardedStream(raw)
    commands = Commands(stream)
    lines: list[str] = []
    # the publisher logs through the same stream as the commands, as ci.py wires it
    cfg = _config(tmp_path, env, lines, log=lambda s: print(s, file=stream))
    commands.stop()  # ci.py pauses commands from the first line to the last
    outputs = GitHubPublisher(cfg, commands).publish(samples.failed(), _outcome(), DOC)

    assert outputs["exit-code"] == "1" and outputs["verdict"] == "blocked"
    assert outputs["result-json"] == "neens-result.json" and outputs["comment-url"] == ""
    assert parse_outputs(out_file.read_text()) == outputs
    assert json.loads((cfg.workspace / "neens-result.json").read_text()) == DOC
    assert summary.read_text().startswith("### ❌ Blocked")
    assert (cfg.workspace / "neens-summary.md").read_text() == summary.read_text()

    log = raw.getvalue().splitlines()
    headline = samples.failed().headline.replace("%", "%25")
    assert "::error title=Neens gate blocked the build::" + headline in log
    assert "::error title=Neens gate::regressions 1 > max_regressions 0" in log
    assert any(x.startswith("::error title=Neens policy::max_abs_failures") for x in log)
    assert any(x.startswith("::warning title=Neens policy (warn)::latency") for x in log)
    # the failing agent's output sits inside a group and stop-commands; the passing one is
    # not echoed
    group = log.index("::group::Agent output of 1 failing item(s)")
    stop = log[group + 1]
    assert stop.startswith("::stop-commands::")
    injected = log.index("\u200b::error::injected")  # inert, and shown while paused
    assert group < injected < log.index(f"::{stop.split('::')[2]}::") < log.index("::endgroup::")
    assert "fine" not in log
    assert commands.paused  # still paused: the front door resumes at its very end
    ran = run_commands(raw.getvalue())
    assert {c.name for c in ran} == {"error", "warning", "group", "endgroup"}
    assert "injected" not in [c.data for c in ran]


def test_policy_only_block_does_not_annotate_the_passing_gate_reasons(tmp_path: Path) -> None:
    report = samples.failed()
    report.gate_passed, report.reasons = True, ["all gate checks passed"]
    stream = io.StringIO()
    cfg = _config(tmp_path, {}, [], log=lambda s: print(s, file=stream))
    GitHubPublisher(cfg, Commands(stream)).publish(report, None, DOC)
    log = stream.getvalue().splitlines()
    assert not any("all gate checks passed" in line for line in log if line.startswith("::error"))
    assert any(x.startswith("::error title=Neens policy::max_abs_failures") for x in log)


def test_github_summary_off_and_full(tmp_path: Path) -> None:
    summary = tmp_path / "summary.md"
    summary.write_text("x" * (1024 * 1024 - 100))
    stream = io.StringIO()
    lines: list[str] = []
    cfg = _config(tmp_path, {"GITHUB_STEP_SUMMARY": str(summary)}, lines)
    GitHubPublisher(cfg, Commands(stream)).publish(samples.passed(), None, DOC)
    assert summary.stat().st_size == 1024 * 1024 - 100
    assert "::warning::the job summary is full" in stream.getvalue()

    summary.write_text("")
    cfg.summary = False
    GitHubPublisher(cfg, Commands(io.StringIO())).publish(samples.passed(), None, DOC)
    assert summary.read_text() == ""


def test_github_summary_truncated_to_the_room_left(tmp_path: Path) -> None:
    summary = tmp_path / "summary.md"
    summary.write_text("e" * (1024 * 1024 - 3000))
    cfg = _config(tmp_path, {"GITHUB_STEP_SUMMARY": str(summary)}, [])
    report = samples.hostile(n_items=200)
    GitHubPublisher(cfg, Commands(io.StringIO())).publish(report, None, DOC)
    assert summary.stat().st_size <= 1024 * 1024
    assert "truncated" in summary.read_text(encoding="utf-8")[-300:]


def test_gitlab_publisher_writes_dotenv_and_echoes_in_a_section(tmp_path: Path) -> None:
    lines: list[str] = []
    cfg = _config(tmp_path, {}, lines)
    outputs = GitLabPublisher(cfg).publish(samples.failed(), _outcome(), DOC)
    dotenv = (cfg.workspace / "neens.env").read_text().splitlines()
    assert dotenv == ["NEENS_VERDICT=blocked", "NEENS_EXIT_CODE=1", "NEENS_RUN_ID=ppr_124",
                      "NEENS_PASS_RATE=0.3333", "NEENS_REGRESSIONS=1"]
    assert outputs["result-json"] == "neens-result.json"
    assert "section_start" in lines[0] and "section_end" in lines[-1]
    assert "boom\n::error::injected" in lines  # GitLab runs no commands from the log


def test_gitlab_without_token_logs_a_notice(tmp_path: Path) -> None:
    lines: list[str] = []
    cfg = _config(tmp_path, {"CI_API_V4_URL": "http://127.0.0.1:9/api/v4", "CI_PROJECT_ID": "1",
                             "CI_MERGE_REQUEST_IID": "2"}, lines, comment="update")
    outputs = GitLabPublisher(cfg).publish(samples.passed(), None, DOC)
    assert outputs["comment-url"] == ""
    assert any(x.startswith("neens: notice: NEENS_GITLAB_TOKEN is not set") for x in lines)


def test_files_publisher_for_jenkins(tmp_path: Path) -> None:
    lines: list[str] = []
    cfg = _config(tmp_path, {}, lines, summary_file=None, result_file=tmp_path / "elsewhere.json")
    outputs = FilesPublisher(cfg).publish(samples.errored(), Outcome(mode="run"), DOC)
    assert outputs["verdict"] == "errored" and outputs["exit-code"] == "2"
    assert outputs["result-json"] == str(tmp_path / "elsewhere.json")  # outside the workspace
    assert not (cfg.workspace / "neens-summary.md").exists()


def test_unwritable_artifact_is_a_warning(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    lines: list[str] = []
    cfg = _config(tmp_path, {}, lines, result_file=blocker / "x.json")
    outputs = FilesPublisher(cfg).publish(samples.passed(), None, DOC)
    assert outputs["result-json"] == ""
    assert any(x.startswith("neens: warning: could not write") for x in lines)


def test_gitlab_artifact_url_only_for_a_written_file_in_the_project(tmp_path: Path) -> None:
    from neens_action.publish.gitlab import artifact_url

    job = "https://gitlab.example/g/p/-/jobs/7"
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "my summary.md").write_text("x")
    assert artifact_url(job, tmp_path, tmp_path / "out" / "my summary.md") == (
        f"{job}/artifacts/file/out/my%20summary.md")
    assert artifact_url(job, tmp_path, tmp_path / "missing.md") is None
    assert artifact_url(job, tmp_path / "out", tmp_path / "elsewhere.md") is None
    assert artifact_url("", tmp_path, tmp_path / "out" / "my summary.md") is None
