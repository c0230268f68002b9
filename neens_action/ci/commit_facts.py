"""What each CI platform's variables say about the candidate: commit, branch, PR/MR, default
branch (the provenance readers of :mod:`neens_action.ci.platforms`).

Readers read environment variables and, on GitHub, the event payload file; no git
subprocess, no network. :mod:`neens_action.settings.provenance` turns the facts into the
run's provenance, explicit flags winning field by field.

- GitHub Actions: the PR **head** sha from the event payload (``GITHUB_SHA`` is a temporary
  merge commit on pull_request events), ``GITHUB_HEAD_REF``/``GITHUB_REF_NAME``, the PR number
  from ``refs/pull/<n>/merge``, the default branch from ``repository.default_branch``.
- GitLab CI: ``CI_MERGE_REQUEST_SOURCE_BRANCH_SHA`` (merged-results pipelines) else
  ``CI_COMMIT_SHA``; MR IID; ``CI_DEFAULT_BRANCH``.
- Jenkins: ``GIT_COMMIT``, ``CHANGE_BRANCH``/``BRANCH_NAME``, ``CHANGE_ID``, ``CHANGE_URL``;
  the PR's target branch (``CHANGE_TARGET``) is used as the default baseline branch; the
  repository from ``GIT_URL``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

ReadText = Callable[[str], str]

_HEX = re.compile(r"^[0-9a-fA-F]{7,64}$")
_PR_REF = re.compile(r"^refs/pull/(\d+)/(?:merge|head)$")
_TRUTHY = {"1", "true", "yes"}


@dataclass(frozen=True)
class CommitFacts:
    git_sha: str | None = None
    branch: str | None = None
    pr_number: int | None = None
    pr_url: str | None = None
    default_branch: str | None = None
    repo: str | None = None  # only where no common variable names it (Jenkins' GIT_URL)


def truthy(value: str | None) -> bool:
    return (value or "").strip().lower() in _TRUTHY


def clean_repo(value: str | None) -> str | None:
    """Trim, strip scheme / credentials / trailing slashes / ``.git``; None when invalid."""
    if value is None:
        return None
    v = value.strip()
    if not v or len(v) > 255 or any(ord(c) < 32 or ord(c) == 127 for c in v):
        return None
    if "://" in v:
        v = v.split("://", 1)[1]
    if "@" in v.split("/", 1)[0]:
        v = v.split("@", 1)[1]
    v = v.rstrip("/")
    if v.endswith(".git"):
        v = v[:-4]
    v = v.rstrip("/")
    return v or None


def _hex(value: Any) -> str | None:
    if isinstance(value, str) and _HEX.match(value.strip()):
        return value.strip()
    return None


def _str(value: Any) -> str | None:
    if isinstance(value, str) and value.strip():
        return value.strip()
    return None


def _digits(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value if value > 0 else None
    if isinstance(value, str) and value.strip().isascii() and value.strip().isdigit():
        n = int(value.strip())
        return n if n > 0 else None
    return None


def _read_event(environ: Mapping[str, str], read_text: ReadText | None) -> dict[str, Any]:
    path = environ.get("GITHUB_EVENT_PATH", "").strip()
    if not path:
        return {}
    try:
        text = read_text(path) if read_text else Path(path).read_text(encoding="utf-8")
        data = json.loads(text)
    except (OSError, ValueError, UnicodeDecodeError):
        return {}
    return data if isinstance(data, dict) else {}


def _obj(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def github_facts(env: Mapping[str, str], read_text: ReadText | None = None) -> CommitFacts:
    event = _read_event(env, read_text)
    pr = _obj(event.get("pull_request"))
    head = _obj(pr.get("head"))
    repo_obj = _obj(event.get("repository"))
    sha = _hex(head.get("sha")) or _hex(env.get("GITHUB_SHA"))
    branch = _str(env.get("GITHUB_HEAD_REF")) or _str(env.get("GITHUB_REF_NAME"))
    number = None
    m = _PR_REF.match(env.get("GITHUB_REF", "").strip())
    if m:
        number = _digits(m.group(1))
    if number is None:
        number = _digits(pr.get("number"))
    url = _str(pr.get("html_url"))
    repository = _str(env.get("GITHUB_REPOSITORY"))
    if url is None and number is not None and repository:
        server = (_str(env.get("GITHUB_SERVER_URL")) or "https://github.com").rstrip("/")
        url = f"{server}/{repository}/pull/{number}"
    if number is not None and branch and branch.endswith("/merge") and _str(head.get("ref")):
        branch = _str(head.get("ref"))
    return CommitFacts(git_sha=sha, branch=branch, pr_number=number, pr_url=url,
                       default_branch=_str(repo_obj.get("default_branch")))


def gitlab_facts(env: Mapping[str, str], read_text: ReadText | None = None) -> CommitFacts:
    sha = _hex(env.get("CI_MERGE_REQUEST_SOURCE_BRANCH_SHA")) or _hex(env.get("CI_COMMIT_SHA"))
    branch = (_str(env.get("CI_MERGE_REQUEST_SOURCE_BRANCH_NAME"))
              or _str(env.get("CI_COMMIT_BRANCH")) or _str(env.get("CI_COMMIT_REF_NAME")))
    number = _digits(env.get("CI_MERGE_REQUEST_IID"))
    url = None
    project_url = _str(env.get("CI_PROJECT_URL"))
    if number is not None and project_url:
        url = f"{project_url.rstrip('/')}/-/merge_requests/{number}"
    return CommitFacts(git_sha=sha, branch=branch, pr_number=number, pr_url=url,
                       default_branch=_str(env.get("CI_DEFAULT_BRANCH")))


def jenkins_facts(env: Mapping[str, str], read_text: ReadText | None = None) -> CommitFacts:
    number = _digits(env.get("CHANGE_ID"))
    branch = _str(env.get("CHANGE_BRANCH")) if number is not None else None
    branch = branch or _str(env.get("BRANCH_NAME")) or _str(env.get("GIT_BRANCH"))
    if branch and branch.startswith("origin/"):
        branch = branch[len("origin/"):]
    url = _str(env.get("CHANGE_URL")) if number is not None else None
    return CommitFacts(git_sha=_hex(env.get("GIT_COMMIT")), branch=branch, pr_number=number,
                       pr_url=url,
                       default_branch=_str(env.get("CHANGE_TARGET")) if number else None,
                       repo=_repo_from_git_url(env.get("GIT_URL")))


def no_facts(env: Mapping[str, str], read_text: ReadText | None = None) -> CommitFacts:
    return CommitFacts()


def _repo_from_git_url(url: str | None) -> str | None:
    if not url:
        return None
    u = url.strip()
    path = urlsplit(u).path if "://" in u else u.split(":", 1)[-1]
    parts = [p for p in path.strip("/").split("/") if p]
    if len(parts) < 2:
        return None
    return clean_repo("/".join(parts[-2:]))
