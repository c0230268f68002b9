"""A job that does not finish never leaves "⏳ running" (nor an older commit's verdict) as its
PR comment: SIGTERM (exit 130), a run error after the running comment (exit 2) and a crash in
our own code each replace it with a note saying the job did not finish, why and the job link;
a SIGKILL, which leaves no chance to write, leaves a running comment naming the commit and
its start time, and it replaced the previous commit's verdict. ``entrypoint.py`` as a real
process, the real sandbox and agents, the fake GitHub REST API."""

from __future__ import annotations

import signal
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.fakes.github_server import FakeGitHub
from tests.fakes.gitlab_server import FakeGitLab
from tests.helpers import AGENT, PY, ROOT, Sandbox, wait_for
from tests.integration.publish.test_entrypoint import (
    GH_TOKEN,
    GL_TOKEN,
    _base_env,
    _github_env,
    _run,
)

JOB_URL = "https://github.example/acme/agent/actions/runs/4242"


@pytest.fixture
def gh() -> Iterator[FakeGitHub]:
    server = FakeGitHub(token=GH_TOKEN).start()
    yield server
    server.stop()


def _start(env: dict[str, str], argv: list[str] | None = None) -> subprocess.Popen[str]:
    return subprocess.Popen(argv or [PY, str(ROOT / "entrypoint.py")], env=env,
                            cwd=env["GITHUB_WORKSPACE"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def _running_posted(gh: FakeGitHub) -> bool:
    return any("Neens eval running" in c["body"] for c in gh.comments(7))


def _once_running(env: dict[str, str], gh: FakeGitHub,
                  act: Callable[[subprocess.Popen[str]], object],
                  timeout: float) -> tuple[int, str]:
    """Start the job, ``act`` on it once its running comment is up, and wait for it to end:
    (its exit code, its stderr)."""
    proc = _start(env)
    try:
        assert wait_for(lambda: _running_posted(gh), timeout=90), "no running comment"
        act(proc)
        _out, err = proc.communicate(timeout=timeout)
    finally:
        if proc.poll() is None:
            proc.kill()
    return proc.returncode, err


def _only_comment(gh: FakeGitHub) -> str:
    comments = gh.comments(7)
    assert len(comments) == 1, [c["body"][:200] for c in comments]
    return comments[0]["body"]


def _hanging(sandbox: Sandbox, gh: FakeGitHub, tmp: Path, sha: str = "a") -> dict[str, str]:
    env = _github_env(sandbox, gh, tmp, "hang")
    event = Path(env["GITHUB_EVENT_PATH"])
    event.write_text(event.read_text().replace("a" * 40, sha * 40))  # the PR's head commit
    env.update(GITHUB_SHA=sha * 40, AGENT_HANG_S="120", INPUT_TIMEOUT="150")
    return env


def test_sigterm_replaces_the_running_comment_with_did_not_finish(
        sandbox: Sandbox, gh: FakeGitHub, tmp_path: Path) -> None:
    code, err = _once_running(_hanging(sandbox, gh, tmp_path), gh,
                              lambda proc: proc.send_signal(signal.SIGTERM), timeout=90)
    assert code == 130, err[-3000:]
    body = _only_comment(gh)
    assert "Neens eval running" not in body and "⏳" not in body
    assert "⚠️ **The job did not finish**: interrupted" in body
    assert "no verdict for commit `aaaaaaaaaaaa`" in body
    assert JOB_URL in body
    assert len(gh.calls("POST", "/issues/7/comments")) == 1  # one comment, edited in place


def test_a_run_error_after_the_running_comment_is_an_error_comment(
        sandbox: Sandbox, gh: FakeGitHub, tmp_path: Path) -> None:
    # the agent answers without exporting any trace: nothing is measured (exit 2)
    env = _github_env(sandbox, gh, tmp_path, "silent")
    proc = _run(env, Path(env["GITHUB_WORKSPACE"]))
    assert proc.returncode == 2, proc.stderr[-3000:]
    posts = gh.calls("POST", "/issues/7/comments")
    assert len(posts) == 1 and "Neens eval running" in posts[0].body["body"]
    assert len(gh.calls("PATCH")) == 1
    body = _only_comment(gh)
    assert "Neens eval running" not in body and "⏳" not in body
    assert "Errored" in body and "exit code 2" in body


def test_the_sandbox_stopping_mid_run_leaves_an_error_comment(
        sandbox: Sandbox, gh: FakeGitHub, tmp_path: Path) -> None:
    env = _github_env(sandbox, gh, tmp_path, "slow")
    # the agents' exports to the stopped server fail fast (the example agent's own deadline)
    env.update(AGENT_SLOW_S="1", INPUT_CONCURRENCY="3", OTEL_EXPORTER_OTLP_TIMEOUT="1")
    # the server goes away while the agents run
    code, err = _once_running(env, gh, lambda _proc: sandbox.stop(), timeout=240)
    assert code == 2, err[-3000:]
    body = _only_comment(gh)
    assert "Neens eval running" not in body and "⏳" not in body
    assert "Errored" in body and JOB_URL in body


def test_a_crash_in_our_code_leaves_did_not_finish_and_exit_2(
        sandbox: Sandbox, gh: FakeGitHub, tmp_path: Path) -> None:
    env = _github_env(sandbox, gh, tmp_path, "good")
    # a bug after the agents ran: the verdict step itself raises
    crash = ("import runpy, sys; import neens_action.pipeline as p\n"
             "def boom(*a, **k):\n    raise RuntimeError('a bug')\n"
             "p.conclude = boom\n"
             f"sys.argv = [{str(ROOT / 'entrypoint.py')!r}]\n"
             f"runpy.run_path({str(ROOT / 'entrypoint.py')!r}, run_name='__main__')\n")
    proc = subprocess.run([PY, "-c", crash], env=env, cwd=env["GITHUB_WORKSPACE"],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 2, proc.stderr[-3000:]
    assert "the action crashed" in proc.stderr and "RuntimeError: a bug" in proc.stderr
    posts = gh.calls("POST", "/issues/7/comments")
    assert len(posts) == 1 and "Neens eval running" in posts[0].body["body"]
    body = _only_comment(gh)
    assert "Neens eval running" not in body
    assert ("⚠️ **The job did not finish**: the action crashed (RuntimeError): see the CI "
            "job; no verdict for commit `aaaaaaaaaaaa`") in body
    assert JOB_URL in body and "exit code 2" in body


def test_a_new_commit_replaces_the_old_verdict_and_a_sigkill_leaves_an_honest_comment(
        sandbox: Sandbox, gh: FakeGitHub, tmp_path: Path) -> None:
    env = _github_env(sandbox, gh, tmp_path, "good")
    env["GITHUB_SHA"] = "a" * 40
    first = _run(env, Path(env["GITHUB_WORKSPACE"]))
    assert first.returncode == 0, first.stderr[-3000:]
    assert "Passed" in _only_comment(gh)

    # the next commit's job is killed hard while its agents run: it cannot write again
    env = _hanging(sandbox, gh, tmp_path, sha="b")
    env["AGENT_HANG_S"] = "10"
    proc = _start(env)
    try:
        assert wait_for(lambda: _running_posted(gh), timeout=90), "no running comment"
    finally:
        proc.kill()  # SIGKILL
        proc.communicate(timeout=30)
    body = _only_comment(gh)
    assert "Passed" not in body  # the old commit's verdict is gone
    assert "⏳ **Neens eval running**" in body and "for commit `bbbbbbbbbbbb`" in body
    assert "started 20" in body and "if it still says running long after the start" in body
    assert JOB_URL in body
    # the orphaned agents of the killed job end on their own (AGENT_HANG_S)


def test_gitlab_sigterm_replaces_the_running_note_with_did_not_finish(
        sandbox: Sandbox, tmp_path: Path) -> None:
    gl = FakeGitLab(token=GL_TOKEN).start()
    try:
        project = tmp_path / "project"
        project.mkdir()
        env = _base_env(
            sandbox, GITLAB_CI="true", CI="true", CI_PROJECT_DIR=str(project),
            CI_API_V4_URL=gl.api_url, CI_PROJECT_ID="42", CI_MERGE_REQUEST_IID="5",
            CI_JOB_NAME="neens-eval", CI_COMMIT_SHA="f" * 40,
            CI_JOB_URL="https://gitlab.example/g/p/-/jobs/8", NEENS_GITLAB_TOKEN=GL_TOKEN,
            NEENS_API_KEY=sandbox.api_key, NEENS_INPUT_BASE_URL=sandbox.url,
            NEENS_INPUT_COMMAND=f"{PY} {AGENT}", NEENS_INPUT_DATASET="ds_refunds",
            NEENS_INPUT_TIMEOUT="150", AGENT_MODE="hang", AGENT_HANG_S="120",
        )
        proc = subprocess.Popen([PY, str(ROOT / "entrypoint.py")], env=env, cwd=project,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            assert wait_for(lambda: any("Neens eval running" in n["body"]
                                        for n in gl.mr_notes("5")), timeout=90)
            proc.send_signal(signal.SIGTERM)
            _out, err = proc.communicate(timeout=90)
        finally:
            if proc.poll() is None:
                proc.kill()
        assert proc.returncode == 130, err[-3000:]
        notes = gl.mr_notes("5")
        assert len(notes) == 1
        body = notes[0]["body"]
        assert "⏳" not in body and "Neens eval running" not in body
        assert "⚠️ **The job did not finish**: interrupted" in body
        assert "no verdict for commit `ffffffffffff`" in body
        assert "https://gitlab.example/g/p/-/jobs/8" in body
    finally:
        gl.stop()
