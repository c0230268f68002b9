"""Provenance detection: GitHub, GitLab, Jenkins, generic CI, explicit flags, default baseline."""

from __future__ import annotations

import json

from neens_action.settings import provenance
from neens_action.settings.provenance import default_baseline, detect, resolve

HEAD = "a" * 40
MERGE = "b" * 40


def github_env(tmp_path, event: dict, **extra: str) -> dict[str, str]:
    path = tmp_path / "event.json"
    path.write_text(json.dumps(event))
    env = {"GITHUB_ACTIONS": "true", "CI": "true", "GITHUB_EVENT_PATH": str(path),
           "GITHUB_REPOSITORY": "acme/agent", "GITHUB_SERVER_URL": "https://github.com"}
    env.update(extra)
    return env


def test_github_push(tmp_path):
    env = github_env(tmp_path, {"repository": {"default_branch": "main"}},
                     GITHUB_SHA=HEAD, GITHUB_REF="refs/heads/feature/x",
                     GITHUB_REF_NAME="feature/x")
    p = detect(env)
    assert (p.platform, p.git_sha, p.branch, p.pr_number, p.pr_url) == (
        "github", HEAD, "feature/x", None, None)
    assert p.repo == "acme/agent" and p.in_ci and p.default_branch == "main"
    assert default_baseline(p, has_dataset=True) == {"kind": "branch", "value": "main"}
    assert p.wire() == {"repo": "acme/agent", "git_sha": HEAD, "branch": "feature/x",
                        "source": "ci"}


def test_github_pull_request_uses_head_sha_not_merge_sha(tmp_path):
    event = {"pull_request": {"number": 17, "head": {"sha": HEAD, "ref": "fix"},
                              "html_url": "https://github.com/acme/agent/pull/17"},
             "repository": {"default_branch": "trunk"}}
    env = github_env(tmp_path, event, GITHUB_SHA=MERGE, GITHUB_REF="refs/pull/17/merge",
                     GITHUB_HEAD_REF="fix", GITHUB_REF_NAME="17/merge")
    p = detect(env)
    assert p.git_sha == HEAD
    assert p.branch == "fix"
    assert p.pr_number == 17
    assert p.pr_url == "https://github.com/acme/agent/pull/17"
    assert p.default_branch == "trunk"


def test_github_pr_url_derived_when_payload_lacks_it(tmp_path):
    env = github_env(tmp_path, {}, GITHUB_SHA=MERGE, GITHUB_REF="refs/pull/5/merge",
                     GITHUB_HEAD_REF="b", GITHUB_SERVER_URL="https://ghe.example.com/")
    p = detect(env)
    assert p.git_sha == MERGE and p.pr_number == 5
    assert p.pr_url == "https://ghe.example.com/acme/agent/pull/5"
    assert p.default_branch is None
    assert default_baseline(p, has_dataset=True) is None  # default branch unknown


def test_github_unreadable_event_and_non_hex_sha(tmp_path):
    env = {"GITHUB_ACTIONS": "1", "GITHUB_EVENT_PATH": str(tmp_path / "missing.json"),
           "GITHUB_SHA": "not-a-sha", "GITHUB_REF_NAME": "main"}
    p = detect(env)
    assert p.git_sha is None and p.branch == "main" and p.in_ci


def test_gitlab_merge_request_merged_results():
    env = {"GITLAB_CI": "true", "CI": "true", "CI_COMMIT_SHA": MERGE,
           "CI_MERGE_REQUEST_SOURCE_BRANCH_SHA": HEAD,
           "CI_MERGE_REQUEST_SOURCE_BRANCH_NAME": "feat", "CI_COMMIT_REF_NAME": "refs/merge",
           "CI_MERGE_REQUEST_IID": "42", "CI_PROJECT_URL": "https://gitlab.example.com/g/p",
           "CI_PROJECT_PATH": "g/p", "CI_DEFAULT_BRANCH": "main"}
    p = detect(env)
    assert (p.platform, p.git_sha, p.branch, p.pr_number) == ("gitlab", HEAD, "feat", 42)
    assert p.pr_url == "https://gitlab.example.com/g/p/-/merge_requests/42"
    assert p.repo == "g/p"
    assert default_baseline(p, has_dataset=True) == {"kind": "branch", "value": "main"}


def test_gitlab_branch_pipeline():
    env = {"GITLAB_CI": "true", "CI_COMMIT_SHA": HEAD, "CI_COMMIT_BRANCH": "main",
           "CI_MERGE_REQUEST_IID": "x1", "CI_DEFAULT_BRANCH": "main"}
    p = detect(env)
    assert (p.git_sha, p.branch, p.pr_number, p.pr_url) == (HEAD, "main", None, None)


def test_jenkins_multibranch_pull_request():
    env = {"JENKINS_URL": "https://ci.example.com/", "BUILD_NUMBER": "7", "GIT_COMMIT": HEAD,
           "BRANCH_NAME": "PR-12", "CHANGE_ID": "12", "CHANGE_BRANCH": "feature-a",
           "CHANGE_TARGET": "main", "CHANGE_URL": "https://github.com/acme/agent/pull/12",
           "GIT_URL": "https://user:tok@github.com/acme/agent.git"}
    p = detect(env)
    assert (p.platform, p.git_sha, p.branch, p.pr_number) == ("jenkins", HEAD, "feature-a", 12)
    assert p.pr_url == "https://github.com/acme/agent/pull/12"
    assert p.repo == "acme/agent"  # credentials stripped
    assert p.in_ci and p.default_branch == "main"


def test_jenkins_branch_build():
    env = {"JENKINS_URL": "https://ci/", "GIT_COMMIT": HEAD, "BRANCH_NAME": "main"}
    p = detect(env)
    assert (p.branch, p.pr_number, p.pr_url, p.default_branch) == ("main", None, None, None)


def test_generic_ci_and_local():
    p = detect({"CI": "yes", "BITBUCKET_REPO_FULL_NAME": "team/repo"})
    assert p.in_ci and p.platform == "ci" and p.repo == "team/repo"
    assert not p.any_commit_fact
    assert p.wire() == {"repo": "team/repo", "source": "ci"}
    local = detect({})
    assert not local.in_ci and local.wire() == {}
    assert local.wire(has_gates=True) == {"source": "manual"}


def test_explicit_flags_win(tmp_path):
    env = github_env(tmp_path, {"repository": {"default_branch": "main"}},
                     GITHUB_SHA=MERGE, GITHUB_REF_NAME="main")
    p = resolve(env, git_sha=HEAD, branch="release", pr_number=3,
                pr_url="https://x/pr/3", repo="https://github.com/other/repo.git")
    assert (p.git_sha, p.branch, p.pr_number, p.pr_url, p.repo) == (
        HEAD, "release", 3, "https://x/pr/3", "github.com/other/repo")


def test_flags_outside_ci_are_manual():
    p = resolve({}, git_sha=HEAD, branch="dev")
    assert p.wire() == {"git_sha": HEAD, "branch": "dev", "source": "manual"}
    assert p.short_sha == HEAD[:12]


def test_default_baseline_rules():
    p = provenance.Provenance(git_sha=HEAD, default_branch="main")
    assert default_baseline(p, has_dataset=False) is None  # gates-only run
    assert default_baseline(provenance.Provenance(default_branch="main"),
                            has_dataset=True) is None  # no commit facts


def test_repo_sources_and_cleaning():
    assert provenance.detect_repo({"CIRCLE_PROJECT_USERNAME": "o",
                                   "CIRCLE_PROJECT_REPONAME": "r"}) == "o/r"
    assert provenance.detect_repo({"GITHUB_REPOSITORY": "x" * 300,
                                   "CI_PROJECT_PATH": "g/p"}) == "g/p"
    assert provenance.detect_repo({"BUILD_REPOSITORY_NAME": "bad\nname"}) is None
