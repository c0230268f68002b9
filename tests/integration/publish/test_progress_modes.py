"""The running comment in modes push, stress and sweep: posted before the job's first piece
of work on the server (no run, suite or sweep exists yet when it arrives) and edited in place
into the verdict (one comment, two writes). ``entrypoint.py`` as a real process, the real
sandbox, HTTP agents and OpenTelemetry agents, the fake GitHub and GitLab APIs."""

from __future__ import annotations

import re
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.fakes.github_server import FakeGitHub
from tests.fakes.gitlab_server import FakeGitLab
from tests.fakes.recording import Reply, Request
from tests.helpers import AGENT, PY, ROOT, Sandbox, db_count, wait_for
from tests.integration.publish.test_entrypoint_modes import (  # noqa: F401 - the fixture
    GH_TOKEN,
    GL_TOKEN,
    SWEEP_AGENT,
    GitHubJob,
    _clean_env,
    world,
)

WORK_TABLES = ("runs", "scenario_suites", "sweeps")
JOB_URL = "https://github.example/acme/agent/actions/runs/77"
STARTED = r"started \d{4}-\d\d-\d\d \d\d:\d\d UTC for commit `cccccccccccc`"


def work_done(sb: Sandbox) -> dict[str, int]:
    """What the server holds of anyone's work: runs, scenario suites, sweeps."""
    return {table: db_count(sb, table) for table in WORK_TABLES}


class _Watching:
    """A fake platform that notes the sandbox's work when the first comment (``POST`` to a
    path ending in ``suffix``) arrives."""

    suffix = ""

    def watch(self, sb: Sandbox) -> None:
        self.sb = sb
        self.at_first_post: dict[str, int] | None = None

    def noted(self, req: Request) -> None:
        if (req.method == "POST" and req.path.endswith(self.suffix)
                and self.at_first_post is None):
            self.at_first_post = work_done(self.sb)


class WatchingGitHub(_Watching, FakeGitHub):
    """The fake GitHub, noting the sandbox's work when the first comment is posted."""

    suffix = "/comments"

    def __init__(self, sb: Sandbox) -> None:
        super().__init__(token=GH_TOKEN)
        self.watch(sb)

    def handle(self, req: Request) -> Reply:
        self.noted(req)
        return super().handle(req)


class WatchingGitLab(_Watching, FakeGitLab):
    """The fake GitLab, noting the sandbox's work when the first note is posted."""

    suffix = "/notes"

    def __init__(self, sb: Sandbox) -> None:
        super().__init__(token=GL_TOKEN)
        self.watch(sb)

    def handle(self, req: Request) -> Reply:
        self.noted(req)
        return super().handle(req)


@pytest.fixture
def gh(world: Sandbox) -> Iterator[WatchingGitHub]:  # noqa: F811 - the imported fixture
    server = WatchingGitHub(world)
    server.start()
    yield server
    server.stop()


def one_comment_two_writes(gh: WatchingGitHub, before: dict[str, int]) -> tuple[str, str]:
    """The running body (first write) and the final one (second write, the same comment)."""
    posts = gh.calls("POST", "/issues/7/comments")
    patches = gh.calls("PATCH", "/issues/comments/")
    assert len(posts) == 1 and len(patches) == 1, (len(posts), len(patches))
    assert gh.requests.index(posts[0]) < gh.requests.index(patches[0])
    assert gh.at_first_post == before  # nothing was created on the server yet
    comments = gh.comments(7)
    assert len(comments) == 1
    first, final = posts[0].body["body"], comments[0]["body"]
    assert first.splitlines()[0] == final.splitlines()[0]  # the same marker, edited in place
    assert JOB_URL in first
    assert "running" not in final.split("\n", 1)[1].lower().split("<sub>")[0]
    return first, final


def test_push_mode_running_comment_before_the_run_then_the_verdict(
        world: Sandbox, gh: WatchingGitHub, tmp_path: Path) -> None:  # noqa: F811
    job = GitHubJob(world, gh, tmp_path)
    before = work_done(world)
    proc = job.run({"MODE": "push", "AGENT-CONNECTION": "conn_good", "DATASET": "ds_refunds",
                    "VERSION-LABEL": "push-progress"})
    assert proc.returncode == 0, proc.stderr[-4000:]
    first, final = one_comment_two_writes(gh, before)
    assert re.search(r"⏳ \*\*Neens push eval running\*\*: Neens calls `conn_good` for each "
                     rf"item of `ds_refunds`…, {STARTED}", first), first
    assert "mode=push" in first and "✅ Passed" in final
    assert work_done(world)["runs"] == before["runs"] + 1


def test_stress_mode_running_comment_before_the_suite_then_the_verdict(
        world: Sandbox, gh: WatchingGitHub, tmp_path: Path) -> None:  # noqa: F811
    job = GitHubJob(world, gh, tmp_path)
    before = work_done(world)
    proc = job.run({"MODE": "stress", "FAILURE-MODES": "fm_refund\nfm_leak\n",
                    "COMMAND": f"{PY} {AGENT}", "VERSION-LABEL": "stress-progress",
                    "READY-TIMEOUT": "120", "CONCURRENCY": "3"}, AGENT_MODE="good")
    assert proc.returncode == 0, proc.stderr[-4000:]
    first, final = one_comment_two_writes(gh, before)
    assert re.search(r"⏳ \*\*Neens stress test running\*\*: generating and running stress "
                     r"scenarios for 2 failure modes \(`fm_refund`, `fm_leak`\)…, "
                     + STARTED, first), first
    assert "mode=stress" in first and "Passed" in final
    assert work_done(world)["scenario_suites"] == before["scenario_suites"] + 1


def test_sweep_mode_running_comment_before_the_sweep_then_the_verdict(
        world: Sandbox, gh: WatchingGitHub, tmp_path: Path) -> None:  # noqa: F811
    job = GitHubJob(world, gh, tmp_path)
    before = work_done(world)
    proc = job.run({"MODE": "sweep", "ARMS": "big=gpt-4o\nsmall=gpt-4o-mini",
                    "DATASET": "ds_sweep", "K": "1", "COMMAND": f"{PY} {SWEEP_AGENT}",
                    "CONCURRENCY": "4", "VERSION-LABEL": "sweep-progress"},
                   SWEEP_BAD_MODELS="gpt-4o")
    assert proc.returncode == 0, proc.stderr[-4000:]
    first, final = one_comment_two_writes(gh, before)
    assert re.search(r"⏳ \*\*Neens sweep running\*\*: sweeping 2 variants \(`big`, `small`\) "
                     rf"over `ds_sweep`, 1 repetition each…, {STARTED}", first), first
    assert "mode=sweep" in first and "Arm verdicts" in final
    assert work_done(world)["sweeps"] == before["sweeps"] + 1


def test_gitlab_push_mode_running_note_then_the_verdict_in_the_same_note(
        world: Sandbox, tmp_path: Path) -> None:  # noqa: F811
    gl = WatchingGitLab(world)
    gl.start()
    try:
        project = tmp_path / "project"
        project.mkdir()
        env = _clean_env(
            world, GITLAB_CI="true", CI="true", CI_PROJECT_DIR=str(project),
            CI_API_V4_URL=gl.api_url, CI_PROJECT_ID="42", CI_MERGE_REQUEST_IID="5",
            CI_JOB_NAME="neens-push", CI_COMMIT_SHA="d" * 40,
            CI_JOB_URL="https://gitlab.example/g/p/-/jobs/9", NEENS_GITLAB_TOKEN=GL_TOKEN,
            NEENS_API_KEY=world.api_key, NEENS_INPUT_BASE_URL=world.url,
            NEENS_INPUT_MODE="push", NEENS_INPUT_AGENT_CONNECTION="conn_good",
            NEENS_INPUT_DATASET="ds_refunds", NEENS_INPUT_VERSION_LABEL="gl-progress",
            NEENS_INPUT_POLL_INTERVAL="0.5",
        )
        before = work_done(world)
        proc = subprocess.run([PY, str(ROOT / "entrypoint.py")], env=env, cwd=project,
                              capture_output=True, text=True, timeout=400)
        assert proc.returncode == 0, proc.stderr[-4000:]
        posts = [r for r in gl.requests if r.method == "POST" and r.path.endswith("/notes")]
        edits = [r for r in gl.requests if r.method == "PUT" and "/notes/" in r.path]
        assert len(posts) == 1 and len(edits) == 1
        assert gl.requests.index(posts[0]) < gl.requests.index(edits[0])
        assert gl.at_first_post == before
        first = posts[0].body["body"]
        assert re.search(r"⏳ \*\*Neens push eval running\*\*: Neens calls `conn_good` for "
                         r"each item of `ds_refunds`…, started .* UTC for commit `dddddddddddd` · "
                         r"\[follow it in the CI job\]\(https://gitlab.example/g/p/-/jobs/9\)",
                         first), first
        notes = gl.mr_notes("5")
        assert len(notes) == 1 and "Passed" in notes[0]["body"]
        assert notes[0]["body"].splitlines()[0] == first.splitlines()[0]
    finally:
        gl.stop()


def test_sigterm_during_a_sweep_heads_its_report_with_did_not_finish(
        world: Sandbox, gh: WatchingGitHub, tmp_path: Path) -> None:  # noqa: F811
    job = GitHubJob(world, gh, tmp_path)
    for name in ("output.txt", "summary.md"):
        (tmp_path / name).write_text("")
    env = _clean_env(
        world, GITHUB_ACTIONS="true", CI="true", GITHUB_WORKSPACE=str(job.ws),
        GITHUB_OUTPUT=str(tmp_path / "output.txt"),
        GITHUB_STEP_SUMMARY=str(tmp_path / "summary.md"), GITHUB_EVENT_PATH=str(job.event),
        GITHUB_EVENT_NAME="pull_request", GITHUB_REPOSITORY=gh.full_name,
        GITHUB_API_URL=gh.api_url, GITHUB_SERVER_URL="https://github.example",
        GITHUB_WORKFLOW="CI", GITHUB_JOB="eval", GITHUB_RUN_ID="77", GITHUB_SHA="c" * 40,
        AGENT_MODE="hang", AGENT_HANG_S="120",
        **{"INPUT_API-KEY": world.api_key, "INPUT_BASE-URL": world.url,
           "INPUT_GITHUB-TOKEN": GH_TOKEN, "INPUT_MODE": "sweep",
           "INPUT_ARMS": "big=gpt-4o\nsmall=gpt-4o-mini", "INPUT_DATASET": "ds_sweep",
           "INPUT_K": "1", "INPUT_COMMAND": f"{PY} {AGENT}", "INPUT_TIMEOUT": "150",
           "INPUT_VERSION-LABEL": "sweep-sigterm"})
    proc = subprocess.Popen([PY, str(ROOT / "entrypoint.py")], env=env, cwd=job.ws,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert wait_for(lambda: bool(gh.calls("POST", "/issues/7/comments")), timeout=90)
        assert wait_for(lambda: work_done(world)["sweeps"] > 0, timeout=90)
        time.sleep(1)  # the agents are hanging now
        proc.send_signal(signal.SIGTERM)
        _out, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, err[-3000:]
    comments = gh.comments(7)
    assert len(comments) == 1
    body = comments[0]["body"]
    assert "⏳" not in body and "Neens sweep running" not in body
    assert "⚠️ **The job did not finish**: interrupted" in body
    assert "no verdict for commit `cccccccccccc`" in body and JOB_URL in body
