"""A bad input or an empty key still posts the sticky PR comment (what is wrong, how to fix it):
``entrypoint.py`` as a real process against the fake GitHub REST API."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.fakes.github_server import FakeGitHub
from tests.helpers import Sandbox
from tests.integration.publish.test_entrypoint import GH_TOKEN, _github_env, _run


@pytest.fixture
def gh():
    server = FakeGitHub(token=GH_TOKEN).start()
    yield server
    server.stop()


def _errors(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.startswith("::error")]


def test_a_bad_input_posts_one_short_comment_then_the_verdict_replaces_it(
        sandbox: Sandbox, gh: FakeGitHub, tmp_path: Path) -> None:
    env = _github_env(sandbox, gh, tmp_path, "good")
    env["INPUT_MIN-PASS-RATE"] = "1.5"
    proc = _run(env, Path(env["GITHUB_WORKSPACE"]))
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert _errors(proc.stderr) == [
        "::error title=neens input::min-pass-rate: must be at most 1, got 1.5"]
    comments = gh.comments(7)
    assert len(comments) == 1, proc.stderr[-2000:]
    body = comments[0]["body"]
    assert "Bad input min-pass-rate" in body and "must be at most 1, got 1.5" in body
    assert GH_TOKEN not in body and sandbox.api_key not in body
    # the same sticky marker as the verdict's: a fixed input edits this comment in place
    env["INPUT_MIN-PASS-RATE"] = "0.5"
    good = _run(env, Path(env["GITHUB_WORKSPACE"]))
    assert good.returncode == 0, good.stderr[-3000:]
    comments = gh.comments(7)
    assert len(comments) == 1 and "Bad input" not in comments[0]["body"]


def test_an_empty_key_posts_the_comment_and_never_calls_neens(
        sandbox: Sandbox, gh: FakeGitHub, tmp_path: Path) -> None:
    env = _github_env(sandbox, gh, tmp_path, "good")
    env["INPUT_API-KEY"] = ""
    env["INPUT_BASE-URL"] = "http://127.0.0.1:9"  # any call to Neens would fail loudly
    proc = _run(env, Path(env["GITHUB_WORKSPACE"]))
    assert proc.returncode == 2
    assert len(_errors(proc.stderr)) == 1 and "api-key: is empty" in proc.stderr
    body = gh.comments(7)[0]["body"]
    assert "Bad input api-key" in body and "secrets are not passed to workflows from forks" in body
    assert "connection refused" not in proc.stderr + body


def test_no_token_or_comment_off_posts_nothing(sandbox: Sandbox, gh: FakeGitHub,
                                               tmp_path: Path) -> None:
    for change in ({"INPUT_GITHUB-TOKEN": ""}, {"INPUT_COMMENT": "off"}):
        env = _github_env(sandbox, gh, tmp_path, "good")
        env["INPUT_MIN-PASS-RATE"] = "1.5"
        env.update(change)
        proc = _run(env, Path(env["GITHUB_WORKSPACE"]))
        assert proc.returncode == 2 and len(_errors(proc.stderr)) == 1
    assert gh.requests == []
