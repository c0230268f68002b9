"""``neens ci`` as a real process, the way a host step (``host/action.yml``) or a GitLab script
line runs it: the same front door as the container's entry point, so the same summary,
outputs, PR comment, MR note, dotenv and JUnit for the same run. Real sandbox, real
OpenTelemetry agents, fake GitHub/GitLab APIs."""

from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.fakes.github_server import FakeGitHub, parse_outputs
from tests.fakes.gitlab_server import FakeGitLab
from tests.helpers import AGENT, PY, Sandbox
from tests.integration.publish.test_entrypoint import (
    GH_TOKEN,
    GL_TOKEN,
    _base_env,
    _github_env,
    _run,
)

NEENS = str(Path(PY).parent / "neens")


@pytest.fixture
def gh() -> Iterator[FakeGitHub]:
    server = FakeGitHub(token=GH_TOKEN).start()
    yield server
    server.stop()


@pytest.fixture
def gl() -> Iterator[FakeGitLab]:
    server = FakeGitLab(token=GL_TOKEN).start()
    yield server
    server.stop()


def _neens_ci(args: list[str], env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([NEENS, "ci", *args], env=env, cwd=cwd, capture_output=True,
                          text=True, timeout=300)


def normalise(text: str) -> str:
    """A report with what differs between two runs of the same inputs (ids, times, the
    sticky marker's leg) blanked out."""
    text = re.sub(r"ppr(\\?_)[A-Za-z0-9_\\]+", "ppr_ID", text)
    text = re.sub(r"leg=[^ ]*", "leg=LEG", text)
    text = re.sub(r"\d+(\.\d+)?\s?(ms|s)\b", "T", text)
    text = re.sub(r'time="[0-9.]+"', 'time="T"', text)
    return re.sub(r"\d{4}-\d\d-\d\dT[0-9:.]+Z?", "DATE", text)


def test_host_neens_ci_matches_the_container_front_door_on_github(
        sandbox: Sandbox, gh: FakeGitHub, tmp_path: Path) -> None:
    results = {}
    for door in ("container", "host"):
        tmp = tmp_path / door
        tmp.mkdir()
        env = _github_env(sandbox, gh, tmp, "good")
        env["INPUT_MATRIX-KEY"] = door  # one sticky comment each, on the same PR
        ws = Path(env["GITHUB_WORKSPACE"])
        if door == "container":
            proc = _run(env, ws)
        else:  # what host/action.yml does: NEENS_INPUT_* variables, then `neens ci`
            env = {("NEENS_INPUT_" + k[6:].replace("-", "_") if k.startswith("INPUT_") else k):
                   v for k, v in env.items()}
            proc = _neens_ci([], env, ws)
        assert proc.returncode == 0, proc.stderr[-3000:]
        assert proc.stderr.count(sandbox.api_key) == 1  # only in its ::add-mask::
        results[door] = (parse_outputs((tmp / "output.txt").read_text()),
                         (tmp / "summary.md").read_text(), (ws / "neens-junit.xml").read_text())
    comments = gh.comments(7)
    assert len(comments) == 2, [c["body"][:200] for c in comments]
    (box_out, box_summary, box_junit), (host_out, host_summary, host_junit) = (
        results["container"], results["host"])
    assert set(box_out) == set(host_out)
    for key in ("exit-code", "verdict", "pass-rate", "regressions", "result-json"):
        assert box_out[key] == host_out[key], key
    assert box_out["run-id"] != host_out["run-id"]  # two runs, reported the same way
    assert normalise(box_summary) == normalise(host_summary)
    assert normalise(comments[0]["body"]) == normalise(comments[1]["body"])
    assert box_summary.startswith("### ✅ Passed")
    assert normalise(box_junit) == normalise(host_junit)


def test_gitlab_script_line_writes_note_dotenv_and_junit(
        sandbox: Sandbox, gl: FakeGitLab, tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    env = _base_env(
        sandbox,
        GITLAB_CI="true", CI="true", CI_PROJECT_DIR=str(project), CI_API_V4_URL=gl.api_url,
        CI_PROJECT_ID="42", CI_MERGE_REQUEST_IID="5", CI_JOB_NAME="neens-host",
        CI_COMMIT_SHA="b" * 40, CI_PROJECT_URL="https://gitlab.example/g/p",
        CI_JOB_URL="https://gitlab.example/g/p/-/jobs/1",
        NEENS_GITLAB_TOKEN=GL_TOKEN, NEENS_API_KEY=sandbox.api_key,
        NEENS_BASE_URL=sandbox.url, AGENT_MODE="bad",
    )
    # script: - neens ci --dataset ds_refunds --min-pass-rate 0.9 -- python agent.py
    proc = _neens_ci(["--dataset", "ds_refunds", "--version-label", "gl-host",
                      "--min-pass-rate", "0.9", "--max-regressions", "0", "--concurrency", "3",
                      "--poll-interval", "0.5", "--", PY, str(AGENT)], env, project)
    assert proc.returncode == 1, proc.stderr[-3000:]
    assert not any(line.startswith("::") for line in proc.stderr.splitlines())
    dotenv = (project / "neens.env").read_text()
    values = dict(line.split("=", 1) for line in dotenv.splitlines())
    assert values["NEENS_VERDICT"] == "blocked" and values["NEENS_EXIT_CODE"] == "1"
    assert values["NEENS_RUN_ID"].startswith("ppr_")
    junit = (project / "neens-junit.xml").read_text()
    assert "<failure" in junit
    notes = gl.mr_notes("5")
    assert len(notes) == 1 and "❌ Blocked" in notes[0]["body"]
    assert "job=neens-host" in notes[0]["body"] or "neens-host" in notes[0]["body"]
    run = sandbox.get(f"/preprod-evals/{values['NEENS_RUN_ID']}").json()
    assert run["buildVerdict"] == "blocked" and run["gitSha"] == "b" * 40
    for text in (dotenv, junit, notes[0]["body"], proc.stdout, proc.stderr):
        assert sandbox.api_key not in text and GL_TOKEN not in text
    assert os.path.getsize(project / "neens.env") < 5 * 1024
