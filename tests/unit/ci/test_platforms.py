"""The platform table: one entry per CI, each read the same way by every caller."""

from __future__ import annotations

from pathlib import Path

import pytest

from neens_action.ci import platforms
from neens_action.ci.context import agent_environment
from neens_action.ci.inputs import parse_inputs
from neens_action.publish.publishers import FilesPublisher, GitHubPublisher, GitLabPublisher
from neens_action.report.links import ci_context
from neens_action.settings import provenance
from neens_action.world import World


def test_detection_first_match_wins_and_generic_takes_the_rest() -> None:
    assert platforms.detect({"GITHUB_ACTIONS": "true"}) is platforms.GITHUB
    assert platforms.detect({"GITLAB_CI": "true"}) is platforms.GITLAB
    assert platforms.detect({"JENKINS_URL": "http://j"}) is platforms.JENKINS
    assert platforms.detect({}) is platforms.GENERIC
    assert platforms.detect({"CI": "true"}) is platforms.GENERIC
    assert platforms.detect({"GITHUB_ACTIONS": "true", "GITLAB_CI": "true"}) is platforms.GITHUB
    assert platforms.detect({"GITHUB_ACTIONS": "false", "JENKINS_URL": " "}) is platforms.GENERIC
    assert [p.name for p in platforms.PLATFORMS] == ["github", "gitlab", "jenkins", "generic"]


@pytest.mark.parametrize("env", [{"GITHUB_ACTIONS": "1"}, {"GITHUB_ACTIONS": " TRUE "},
                                 {"GITHUB_ACTIONS": "yes"}])
def test_every_reader_sees_the_same_platform(env: dict[str, str]) -> None:
    """The front door, provenance, the report's context and the world agree."""
    assert platforms.detect(env) is platforms.GITHUB
    assert provenance.detect(env).platform == "github"
    assert ci_context(env)["platform"] == "github"
    assert World(environ=env).platform is platforms.GITHUB


def test_the_world_keeps_the_platform_it_is_given() -> None:
    world = World(environ={}, platform=platforms.GITLAB)
    assert world.platform is platforms.GITLAB
    assert ci_context({"CI_JOB_URL": "https://gl/j/1"}, world.platform) == {
        "platform": "gitlab", "job_url": "https://gl/j/1"}


def test_workspace_is_the_first_variable_of_the_table_that_is_set(tmp_path: Path) -> None:
    assert platforms.workspace({"WORKSPACE": "/w", "CI_PROJECT_DIR": "/c"}) == Path("/c")
    assert platforms.workspace({"GITHUB_WORKSPACE": "/g", "WORKSPACE": "/w"}) == Path("/g")
    assert platforms.workspace({"WORKSPACE": "/w"}) == Path("/w")
    assert platforms.workspace({}) == Path.cwd()


def test_job_urls() -> None:
    gh = {"GITHUB_ACTIONS": "true", "GITHUB_REPOSITORY": "acme/agent", "GITHUB_RUN_ID": "7"}
    assert ci_context(gh) == {"platform": "github",
                              "job_url": "https://github.com/acme/agent/actions/runs/7"}
    ghe = dict(gh, GITHUB_SERVER_URL="https://ghe.example")
    assert ci_context(ghe)["job_url"] == "https://ghe.example/acme/agent/actions/runs/7"
    jenkins = {"JENKINS_URL": "https://j", "BUILD_URL": "https://j/job/x/3/"}
    assert ci_context(jenkins) == {"platform": "jenkins", "job_url": "https://j/job/x/3/"}
    assert ci_context({"GITLAB_CI": "true", "CI_JOB_URL": "javascript:alert(1)"}) == {
        "platform": "gitlab", "job_url": ""}
    assert ci_context({"CI": "true"}) == {"platform": "local", "job_url": ""}


def test_secrets_of_every_platform_are_kept_from_the_agents() -> None:
    env = {name: "s3cret" for p in platforms.PLATFORMS for name in p.secrets}
    env.update({"NEENS_API_KEY": "k", "NEENS_GITLAB_TOKEN": "t", "INPUT_GITHUB-TOKEN": "g",
                "NEENS_INPUT_API_KEY": "k", "PATH": "/bin", "GITHUB_SHA": "abc"})
    assert {"GITHUB_TOKEN", "GITHUB_OUTPUT", "ACTIONS_RUNTIME_TOKEN", "CI_JOB_TOKEN",
            "CI_JOB_JWT_V2", "CI_REGISTRY_PASSWORD"} <= env.keys()
    assert agent_environment(env, parse_inputs({})) == {"PATH": "/bin", "GITHUB_SHA": "abc"}


def test_token_and_publisher_of_each_platform() -> None:
    inputs = parse_inputs({"INPUT_GITHUB-TOKEN": "ghs_x"})
    env = {"NEENS_GITLAB_TOKEN": " glpat \n"}
    assert platforms.GITHUB.token(inputs, env) == "ghs_x"
    assert platforms.GITLAB.token(inputs, env) == "glpat"
    assert platforms.JENKINS.token(inputs, env) == ""
    assert platforms.GENERIC.token(inputs, env) == ""
    assert [p.publisher_class() for p in platforms.PLATFORMS] == [
        GitHubPublisher, GitLabPublisher, FilesPublisher, FilesPublisher]


def test_provenance_reads_the_platform_it_is_given() -> None:
    env = {"CI": "true", "GIT_COMMIT": "a" * 40, "BRANCH_NAME": "main",
           "GIT_URL": "https://git.example/team/repo.git"}
    assert provenance.detect(env).platform == "ci"  # no JENKINS_URL: another CI
    prov = provenance.detect(env, platform=platforms.JENKINS)
    assert (prov.platform, prov.git_sha, prov.branch, prov.repo) == (
        "jenkins", "a" * 40, "main", "team/repo")

