"""The sticky pull-request comment, through PyGithub (the only module that imports ``github``).

One comment per (workflow, job, mode, matrix leg), found by a hidden marker across every page
of the PR's comments and edited in place (``comment: update``); ``new`` always posts; ``off``
never gets here. Only a comment that *opens* with the marker and was written by the token's
own identity is ours (the authenticated user; ``github-actions[bot]`` for the workflow token,
which may not read ``/user``): a marker planted by a PR author is left alone and a new
comment is posted. A fork PR, a read-only token, 401/403/404 or a network failure is a notice,
never a failed build. ``GITHUB_API_URL`` points PyGithub at GitHub Enterprise.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote

from neens_action.redact import redact
from neens_action.text import no_quick_actions, scrub_text

MARKER_PREFIX = "<!-- neens-eval-action"
WORKFLOW_BOT = "github-actions[bot]"  # who the workflow's GITHUB_TOKEN writes as
DEFAULT_API_URL = "https://api.github.com"


@dataclass
class GitHubContext:
    """What the Actions environment says about where we run."""

    api_url: str = DEFAULT_API_URL
    server_url: str = "https://github.com"
    repository: str = ""  # owner/name
    event_name: str = ""
    sha: str = ""
    workflow: str = ""
    job: str = ""
    run_id: str = ""
    run_attempt: str = ""
    pr_numbers: list[int] = field(default_factory=list)
    fork: bool = False  # a PR from a fork under `pull_request`: the token is read-only

    @classmethod
    def from_env(cls, environ: Mapping[str, str]) -> GitHubContext:
        event = _load_event(environ.get("GITHUB_EVENT_PATH", ""))
        name = environ.get("GITHUB_EVENT_NAME", "")
        repository = environ.get("GITHUB_REPOSITORY", "")
        numbers: list[int] = []
        fork = False
        pr = event.get("pull_request") if isinstance(event.get("pull_request"), dict) else None
        issue = event.get("issue") if isinstance(event.get("issue"), dict) else None
        if pr is not None and isinstance(pr.get("number"), int):
            numbers.append(pr["number"])
            head_repo = (pr.get("head") or {}).get("repo") or {}
            base_repo = (pr.get("base") or {}).get("repo") or {}
            head_name = head_repo.get("full_name") if isinstance(head_repo, dict) else None
            base_name = base_repo.get("full_name") if isinstance(base_repo, dict) else None
            # pull_request_target runs with the base repository's token: not read-only.
            if name == "pull_request" and head_name != (base_name or repository):
                fork = True
        elif issue is not None and issue.get("pull_request") and isinstance(
            issue.get("number"), int
        ):
            numbers.append(issue["number"])
        else:
            ref = environ.get("GITHUB_REF", "")
            m = re.match(r"^refs/pull/(\d+)/", ref)
            if m:
                numbers.append(int(m.group(1)))
        return cls(
            api_url=(environ.get("GITHUB_API_URL") or DEFAULT_API_URL).rstrip("/"),
            server_url=(environ.get("GITHUB_SERVER_URL") or "https://github.com").rstrip("/"),
            repository=repository,
            event_name=name,
            sha=environ.get("GITHUB_SHA", ""),
            workflow=environ.get("GITHUB_WORKFLOW", ""),
            job=environ.get("GITHUB_JOB", ""),
            run_id=environ.get("GITHUB_RUN_ID", ""),
            run_attempt=environ.get("GITHUB_RUN_ATTEMPT", ""),
            pr_numbers=numbers,
            fork=fork,
        )

    @property
    def details_url(self) -> str | None:
        if not (self.repository and self.run_id):
            return None
        url = f"{self.server_url}/{self.repository}/actions/runs/{self.run_id}"
        return url + (f"/attempts/{self.run_attempt}" if self.run_attempt else "")


def _load_event(path: str) -> dict[str, Any]:
    if not path:
        return {}
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def marker(*, workflow: str, job: str, mode: str, leg: str = "") -> str:
    """The hidden first line that identifies our comment for one (workflow, job, mode, leg).

    Values are percent-encoded, so nothing a user names a workflow can close the comment.
    """
    parts = {"workflow": workflow, "job": job, "mode": mode, "leg": leg}
    body = " ".join(f"{k}={quote(v or '', safe='')}" for k, v in parts.items())
    return f"{MARKER_PREFIX} {body} -->"


@dataclass
class CommentResult:
    action: str  # created | updated | skipped
    url: str = ""
    notices: list[str] = field(default_factory=list)  # worth a ::notice annotation
    info: list[str] = field(default_factory=list)  # expected situations: a log line is enough


def _client(token: str, api_url: str, timeout: float) -> Any:
    from github import Auth, Github
    from urllib3.util import Retry

    retry = Retry(
        total=2,
        backoff_factor=0.5,
        status_forcelist=(500, 502, 503, 504),
        allowed_methods=frozenset({"GET"}),
        raise_on_status=False,
        respect_retry_after_header=False,
    )
    return Github(
        auth=Auth.Token(token),
        base_url=api_url,
        timeout=max(int(timeout), 1),
        per_page=100,
        retry=retry,
        lazy=True,
        seconds_between_requests=None,
        seconds_between_writes=None,
    )


def _status(exc: BaseException) -> int | None:
    status = getattr(exc, "status", None)
    return status if isinstance(status, int) else None


def _why(exc: BaseException) -> str:
    status = _status(exc)
    if status in (401, 403):
        return (
            f"GitHub answered {status}: the token cannot write PR comments"
            " (grant `permissions: pull-requests: write`, or use comment: off)"
        )
    if status == 404:
        return "GitHub answered 404: the token cannot see this pull request"
    if status is not None:
        return f"GitHub answered {status}"
    return f"GitHub could not be reached ({type(exc).__name__})"


def identity(gh: Any) -> str:
    """The login the token writes as: ``GET /user``, or the workflow bot when the token may
    not read it (an installation token answers 403)."""
    from github import GithubException

    try:
        login = gh.get_user().login
    except GithubException as exc:
        if _status(exc) in (401, 403, 404):
            return WORKFLOW_BOT
        raise
    return login if isinstance(login, str) and login else WORKFLOW_BOT


def _find(issue: Any, mark: str, me: str, others: list[str] | None = None) -> Any | None:
    """Our comment: it opens with ``mark`` and ``me`` wrote it (every page read). The logins
    of marked comments written by someone else are added to ``others``."""
    for comment in issue.get_comments():
        body = comment.body or ""
        login = getattr(comment.user, "login", None) if comment.user is not None else None
        if not body.startswith(mark):
            continue
        if isinstance(login, str) and login.lower() == me.lower():
            return comment
        if others is not None:
            others.append(login if isinstance(login, str) else "?")
    return None


def upsert(repo: Any, number: int, mark: str, body: str, mode: str,
           me: str = WORKFLOW_BOT, others: list[str] | None = None) -> tuple[str, str]:
    """Create or edit our marked comment on PR ``number``; returns (action, html_url)."""
    from github import GithubException

    issue = repo.get_issue(number)
    existing = _find(issue, mark, me, others) if mode == "update" else None
    if existing is not None:
        try:
            existing.edit(body)
            return "updated", existing.html_url or ""
        except GithubException as exc:
            if _status(exc) not in (403, 404):  # gone or locked: post a new one
                raise
    created = issue.create_comment(body)
    return "created", created.html_url or ""


def post_sticky_comment(
    ctx: GitHubContext,
    *,
    token: str,
    body: str,
    mark: str,
    mode: str = "update",
    timeout: float = 20.0,
    author: str = "",
) -> CommentResult:
    """Post or update the comment on every PR of this event; never raises for GitHub errors.

    ``author``: the login our comments are written as (``comment-author``; a GitHub App's
    installation token may not read ``/user``); empty: asked of the token."""
    from github import GithubException

    if mode == "off":
        return CommentResult("skipped")
    if not token:
        return CommentResult("skipped", notices=["no github-token: the PR comment was skipped"])
    if not ctx.repository:
        return CommentResult("skipped", notices=["GITHUB_REPOSITORY is not set: no PR comment"])
    if ctx.fork:
        return CommentResult(
            "skipped",
            notices=[
                "pull request from a fork: its token is read-only, so the PR comment was"
                " skipped (the job summary has the result)"
            ],
        )
    result = CommentResult("skipped")
    body = no_quick_actions(redact(scrub_text(body)))
    try:
        gh = _client(token, ctx.api_url, timeout)
        me = (author.strip() or identity(gh)) if mode == "update" else WORKFLOW_BOT
        repo = gh.get_repo(ctx.repository)
        numbers = list(ctx.pr_numbers)
        if not numbers and ctx.sha and ctx.event_name in ("push", "workflow_dispatch", ""):
            numbers = [p.number for p in repo.get_commit(ctx.sha).get_pulls() if p.state == "open"]
        if not numbers:
            result.info.append("no pull request for this commit: no PR comment")
            return result
        for number in numbers:
            others: list[str] = []
            try:
                action, url = upsert(repo, number, mark, body, mode, me, others)
            except GithubException as exc:
                result.notices.append(f"PR #{number}: comment skipped: {_why(exc)}")
                continue
            if others and action == "created":
                who = ", ".join(sorted(set(others)))[:200]
                result.notices.append(
                    f"PR #{number}: a comment with this job's marker by {who} was left alone"
                    f" (this token writes as {me}); if it was ours, set comment-author to"
                    " that login")
            result.action = action
            result.url = result.url or url
    except GithubException as exc:
        result.notices.append(f"PR comment skipped: {_why(exc)}")
    except (OSError, ValueError) as exc:  # connection errors, bad URLs, broken JSON
        result.notices.append(f"PR comment skipped: {_why(exc)}")
    return result
