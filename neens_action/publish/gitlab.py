"""GitLab side effects: the sticky merge-request note (REST API via requests) and the dotenv
report later jobs read as variables.

The note is found by a hidden marker keyed by the job name across every page of notes and
edited in place. ``CI_JOB_TOKEN`` cannot post notes, so the token is ``NEENS_GITLAB_TOKEN``
(``api`` scope, ``PRIVATE-TOKEN`` header); without it, or on 401/403/404, we log a notice and
never fail the job for it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote

import requests

from neens_action.text import dotenv_value

MARKER_PREFIX = "<!-- neens-eval-action"
DOTENV_LIMIT = 5 * 1024  # GitLab rejects dotenv reports of 5 KB or more
DOTENV_MAX_KEYS = 20  # GitLab's default cap on variables per dotenv report
NOTE_LIMIT_CHARS = 65_536  # ours: one screen of summary is plenty (GitLab allows 1,000,000)
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


class GitLabNotes:
    """The few GitLab REST calls we make, each with a deadline."""

    def __init__(self, ctx: GitLabContext, token: str, *, timeout: float = 20.0,
                 session: requests.Session | None = None) -> None:
        self.ctx = ctx
        self.timeout = timeout
        self.session = session or requests.Session()
        self.session.headers["PRIVATE-TOKEN"] = token
        self.base = f"{ctx.api_url}/projects/{quote(ctx.project_id, safe='')}"

    def _call(self, method: str, path: str, **kw: Any) -> requests.Response:
        try:
            resp = self.session.request(method, self.base + path, timeout=self.timeout, **kw)
        except requests.RequestException as exc:
            raise _Refused(None, f"GitLab could not be reached ({type(exc).__name__})") from exc
        if resp.status_code >= 400:
            raise _Refused(resp.status_code, f"GitLab answered {resp.status_code}")
        return resp

    def merge_requests_of_commit(self, sha: str) -> list[str]:
        resp = self._call("GET", f"/repository/commits/{quote(sha, safe='')}/merge_requests")
        data = resp.json()
        return [
            str(mr["iid"]) for mr in data if isinstance(mr, dict) and mr.get("state") == "opened"
        ]

    def find(self, iid: str, mark: str) -> dict[str, Any] | None:
        page = "1"
        for _ in range(MAX_PAGES):
            resp = self._call(
                "GET",
                f"/merge_requests/{iid}/notes",
                params={"per_page": 100, "page": page, "sort": "asc", "order_by": "created_at"},
            )
            for note in resp.json():
                body = (note.get("body") or "") if isinstance(note, dict) else ""
                if body.startswith(mark) or f"\n{mark}" in body:
                    return note
            page = resp.headers.get("X-Next-Page", "")
            if not page:
                return None
        return None

    def upsert(self, iid: str, mark: str, body: str, mode: str) -> tuple[str, int | None]:
        existing = self.find(iid, mark) if mode == "update" else None
        if existing is not None:
            self._call("PUT", f"/merge_requests/{iid}/notes/{existing['id']}", json={"body": body})
            return "updated", existing.get("id")
        resp = self._call("POST", f"/merge_requests/{iid}/notes", json={"body": body})
        note = resp.json()
        return "created", note.get("id") if isinstance(note, dict) else None


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
    api = GitLabNotes(ctx, token, timeout=timeout)
    result = NoteResult("skipped")
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
            except _Refused as err:
                result.notices.append(f"MR !{iid}: note skipped: {_why(err)}")
                continue
            result.action = action
            if ctx.project_url and note_id is not None and not result.url:
                result.url = f"{ctx.project_url}/-/merge_requests/{iid}#note_{note_id}"
    except _Refused as err:
        result.notices.append(f"MR note skipped: {_why(err)}")
    except ValueError:  # a non-JSON answer
        result.notices.append("MR note skipped: GitLab sent a response that is not JSON")
    finally:
        api.session.close()
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
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(format_dotenv(values), encoding="utf-8")
    return target
