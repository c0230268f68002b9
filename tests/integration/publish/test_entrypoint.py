"""``python entrypoint.py`` as a real process, the way GitHub runs the Docker action and GitLab
runs the component: real sandbox, real OpenTelemetry agent processes, fake GitHub/GitLab APIs."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from tests.fakes.gh_runner_log import run_commands
from tests.fakes.github_server import FakeGitHub, parse_outputs
from tests.fakes.gitlab_server import FakeGitLab
from tests.helpers import AGENT, PY, ROOT, Sandbox

GH_TOKEN = "ghs_entrypoint_token_123"
GL_TOKEN = "glpat-entrypoint-token-456"


def _base_env(sandbox: Sandbox, **extra: str) -> dict[str, str]:
    env = sandbox.agent_env()
    for var in ("NEENS_BASE_URL", "NEENS_API_KEY", "OTEL_EXPORTER_OTLP_ENDPOINT",
                "OTEL_EXPORTER_OTLP_HEADERS"):
        env.pop(var, None)  # the action's inputs must be enough
    env.update(extra)
    return env


def _run(env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([PY, str(ROOT / "entrypoint.py")], env=env, cwd=cwd,
                          capture_output=True, text=True, timeout=300)


@pytest.fixture
def gh():
    server = FakeGitHub(token=GH_TOKEN).start()
    yield server
    server.stop()


@pytest.fixture
def gl():
    server = FakeGitLab(token=GL_TOKEN).start()
    yield server
    server.stop()


def _github_env(sandbox: Sandbox, gh: FakeGitHub, tmp: Path, mode: str) -> dict[str, str]:
    ws = tmp / "workspace"
    ws.mkdir(exist_ok=True)
    event = tmp / "event.json"
    event.write_text(json.dumps({"pull_request": {
        "number": 7, "head": {"repo": {"full_name": gh.full_name}, "sha": "a" * 40},
        "base": {"repo": {"full_name": gh.full_name}}}}))
    for name in ("output.txt", "summary.md"):
        (tmp / name).write_text("")
    return _base_env(
        sandbox,
        GITHUB_ACTIONS="true", CI="true", GITHUB_WORKSPACE=str(ws),
        GITHUB_OUTPUT=str(tmp / "output.txt"), GITHUB_STEP_SUMMARY=str(tmp / "summary.md"),
        GITHUB_EVENT_PATH=str(event), GITHUB_EVENT_NAME="pull_request",
        GITHUB_REPOSITORY=gh.full_name, GITHUB_API_URL=gh.api_url,
        GITHUB_SERVER_URL="https://github.example", GITHUB_WORKFLOW="CI", GITHUB_JOB="eval",
        GITHUB_RUN_ID="4242", GITHUB_SHA="a" * 40, GITHUB_REF="refs/pull/7/merge",
        **{
            "INPUT_COMMAND": f"{PY} {AGENT}",
            "INPUT_API-KEY": sandbox.api_key,
            "INPUT_BASE-URL": sandbox.url,
            "INPUT_DATASET": "ds_refunds",
            "INPUT_VERSION-LABEL": f"cand-{mode}",
            "INPUT_MAX-REGRESSIONS": "0",
            "INPUT_MIN-PASS-RATE": "0.9",
            "INPUT_CONCURRENCY": "3",
            "INPUT_POLL-INTERVAL": "0.5",
            "INPUT_POLL-TIMEOUT": "120",
            "INPUT_TIMEOUT": "60",
            "INPUT_GITHUB-TOKEN": GH_TOKEN,
            "INPUT_COMMENT": "update",
            "INPUT_SUMMARY": "true",
            "AGENT_MODE": mode,
        },
    )


def _no_secret(key: str, *texts: str) -> None:
    for text in texts:
        assert key not in text


def test_github_action_pass_then_fail_updates_one_comment(sandbox: Sandbox, gh: FakeGitHub,
                                                          tmp_path: Path) -> None:
    env = _github_env(sandbox, gh, tmp_path, "good")
    ws = Path(env["GITHUB_WORKSPACE"])
    first = _run(env, ws)
    assert first.returncode == 0, first.stderr[-3000:]
    log = first.stdout + first.stderr
    assert f"::add-mask::{sandbox.api_key}" in first.stderr
    assert f"::add-mask::{GH_TOKEN}" in first.stderr
    # the key appears in the log only where it is registered as a mask
    assert log.count(sandbox.api_key) == 1
    outputs = parse_outputs((tmp_path / "output.txt").read_text())
    assert outputs["exit-code"] == "0" and outputs["verdict"] == "passed"
    assert outputs["run-id"].startswith("ppr_") and outputs["pass-rate"] == "1.0000"
    assert outputs["regressions"] in ("0", "")
    assert outputs["result-json"] == "neens-result.json"
    result = json.loads((ws / "neens-result.json").read_text())
    assert result["runId"] == outputs["run-id"] and result["exitCode"] == 0
    assert outputs["comment-url"].startswith("https://github.example/acme/agent/pull/7")
    summary = (tmp_path / "summary.md").read_text()
    assert summary.startswith("### ✅ Passed: Pre-prod eval ppr\\_")
    comments = gh.comments(7)
    assert len(comments) == 1 and "✅ Passed" in comments[0]["body"]
    assert "https://github.example/acme/agent/actions/runs/4242" in comments[0]["body"]
    junit = (ws / "neens-junit.xml").read_text()
    assert 'failures="0"' in junit and 'errors="0"' in junit
    _no_secret(sandbox.api_key, summary, comments[0]["body"], junit,
               (tmp_path / "output.txt").read_text(), (ws / "neens-result.json").read_text(),
               (ws / "neens-summary.md").read_text())
    _no_secret(GH_TOKEN, summary, (tmp_path / "output.txt").read_text())

    # a regressing candidate: exit 1, the same comment edited, annotations, one more summary
    env = _github_env(sandbox, gh, tmp_path, "bad")
    (tmp_path / "summary.md").write_text("")
    second = _run(env, ws)
    assert second.returncode == 1, second.stderr[-3000:]
    assert "::error title=Neens gate blocked the build::" in second.stderr
    outputs = parse_outputs((tmp_path / "output.txt").read_text())
    assert outputs["exit-code"] == "1" and outputs["verdict"] == "blocked"
    comments = gh.comments(7)
    assert len(comments) == 1 and "❌ Blocked" in comments[0]["body"]
    body = comments[0]["body"]
    assert "Failing items" in body
    # the evidence of a regressed item: the agent's actual answer and the expected output
    row = next(line for line in body.splitlines() if line.startswith("| it\\_2<br>"))
    # ($20 is a GitLab snippet reference: broken with a zero-width space)
    assert "Your refund of \\$\u206020.99 for order 7 has been approved." in row
    assert "| \\$\u206019.99 |" in row and "✗\u00a0correctness" in row
    # run 1: its "running" comment edited into the verdict; run 2: running, then the verdict
    assert len(gh.calls("PATCH")) == 3 and len(gh.calls("POST")) == 1
    summary = (tmp_path / "summary.md").read_text()
    assert "#### Failing items" in summary
    _no_secret(sandbox.api_key, summary, comments[0]["body"],
               (tmp_path / "output.txt").read_text(), (ws / "neens-junit.xml").read_text())
    assert (second.stdout + second.stderr).count(sandbox.api_key) == 1


def test_github_bad_input_is_one_error_line(sandbox: Sandbox, gh: FakeGitHub,
                                            tmp_path: Path) -> None:
    env = _github_env(sandbox, gh, tmp_path, "good")
    env["INPUT_MIN-PASS-RATE"] = "1.5"
    proc = _run(env, Path(env["GITHUB_WORKSPACE"]))
    assert proc.returncode == 2
    errors = [line for line in proc.stderr.splitlines() if line.startswith("::error")]
    assert errors == ["::error title=neens input::min-pass-rate: must be at most 1, got 1.5"]
    assert "Traceback" not in proc.stderr
    # the PR learns why too (tests/integration/publish/test_bad_input_comment.py)
    assert [c["body"].count("must be at most 1") for c in gh.comments(7)] == [1]


def test_github_rejected_key_names_the_input_not_the_flag(sandbox: Sandbox, gh: FakeGitHub,
                                                          tmp_path: Path) -> None:
    """The API's CLI wording (check --api-key / NEENS_API_KEY) reaches the Action user as
    the api-key input: in the annotation, the job summary, the PR comment and the log."""
    env = _github_env(sandbox, gh, tmp_path, "good")
    env["INPUT_API-KEY"] = "nk_live_wrong_key_for_this_neens"
    proc = _run(env, Path(env["GITHUB_WORKSPACE"]))
    assert proc.returncode == 2, proc.stderr[-3000:]
    summary = (tmp_path / "summary.md").read_text()
    body = gh.comments(7)[0]["body"]
    errors = [line for line in proc.stderr.splitlines() if line.startswith("::error")]
    assert len(errors) == 1 and "HTTP 401" in errors[0], proc.stderr
    log = proc.stderr.replace("::add-mask::nk_live_wrong_key_for_this_neens", "")
    for text in (errors[0], summary, body, log):
        assert "--api-key" not in text and "nk_live_wrong_key" not in text, text
    assert "check the api-key input" in errors[0]
    assert "check the api-key input" in summary and "check the api-key input" in body
    assert "Check the \\`api-key\\` input" not in summary  # How to fix, as code, unescaped
    assert "> - Check the API key (the `api-key` input or `NEENS_API_KEY`)" in summary


def test_github_install_failure_is_published_as_an_error(sandbox: Sandbox, gh: FakeGitHub,
                                                         tmp_path: Path) -> None:
    env = _github_env(sandbox, gh, tmp_path, "good")
    env["INPUT_INSTALL"] = "echo '::error::injected'; echo installing; exit 3"
    proc = _run(env, Path(env["GITHUB_WORKSPACE"]))
    assert proc.returncode == 2, proc.stderr[-3000:]
    lines = proc.stderr.splitlines()
    injected = lines.index("\u200b::error::injected")  # inert, and inside the shield
    stop = max(i for i, line in enumerate(lines[:injected])
               if line.startswith("::stop-commands::"))
    token = lines[stop].split("::")[2]
    assert stop < injected < lines.index(f"::{token}::")
    assert "::error title=Neens eval errored::the install command failed with exit code 3" \
        in proc.stderr
    assert "injected" not in [c.data for c in run_commands(proc.stderr)]
    outputs = parse_outputs((tmp_path / "output.txt").read_text())
    assert outputs["exit-code"] == "2" and outputs["verdict"] == "errored"
    assert "💥 Errored" in gh.comments(7)[0]["body"]


def test_gitlab_component_writes_note_dotenv_and_junit(sandbox: Sandbox, gl: FakeGitLab,
                                                       tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    env = _base_env(
        sandbox,
        GITLAB_CI="true", CI="true", CI_PROJECT_DIR=str(project), CI_API_V4_URL=gl.api_url,
        CI_PROJECT_ID="42", CI_MERGE_REQUEST_IID="5", CI_JOB_NAME="neens-eval",
        CI_COMMIT_SHA="b" * 40, CI_PROJECT_URL="https://gitlab.example/g/p",
        CI_JOB_URL="https://gitlab.example/g/p/-/jobs/1",
        NEENS_GITLAB_TOKEN=GL_TOKEN, NEENS_API_KEY=sandbox.api_key,
        NEENS_INPUT_BASE_URL=sandbox.url, NEENS_INPUT_COMMAND=f"{PY} {AGENT}",
        NEENS_INPUT_DATASET="ds_refunds", NEENS_INPUT_VERSION_LABEL="gl-bad",
        NEENS_INPUT_MIN_PASS_RATE="0.9", NEENS_INPUT_POLL_INTERVAL="0.5",
        NEENS_INPUT_CONCURRENCY="3", AGENT_MODE="bad",
    )
    proc = _run(env, project)
    assert proc.returncode == 1, proc.stderr[-3000:]
    assert "::" not in "".join(line[:2] for line in proc.stderr.splitlines())  # no commands
    dotenv = (project / "neens.env").read_text()
    values = dict(line.split("=", 1) for line in dotenv.splitlines())
    assert values["NEENS_VERDICT"] == "blocked" and values["NEENS_EXIT_CODE"] == "1"
    assert values["NEENS_RUN_ID"].startswith("ppr_")
    assert set(values) == {"NEENS_VERDICT", "NEENS_EXIT_CODE", "NEENS_RUN_ID",
                           "NEENS_PASS_RATE", "NEENS_REGRESSIONS"}
    junit = (project / "neens-junit.xml").read_text()
    assert "<failure" in junit
    notes = gl.mr_notes("5")
    assert len(notes) == 1 and "❌ Blocked" in notes[0]["body"]
    # the footer's "full summary" is the summary artifact, not the job log
    artifact = "https://gitlab.example/g/p/-/jobs/1/artifacts/file/neens-summary.md"
    assert f"[full summary in the CI job]({artifact})" in notes[0]["body"]
    assert "(https://gitlab.example/g/p/-/jobs/1)" not in notes[0]["body"]
    # the "running" note came first and was edited into the verdict: one note, two writes
    posted = [r for r in gl.calls("POST") if r.path.endswith("/merge_requests/5/notes")]
    edited = [r for r in gl.calls("PUT") if "/merge_requests/5/notes/" in r.path]
    assert len(posted) == 1 and len(edited) == 1, [r.path for r in gl.requests]
    assert "⏳ **Neens eval running**" in posted[0].body["body"]
    assert "against `ds_refunds`" in posted[0].body["body"]
    for text in (dotenv, junit, notes[0]["body"], proc.stdout, proc.stderr,
                 (project / "neens-result.json").read_text(),
                 (project / "neens-summary.md").read_text()):
        assert sandbox.api_key not in text and GL_TOKEN not in text
    assert os.path.getsize(project / "neens.env") < 5 * 1024


def test_arguments_run_the_neens_cli(tmp_path: Path) -> None:
    """Jenkins style: `docker run IMAGE eval run ...` / `docker run IMAGE neens --version`."""
    for args in (["--version"], ["neens", "--version"]):
        proc = subprocess.run([PY, str(ROOT / "entrypoint.py"), *args], capture_output=True,
                              text=True, timeout=60, cwd=tmp_path)
        assert proc.returncode == 0, proc.stderr
        assert proc.stdout.strip().startswith("neens ")
    proc = subprocess.run([PY, str(ROOT / "entrypoint.py"), "eval", "run", "--run-id", "x"],
                          capture_output=True, text=True, timeout=60, cwd=tmp_path,
                          env={k: v for k, v in os.environ.items() if not k.startswith("NEENS_")})
    assert proc.returncode == 2 and "Traceback" not in proc.stderr


def test_github_action_crashing_agents_are_agent_failures(sandbox: Sandbox, gh: FakeGitHub,
                                                          tmp_path: Path) -> None:
    env = _github_env(sandbox, gh, tmp_path, "good")
    ws = Path(env["GITHUB_WORKSPACE"])
    assert _run(env, ws).returncode == 0  # a baseline every item passed
    env = _github_env(sandbox, gh, tmp_path, "crash")
    crashed = _run(env, ws)
    # every agent failed: nothing was measured, a run error (fails closed)
    assert crashed.returncode == 2, crashed.stderr[-3000:]
    body = gh.comments(7)[0]["body"]
    assert "6 of 6 agents crashed (exit code 3)" in body
    assert "regression" not in body.lower()
    assert "agent: crashing on purpose" in (tmp_path / "summary.md").read_text()
