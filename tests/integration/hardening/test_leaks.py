"""A failing agent that prints the Neens key (raw, in its exporter headers, base64- and
URL-encoded), a GitHub token, and lines meant to run GitLab quick actions: behind the CI front
door on GitLab (fake GitLab API) and on GitHub (fake GitHub API) none of the secrets appears
in anything we write, and no quick action can be read from the note or the comment."""

from __future__ import annotations

import base64
import sys
from pathlib import Path
from urllib.parse import quote, quote_plus

from tests.fakes.github_server import FakeGitHub
from tests.fakes.gitlab_quick_actions import quick_actions
from tests.fakes.gitlab_server import FakeGitLab
from tests.helpers import Sandbox
from tests.integration.publish.test_entrypoint import (  # noqa: F401
    GH_TOKEN,
    GL_TOKEN,
    _base_env,
    _github_env,
    _run,
    gh,
    gl,
)

LEAKY = Path(__file__).with_name("leaky_agent.py")
ARTIFACTS = ("neens-result.json", "neens-summary.md", "neens-junit.xml")


def forms(secret: str) -> list[str]:
    raw = secret.encode()
    b64 = base64.b64encode(raw).decode()
    url = base64.urlsafe_b64encode(raw).decode()
    return [secret, quote(secret, safe=""), quote_plus(secret), b64, b64.rstrip("="), url,
            url.rstrip("=")]


def assert_clean(secrets: list[str], texts: dict[str, str]) -> None:
    for where, text in texts.items():
        for secret in secrets:
            for form in forms(secret):
                assert form not in text, f"{where} holds a form of a secret: {form[:6]}…"


def _leaky(env: dict[str, str], tmp: Path, token: str) -> None:
    (tmp / "leaky").mkdir()
    (tmp / "token.txt").write_text(token)
    env.update({"LEAKY_DIR": str(tmp / "leaky"), "LEAKY_TOKEN_FILE": str(tmp / "token.txt")})


def test_gitlab_note_has_no_quick_action_and_nothing_holds_a_secret(
        sandbox: Sandbox, gl: FakeGitLab, tmp_path: Path) -> None:  # noqa: F811
    project = tmp_path / "project"
    project.mkdir()
    env = _base_env(
        sandbox,
        GITLAB_CI="true", CI="true", CI_PROJECT_DIR=str(project), CI_API_V4_URL=gl.api_url,
        CI_PROJECT_ID="42", CI_MERGE_REQUEST_IID="5", CI_JOB_NAME="neens-eval",
        CI_COMMIT_SHA="b" * 40, CI_PROJECT_URL="https://gitlab.example/g/p",
        CI_JOB_TOKEN="job-token-abcdef123456",
        NEENS_GITLAB_TOKEN=GL_TOKEN, NEENS_API_KEY=sandbox.api_key,
        NEENS_INPUT_BASE_URL=sandbox.url, NEENS_INPUT_COMMAND=f"{sys.executable} {LEAKY}",
        NEENS_INPUT_DATASET="ds_refunds", NEENS_INPUT_VERSION_LABEL="gl-leaky",
        NEENS_INPUT_NO_GATE="true", NEENS_INPUT_POLL_INTERVAL="0.5",
    )
    _leaky(env, tmp_path, GL_TOKEN)
    proc = _run(env, project)
    assert proc.returncode in (0, 1), proc.stderr[-3000:]
    notes = gl.mr_notes("5")
    assert len(notes) == 1
    body = notes[0]["body"]
    assert "/approve" in body and "/label" in body  # the agent's output is shown...
    assert quick_actions(body) == []  # ...and GitLab reads no quick action in it
    texts = {name: (project / name).read_text() for name in ARTIFACTS}
    texts.update({"note": body, "dotenv": (project / "neens.env").read_text(),
                  "stdout": proc.stdout, "stderr": proc.stderr})
    assert "agent output" in proc.stderr.lower()  # echoed to the log, redacted
    assert_clean([sandbox.api_key, GL_TOKEN, "job-token-abcdef123456"], texts)


def test_github_comment_summary_and_outputs_hold_no_secret(
        sandbox: Sandbox, gh: FakeGitHub, tmp_path: Path) -> None:  # noqa: F811
    env = _github_env(sandbox, gh, tmp_path, "good")
    ws = Path(env["GITHUB_WORKSPACE"])
    env.update({"INPUT_COMMAND": f"{sys.executable} {LEAKY}", "INPUT_NO-GATE": "true",
                "INPUT_CONCURRENCY": "1", "INPUT_RESULT-FILE": "neens-result.json",
                "INPUT_SUMMARY-FILE": "neens-summary.md", "INPUT_JUNIT-FILE": "neens-junit.xml",
                "GITHUB_TOKEN": GH_TOKEN})
    _leaky(env, tmp_path, GH_TOKEN)
    proc = _run(env, ws)
    assert proc.returncode in (0, 1), proc.stderr[-3000:]
    comments = gh.comments(7)
    assert len(comments) == 1
    body = comments[0]["body"]
    assert "/approve" in body and quick_actions(body) == []
    texts = {name: (ws / name).read_text() for name in ARTIFACTS}
    texts.update({"comment": body, "summary": (tmp_path / "summary.md").read_text(),
                  "outputs": (tmp_path / "output.txt").read_text(), "stdout": proc.stdout,
                  # the log: every line but the runner's own masks
                  "stderr": "\n".join(line for line in proc.stderr.splitlines()
                                      if not line.startswith("::add-mask::"))})
    assert_clean([sandbox.api_key, GH_TOKEN], texts)
