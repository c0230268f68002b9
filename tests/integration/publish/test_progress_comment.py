"""The "running" PR comment: posted once the items are known, before the first agent starts,
then edited in place into the verdict (one comment, two writes). ``entrypoint.py`` as a real
process, the real sandbox and agents, the fake GitHub REST API."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.fakes.github_server import FakeGitHub
from tests.helpers import AGENT, PY, Sandbox, db_count
from tests.integration.publish.test_entrypoint import GH_TOKEN, _github_env, _run

# Each agent first reads PR 7's comments from the fake GitHub and notes whether the
# "running" comment was already there, then becomes the example agent.
PEEK = """\
import json, os, sys, urllib.request
req = urllib.request.Request(os.environ["PEEK_URL"],
                             headers={"Authorization": "token " + os.environ["PEEK_AUTH"]})
bodies = [c["body"] for c in json.load(urllib.request.urlopen(req, timeout=10))]
with open(os.environ["PEEK_LOG"], "a") as f:
    f.write(("running" if any("Neens eval running" in b for b in bodies) else "none") + "\\n")
os.execv(sys.executable, [sys.executable, os.environ["PEEK_AGENT"]])
"""


@pytest.fixture
def gh():
    server = FakeGitHub(token=GH_TOKEN).start()
    yield server
    server.stop()


def test_running_comment_first_then_the_verdict_in_the_same_comment(
        sandbox: Sandbox, gh: FakeGitHub, tmp_path: Path) -> None:
    env = _github_env(sandbox, gh, tmp_path, "good")
    peek = tmp_path / "peek.py"
    peek.write_text(PEEK)
    log = tmp_path / "peek.log"
    env.update(INPUT_COMMAND=f"{PY} {peek}", PEEK_AGENT=str(AGENT), PEEK_LOG=str(log),
               PEEK_AUTH=GH_TOKEN,
               PEEK_URL=f"{gh.api_url}/repos/{gh.full_name}/issues/7/comments")
    proc = _run(env, Path(env["GITHUB_WORKSPACE"]))
    assert proc.returncode == 0, proc.stderr[-3000:]
    seen = log.read_text().split()
    assert seen and set(seen) == {"running"}, seen  # every agent started after it was posted
    posts = [r for r in gh.calls("POST") if r.path.endswith("/issues/7/comments")]
    patches = gh.calls("PATCH")
    assert len(posts) == 1 and len(patches) == 1
    first = posts[0].body["body"]
    assert re.search(r"⏳ \*\*Neens eval running\*\*: \d+ items against `ds_refunds`…, "
                     r"started \d{4}-\d\d-\d\d \d\d:\d\d UTC", first), first
    assert "https://github.example/acme/agent/actions/runs/4242" in first
    comments = gh.comments(7)
    assert len(comments) == 1
    assert "Neens eval running" not in comments[0]["body"]
    assert "Passed" in comments[0]["body"]
    assert first.splitlines()[0] == comments[0]["body"].splitlines()[0]  # the same marker


def test_comment_new_posts_no_running_comment(sandbox: Sandbox, gh: FakeGitHub,
                                              tmp_path: Path) -> None:
    env = _github_env(sandbox, gh, tmp_path, "good")
    env["INPUT_COMMENT"] = "new"
    proc = _run(env, Path(env["GITHUB_WORKSPACE"]))
    assert proc.returncode == 0, proc.stderr[-3000:]
    bodies = [c["body"] for c in gh.comments(7)]
    assert len(bodies) == 1 and "Neens eval running" not in bodies[0]


def test_repeats_write_the_running_comment_once(sandbox: Sandbox, gh: FakeGitHub,
                                                tmp_path: Path) -> None:
    env = _github_env(sandbox, gh, tmp_path, "good")
    env["INPUT_REPEAT"] = "2"  # two runs, one job: still one running write and one verdict
    proc = _run(env, Path(env["GITHUB_WORKSPACE"]))
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert db_count(sandbox, "runs") == 2  # the agents ran twice
    posts = [r for r in gh.calls("POST") if r.path.endswith("/issues/7/comments")]
    assert len(posts) == 1 and len(gh.calls("PATCH")) == 1
    assert "Neens eval running" in posts[0].body["body"]
    assert "Neens eval running" not in gh.comments(7)[0]["body"]
