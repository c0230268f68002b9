"""GitLab side effects: the sticky merge-request note (through python-gitlab) and the dotenv
report later jobs read as variables.

The note is found by a hidden marker keyed by the job name across every page of notes and
edited in place; only a note that *opens* with the marker and was written by the token's own
user counts (system notes are skipped), so a marker planted by someone else is left alone and
a new note is posted. An update refused with 403/404 falls back to a new note.
``CI_JOB_TOKEN`` cannot post notes, so the token is ``NEENS_GITLAB_TOKEN`` (``api`` scope,
``PRIVATE-TOKEN`` header); without it, or on 401/403/404, we log a notice and never fail the
job for it. Redirects are never followed (a 3xx is an error): the token stays on its host.
"""

from __future__ import annotations

import contextlib
import os
import re
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import quote

import requests

from neens_action.redact import redact
from neens_action.text import dotenv_value, no_quick_actions, scrub_text

if TYPE_CHECKING:
    from gitlab import Gitlab
    from gitlab.v4.objects import ProjectMergeRequest

MARKER_PREFIX = "<!-- neens-eval-action"
DOTENV_LIMIT = 5 * 1024  # GitLab rejects dotenv reports of 5 KB or more
DOTENV_MAX_KEYS = 20  # GitLab's default cap on variables per dotenv report
MAX_PAGES = 100  # 10,000 notes: a deadline on pagination, not a real-world limit
_KEY = re.compile(r"^[A-Za-z0-9_]+$")


@dataclass
class GitLabContext:
    api_url: str = ""  # CI_API_V4_URL
    project_id: str = ""  # CI_PROJECT_ID
    mr_iid: str = ""  # CI_MERGE_REQUEST_IID
    sha: str = ""  # CI_COMMIT_SHA
    job_name: str = ""  # CI_JOB_NAME
    job_url: str = ""  # CI_JOB_URL
    project_url: str = ""  # CI_PROJECT_URL (links to the note)

    @classmethod
    def from_env(cls, environ: Mapping[str, str]) -> GitLabContext:
        return cls(
            api_url=environ.get("CI_API_V4_URL", "").rstrip("/"),
            project_id=environ.get("CI_PROJECT_ID", ""),
            mr_iid=environ.get("CI_MERGE_REQUEST_IID", ""),
            sha=environ.get("CI_COMMIT_SHA", ""),
            job_name=environ.get("CI_JOB_NAME", ""),
            job_url=environ.get("CI_JOB_URL", ""),
            project_url=environ.get("CI_PROJECT_URL", "").rstrip("/"),
        )


def artifact_url(job_url: str, workspace: Path, path: Path | None) -> str | None:
    """The browser page of a job artifact written at ``path`` (GitLab's
    ``<job>/artifacts/file/<path in the project>``); None when there is no job URL, no such
    file, or it lies outside the project directory (it cannot be an artifact then)."""
    if not job_url or path is None or not path.is_file():
        return None
    try:
        inside = path.resolve().relative_to(workspace.resolve())
    except ValueError:
        return None
    return f"{job_url.rstrip('/')}/artifacts/file/{quote(inside.as_posix())}"


def marker(*, job: str, mode: str = "", leg: str = "") -> str:
    """Hidden first line of our note: one note per (job, mode, leg); values percent-encoded."""
    parts = {"job": job, "mode": mode, "leg": leg}
    body = " ".join(f"{k}={quote(v or '', safe='')}" for k, v in parts.items())
    return f"{MARKER_PREFIX} {body} -->"


@dataclass
class NoteResult:
    action: str  # created | updated | skipped
    url: str = ""
    notices: list[str] = field(default_factory=list)


class _Refused(Exception):
    def __init__(self, status: int | None, what: str) -> None:
        super().__init__(what)
        self.status = status
        self.what = what


def _no_redirects() -> requests.Session:
    """A session that treats any redirect as an error (the token must not follow one)."""
    session = requests.Session()
    session.max_redirects = 0
    session.trust_env = False  # no ~/.netrc credentials either
    return session


def _server_url(api_url: str) -> str:
    """python-gitlab wants the server root; ``CI_API_V4_URL`` ends with ``/api/v4``."""
    return api_url[: -len("/api/v4")] if api_url.endswith("/api/v4") else api_url


class GitLabNotes:
    """The few GitLab calls we make, through python-gitlab, each with a deadline."""

    def __init__(self, ctx: GitLabContext, token: str, *, timeout: float = 20.0,
                 session: requests.Session | None = None) -> None:
        import gitlab

        self.ctx = ctx
        self.session = session or _no_redirects()
        self.gl: Gitlab = gitlab.Gitlab(
            _server_url(ctx.api_url), private_token=token, timeout=timeout,
            session=self.session, keep_base_url=True, retry_transient_errors=False,
            per_page=100,
        )
        self.project = self.gl.projects.get(ctx.project_id, lazy=True)
        self._me: int | None = None

    def __repr__(self) -> str:
        return f"GitLabNotes(api_url={self.ctx.api_url!r}, project={self.ctx.project_id!r})"

    def me(self) -> int | None:
        """The token's own user id (None when GitLab will not say)."""
        if self._me is None:
            self.gl.auth()
            user = self.gl.user
            uid = getattr(user, "id", None) if user is not None else None
            self._me = uid if isinstance(uid, int) else None
        return self._me

    def merge_requests_of_commit(self, sha: str) -> list[str]:
        mrs = self.project.commits.get(sha, lazy=True).merge_requests(get_all=True)
        return [str(mr["iid"]) for mr in mrs
                if isinstance(mr, dict) and mr.get("state") == "opened"]

    def _mr(self, iid: str) -> ProjectMergeRequest:
        return self.project.mergerequests.get(iid, lazy=True)

    def find(self, iid: str, mark: str) -> int | None:
        """The id of our note: it opens with ``mark``, is no system note, and its author is
        the token's own user."""
        me = self.me()
        if me is None:
            return None
        notes = self._mr(iid).notes.list(iterator=True, sort="asc", order_by="created_at",
                                         per_page=100)
        for count, note in enumerate(notes):
            if count >= MAX_PAGES * 100:
                break
            attrs = note.attributes
            author = attrs.get("author") if isinstance(attrs.get("author"), dict) else {}
            body = attrs.get("body")
            if (attrs.get("system") is not True and author.get("id") == me
                    and isinstance(body, str) and body.startswith(mark)):
                note_id = attrs.get("id")
                return note_id if isinstance(note_id, int) else None
        return None

    def upsert(self, iid: str, mark: str, body: str, mode: str) -> tuple[str, int | None]:
        from gitlab.exceptions import GitlabError

        mr = self._mr(iid)
        existing = self.find(iid, mark) if mode == "update" else None
        if existing is not None:
            try:
                mr.notes.update(existing, {"body": body})
                return "updated", existing
            except GitlabError as exc:
                # a note we may no longer edit (403) or that is gone (404): post a new one
                if exc.response_code not in (403, 404):
                    raise
        note = mr.notes.create({"body": body})
        note_id = note.attributes.get("id")
        return "created", note_id if isinstance(note_id, int) else None

    def close(self) -> None:
        self.session.close()


def _refused(exc: BaseException) -> _Refused:
    code = getattr(exc, "response_code", None)
    if isinstance(code, int):
        return _Refused(code, f"GitLab answered {code}")
    if isinstance(exc, requests.TooManyRedirects):
        return _Refused(None, "GitLab answered with a redirect (not followed: check "
                        "CI_API_V4_URL)")
    return _Refused(None, f"GitLab could not be reached ({type(exc).__name__})")


def _why(err: _Refused) -> str:
    if err.status in (401, 403):
        return (
            f"{err.what}: NEENS_GITLAB_TOKEN cannot write MR notes (it needs the api scope"
            " and at least Reporter access)"
        )
    if err.status == 404:
        return f"{err.what}: the token cannot see this merge request"
    return err.what


def post_sticky_note(
    ctx: GitLabContext,
    *,
    token: str,
    body: str,
    mark: str,
    mode: str = "update",
    timeout: float = 20.0,
) -> NoteResult:
    """Post or update our note on the MR of this pipeline; never raises for GitLab errors."""
    from gitlab.exceptions import GitlabError

    if mode == "off":
        return NoteResult("skipped")
    if not token:
        return NoteResult(
            "skipped",
            notices=[
                "NEENS_GITLAB_TOKEN is not set (CI_JOB_TOKEN cannot post MR notes):"
                " the MR note was skipped"
            ],
        )
    if not (ctx.api_url and ctx.project_id):
        return NoteResult("skipped", notices=["CI_API_V4_URL/CI_PROJECT_ID unset: no MR note"])
    body = no_quick_actions(redact(scrub_text(body)))
    api = GitLabNotes(ctx, token, timeout=timeout)
    result = NoteResult("skipped")
    failures = (GitlabError, requests.RequestException, ValueError)
    try:
        iids = [ctx.mr_iid] if ctx.mr_iid else []
        if not iids and ctx.sha:
            iids = api.merge_requests_of_commit(ctx.sha)
        if not iids:
            result.notices.append("no merge request for this pipeline: no MR note")
            return result
        for iid in iids:
            try:
                action, note_id = api.upsert(iid, mark, body, mode)
            except failures as exc:
                result.notices.append(f"MR !{iid}: note skipped: {_why(_refused(exc))}")
                continue
            result.action = action
            if ctx.project_url and note_id is not None and not result.url:
                result.url = f"{ctx.project_url}/-/merge_requests/{iid}#note_{note_id}"
    except failures as exc:
        result.notices.append(f"MR note skipped: {_why(_refused(exc))}")
    finally:
        api.close()
    return result


def format_dotenv(values: Mapping[str, str], limit: int = DOTENV_LIMIT) -> str:
    """``KEY=value`` lines: letters, digits and ``_`` only in keys, one-line values, < limit."""
    lines: list[str] = []
    size = 0
    for key, raw in list(values.items())[:DOTENV_MAX_KEYS]:
        if not _KEY.match(key):
            raise ValueError(f"invalid dotenv key {key!r}")
        line = f"{key}={dotenv_value(raw)}\n"
        if size + len(line.encode("utf-8")) >= limit:
            break
        lines.append(line)
        size += len(line.encode("utf-8"))
    return "".join(lines)


def write_dotenv(path: str | Path, values: Mapping[str, str]) -> Path:
    """Write the dotenv report atomically: a temporary file renamed over ``path``, so a
    symlink planted at ``path`` is replaced, never followed."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", dir=target.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(scrub_text(format_dotenv({k: redact(str(v)) for k, v in values.items()})))
        os.chmod(tmp, 0o644)
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    return target
