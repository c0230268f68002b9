"""Where the candidate comes from: commit, branch, PR/MR, repository.

The CI platform (:mod:`neens_action.ci.platforms`, resolved once and passed in, or detected
here from the environment when not) reads its own variables into commit facts
(:mod:`neens_action.ci.commit_facts`); the repository comes from the common variables of many
CIs. Explicit flags win field by field; detection fills the gaps. Any other environment with
``CI`` truthy is in CI (``source: ci``) with no commit facts.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from neens_action.ci import platforms
from neens_action.ci.commit_facts import ReadText, clean_repo, truthy


@dataclass
class Provenance:
    git_sha: str | None = None
    branch: str | None = None
    pr_number: int | None = None
    pr_url: str | None = None
    repo: str | None = None
    in_ci: bool = False
    platform: str = ""  # a platform's name (github, gitlab, jenkins), "ci" (another CI) or ""
    default_branch: str | None = None

    @property
    def any_commit_fact(self) -> bool:
        """True when a sha, branch, PR number or PR URL is known (the CI default baseline needs
        one)."""
        return any(v is not None for v in (self.git_sha, self.branch, self.pr_number,
                                           self.pr_url))

    @property
    def short_sha(self) -> str | None:
        return self.git_sha[:12] if self.git_sha else None

    def wire(self, *, has_gates: bool = False) -> dict[str, Any]:
        """The provenance fields of a run's create request (null ones omitted) plus ``source``
        when anything is sent."""
        body: dict[str, Any] = {
            k: v for k, v in (("repo", self.repo), ("git_sha", self.git_sha),
                              ("branch", self.branch), ("pr_number", self.pr_number),
                              ("pr_url", self.pr_url)) if v is not None
        }
        if body or has_gates:
            body["source"] = "ci" if self.in_ci else "manual"
        return body


def detect_repo(env: Mapping[str, str], platform_repo: str | None = None) -> str | None:
    """First valid of GITHUB_REPOSITORY, CI_PROJECT_PATH, BITBUCKET_REPO_FULL_NAME,
    BUILD_REPOSITORY_NAME, CIRCLE_PROJECT_USERNAME/CIRCLE_PROJECT_REPONAME, then the one the
    platform's own variables name (``platform_repo``: Jenkins' GIT_URL)."""
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
    return platform_repo


def detect(environ: Mapping[str, str], read_text: ReadText | None = None,
           platform: platforms.Platform | None = None) -> Provenance:
    """Provenance detected from the CI environment only (no flags)."""
    platform = platform or platforms.detect(environ)
    facts = platform.commit_facts(environ, read_text)
    if platform is not platforms.GENERIC:
        name = platform.name
    else:
        name = "ci" if truthy(environ.get("CI")) else ""
    prov = Provenance(git_sha=facts.git_sha, branch=facts.branch, pr_number=facts.pr_number,
                      pr_url=facts.pr_url, platform=name, default_branch=facts.default_branch)
    prov.in_ci = bool(prov.platform) or truthy(environ.get("CI"))
    if prov.in_ci:
        prov.repo = detect_repo(environ, facts.repo)
    return prov


def resolve(
    environ: Mapping[str, str],
    *,
    git_sha: str | None = None,
    branch: str | None = None,
    pr_number: int | None = None,
    pr_url: str | None = None,
    repo: str | None = None,
    read_text: ReadText | None = None,
    platform: platforms.Platform | None = None,
) -> Provenance:
    """Detected provenance with each explicit value (flag) winning over detection."""
    prov = detect(environ, read_text, platform)
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
    """The CI default baseline: ``branch:<default branch>`` when the run has a
    dataset, carries any commit fact and the default branch is known; else None."""
    if not has_dataset or not prov.any_commit_fact or not prov.default_branch:
        return None
    return {"kind": "branch", "value": prov.default_branch}
