"""Where the candidate comes from: commit, branch, PR/MR, repository (spec 4.4, 5).

Detection reads environment variables and, on GitHub, the event payload file; no git
subprocess, no network. Explicit flags win field by field; detection fills the gaps.

- GitHub Actions: the PR **head** sha from the event payload (``GITHUB_SHA`` is a temporary
  merge commit on pull_request events), ``GITHUB_HEAD_REF``/``GITHUB_REF_NAME``, the PR number
  from ``refs/pull/<n>/merge``, the default branch from ``repository.default_branch``.
- GitLab CI: ``CI_MERGE_REQUEST_SOURCE_BRANCH_SHA`` (merged-results pipelines) else
  ``CI_COMMIT_SHA``; MR IID; ``CI_DEFAULT_BRANCH``.
- Jenkins: ``GIT_COMMIT``, ``CHANGE_BRANCH``/``BRANCH_NAME``, ``CHANGE_ID``, ``CHANGE_URL``;
  the PR's target branch (``CHANGE_TARGET``) is used as the default baseline branch.
- Anything else with ``CI`` truthy: in CI (``source: ci``), no commit facts.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

_HEX = re.compile(r"^[0-9a-fA-F]{7,64}$")
_PR_REF = re.compile(r"^refs/pull/(\d+)/(?:merge|head)$")
_TRUTHY = {"1", "true", "yes"}


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


def truthy(value: str | None) -> bool:
    return (value or "").strip().lower() in _TRUTHY


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


@dataclass
class Provenance:
    git_sha: str | None = None
    branch: str | None = None
    pr_number: int | None = None
    pr_url: str | None = None
    repo: str | None = None
    in_ci: bool = False
    platform: str = ""  # github | gitlab | jenkins | ci | ""
    default_branch: str | None = None

    @property
    def any_commit_fact(self) -> bool:
        """True when a sha, branch, PR number or PR URL is known (spec 4.1.3 step 3)."""
        return any(v is not None for v in (self.git_sha, self.branch, self.pr_number,
                                           self.pr_url))

    @property
    def short_sha(self) -> str | None:
        return self.git_sha[:12] if self.git_sha else None

    def wire(self, *, has_gates: bool = False) -> dict[str, Any]:
        """E1 provenance fields (null ones omitted) plus ``source`` when anything is sent."""
        body: dict[str, Any] = {
            k: v for k, v in (("repo", self.repo), ("git_sha", self.git_sha),
                              ("branch", self.branch), ("pr_number", self.pr_number),
                              ("pr_url", self.pr_url)) if v is not None
        }
        if body or has_gates:
            body["source"] = "ci" if self.in_ci else "manual"
        return body


def _read_event(environ: Mapping[str, str],
                read_text: Callable[[str], str] | None) -> dict[str, Any]:
    path = environ.get("GITHUB_EVENT_PATH", "").strip()
    if not path:
        return {}
    try:
        text = read_text(path) if read_text else Path(path).read_text(encoding="utf-8")
        data = json.loads(text)
    except (OSError, ValueError, UnicodeDecodeError):
        return {}
    return data if isinstance(data, dict) else {}


def _github(env: Mapping[str, str], read_text: Callable[[str], str] | None) -> Provenance:
    event = _read_event(env, read_text)
    pr = event.get("pull_request") if isinstance(event.get("pull_request"), dict) else {}
    head = pr.get("head") if isinstance(pr.get("head"), dict) else {}
    repo_obj = event.get("repository") if isinstance(event.get("repository"), dict) else {}
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
    return Provenance(git_sha=sha, branch=branch, pr_number=number, pr_url=url,
                      platform="github", default_branch=_str(repo_obj.get("default_branch")))


def _gitlab(env: Mapping[str, str]) -> Provenance:
    sha = _hex(env.get("CI_MERGE_REQUEST_SOURCE_BRANCH_SHA")) or _hex(env.get("CI_COMMIT_SHA"))
    branch = (_str(env.get("CI_MERGE_REQUEST_SOURCE_BRANCH_NAME"))
              or _str(env.get("CI_COMMIT_BRANCH")) or _str(env.get("CI_COMMIT_REF_NAME")))
    number = _digits(env.get("CI_MERGE_REQUEST_IID"))
    url = None
    project_url = _str(env.get("CI_PROJECT_URL"))
    if number is not None and project_url:
        url = f"{project_url.rstrip('/')}/-/merge_requests/{number}"
    return Provenance(git_sha=sha, branch=branch, pr_number=number, pr_url=url,
                      platform="gitlab", default_branch=_str(env.get("CI_DEFAULT_BRANCH")))


def _jenkins(env: Mapping[str, str]) -> Provenance:
    number = _digits(env.get("CHANGE_ID"))
    branch = _str(env.get("CHANGE_BRANCH")) if number is not None else None
    branch = branch or _str(env.get("BRANCH_NAME")) or _str(env.get("GIT_BRANCH"))
    if branch and branch.startswith("origin/"):
        branch = branch[len("origin/"):]
    url = _str(env.get("CHANGE_URL")) if number is not None else None
    return Provenance(git_sha=_hex(env.get("GIT_COMMIT")), branch=branch, pr_number=number,
                      pr_url=url, platform="jenkins",
                      default_branch=_str(env.get("CHANGE_TARGET")) if number else None)


def _repo_from_git_url(url: str | None) -> str | None:
    if not url:
        return None
    u = url.strip()
    path = urlsplit(u).path if "://" in u else u.split(":", 1)[-1]
    parts = [p for p in path.strip("/").split("/") if p]
    if len(parts) < 2:
        return None
    return clean_repo("/".join(parts[-2:]))


def detect_repo(env: Mapping[str, str]) -> str | None:
    """First valid of GITHUB_REPOSITORY, CI_PROJECT_PATH, BITBUCKET_REPO_FULL_NAME,
    BUILD_REPOSITORY_NAME, CIRCLE_PROJECT_USERNAME/CIRCLE_PROJECT_REPONAME (spec 5.3), then
    Jenkins' GIT_URL (owner/name taken from its path)."""
    for var in ("GITHUB_REPOSITORY", "CI_PROJECT_PATH", "BITBUCKET_REPO_FULL_NAME",
                "BUILD_REPOSITORY_NAME"):
        cleaned = clean_repo(env.get(var))
        if cleaned:
            return cleaned
    user, name = env.get("CIRCLE_PROJECT_USERNAME", ""), env.get("CIRCLE_PROJECT_REPONAME", "")
    if user.strip() and name.strip():
        cleaned = clean_repo(f"{user.strip()}/{name.strip()}")
        if cleaned:
            return cleaned
    if env.get("JENKINS_URL"):
        return _repo_from_git_url(env.get("GIT_URL"))
    return None


def detect(environ: Mapping[str, str],
           read_text: Callable[[str], str] | None = None) -> Provenance:
    """Provenance detected from the CI environment only (no flags)."""
    if truthy(environ.get("GITHUB_ACTIONS")):
        prov = _github(environ, read_text)
    elif truthy(environ.get("GITLAB_CI")):
        prov = _gitlab(environ)
    elif environ.get("JENKINS_URL", "").strip():
        prov = _jenkins(environ)
    elif truthy(environ.get("CI")):
        prov = Provenance(platform="ci")
    else:
        prov = Provenance()
    prov.in_ci = bool(prov.platform) or truthy(environ.get("CI"))
    if prov.in_ci:
        prov.repo = detect_repo(environ)
    return prov


def resolve(
    environ: Mapping[str, str],
    *,
    git_sha: str | None = None,
    branch: str | None = None,
    pr_number: int | None = None,
    pr_url: str | None = None,
    repo: str | None = None,
    read_text: Callable[[str], str] | None = None,
) -> Provenance:
    """Detected provenance with each explicit value (flag) winning over detection."""
    prov = detect(environ, read_text)
    if git_sha:
        prov.git_sha = git_sha.strip()
    if branch and branch.strip():
        prov.branch = branch.strip()
    if pr_number is not None:
        prov.pr_number = int(pr_number)
    if pr_url and pr_url.strip():
        prov.pr_url = pr_url.strip()
    if repo:
        prov.repo = clean_repo(repo) or prov.repo
    return prov


def default_baseline(prov: Provenance, *, has_dataset: bool) -> dict[str, str] | None:
    """The CI default baseline (spec 4.1.3): ``branch:<default branch>`` when the run has a
    dataset, carries any commit fact and the default branch is known; else None."""
    if not has_dataset or not prov.any_commit_fact or not prov.default_branch:
        return None
    return {"kind": "branch", "value": prov.default_branch}
