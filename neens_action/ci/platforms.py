"""The CI platforms we know, one table entry each: GitHub Actions, GitLab CI, Jenkins, and
``generic`` (any other CI, ``docker run``, a laptop).

An entry says everything platform-specific in one place: how the platform is detected, where
its workspace is, the URL of the running job, the commit facts its variables carry (the
provenance reader), the secrets it puts in the job's environment (scrubbed from the agents'
environment), the token its publisher posts with, and its publisher.

The platform is resolved once per process, by :func:`detect`, where the outside world is built
(:class:`neens_action.world.World`, the CI front door) and passed in from there. Adding a
platform is one :class:`Platform` in :data:`PLATFORMS` (before ``generic``, which matches
everything) and one publisher class.

This module sits below everything that reads it (settings, report links, the CLI's start-up)
and imports nothing of ours: it names each publisher (``"module:Class"``) instead of
importing it, and :meth:`Platform.publisher_class` imports it when the front door publishes.
The commit-fact readers live in :mod:`neens_action.ci.commit_facts`.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from neens_action.ci.commit_facts import (
    CommitFacts,
    ReadText,
    github_facts,
    gitlab_facts,
    jenkins_facts,
    no_facts,
    truthy,
)

Environ = Mapping[str, str]

# Ours, on every platform: the key reaches agents only as the OTLP exporter header it needs,
# and the action's inputs (tokens among them) are the front door's.
OWN_SECRETS = frozenset({"NEENS_API_KEY", "NEENS_GITLAB_TOKEN"})
OWN_SECRET_PREFIXES = ("INPUT_", "NEENS_INPUT_")


def _var(name: str) -> Callable[[Environ], str]:
    return lambda env: (env.get(name) or "").strip()


def _no_token(inputs: Mapping[str, Any], environ: Environ) -> str:
    return ""


@dataclass(frozen=True)
class Platform:
    """One CI platform. ``publisher`` is a class taking a ``PublishConfig`` (see
    :mod:`neens_action.publish.publishers`), or its ``"module:Class"`` name."""

    name: str  # github | gitlab | jenkins | generic
    detect: Callable[[Environ], bool]
    workspace_var: str  # "" = none of its own
    job_url: Callable[[Environ], str]  # the running job's page, "" when unknown
    commit_facts: Callable[[Environ, ReadText | None], CommitFacts]
    publisher: str | type
    secrets: frozenset[str] = frozenset()  # variables only the front door may read
    token: Callable[[Mapping[str, Any], Environ], str] = field(default=_no_token)
    report_name: str = ""  # its name in a report's context; "" = ``name``
    workflow_commands: bool = False  # its log runs ``::commands::`` (the CLI shields itself)

    @property
    def context_name(self) -> str:
        return self.report_name or self.name

    def publisher_class(self) -> type:
        """The publisher class, imported now (not when the table is read)."""
        if not isinstance(self.publisher, str):
            return self.publisher
        module, _, name = self.publisher.partition(":")
        cls = getattr(importlib.import_module(module), name)
        assert isinstance(cls, type), self.publisher
        return cls


def _github_job(env: Environ) -> str:
    server = env.get("GITHUB_SERVER_URL", "https://github.com").strip()
    repo, run_id = _var("GITHUB_REPOSITORY")(env), _var("GITHUB_RUN_ID")(env)
    return f"{server}/{repo}/actions/runs/{run_id}"


GITHUB = Platform(
    name="github",
    detect=lambda env: truthy(env.get("GITHUB_ACTIONS")),
    workspace_var="GITHUB_WORKSPACE",
    job_url=_github_job,
    commit_facts=github_facts,
    publisher="neens_action.publish.publishers:GitHubPublisher",
    secrets=frozenset({
        "GITHUB_TOKEN", "GH_TOKEN", "ACTIONS_RUNTIME_TOKEN", "ACTIONS_RUNTIME_URL",
        "ACTIONS_ID_TOKEN_REQUEST_TOKEN", "ACTIONS_ID_TOKEN_REQUEST_URL", "ACTIONS_CACHE_URL",
        "ACTIONS_RESULTS_URL",
        # the runner's file-command paths: an agent writing $GITHUB_OUTPUT could forge ours
        "GITHUB_OUTPUT", "GITHUB_STEP_SUMMARY", "GITHUB_ENV", "GITHUB_PATH", "GITHUB_STATE",
    }),
    token=lambda inputs, env: str(inputs.get("github-token") or ""),
    workflow_commands=True,
)

GITLAB = Platform(
    name="gitlab",
    detect=lambda env: truthy(env.get("GITLAB_CI")),
    workspace_var="CI_PROJECT_DIR",
    job_url=_var("CI_JOB_URL"),
    commit_facts=gitlab_facts,
    publisher="neens_action.publish.publishers:GitLabPublisher",
    secrets=frozenset({
        "CI_JOB_TOKEN", "CI_BUILD_TOKEN", "CI_JOB_JWT", "CI_JOB_JWT_V1", "CI_JOB_JWT_V2",
        "CI_REGISTRY_PASSWORD", "CI_DEPENDENCY_PROXY_PASSWORD", "CI_DEPLOY_PASSWORD",
    }),
    token=lambda inputs, env: (env.get("NEENS_GITLAB_TOKEN") or "").strip(),
)

JENKINS = Platform(
    name="jenkins",
    detect=lambda env: bool((env.get("JENKINS_URL") or "").strip()),
    workspace_var="WORKSPACE",
    job_url=_var("BUILD_URL"),
    commit_facts=jenkins_facts,
    publisher="neens_action.publish.publishers:FilesPublisher",
)

GENERIC = Platform(
    name="generic",
    detect=lambda env: True,
    workspace_var="",
    job_url=lambda env: "",
    commit_facts=no_facts,
    publisher="neens_action.publish.publishers:FilesPublisher",
    report_name="local",
)

PLATFORMS: list[Platform] = [GITHUB, GITLAB, JENKINS, GENERIC]  # first match wins


def detect(environ: Environ) -> Platform:
    """The platform this environment belongs to (``generic`` when none matches)."""
    for platform in PLATFORMS:
        if platform.detect(environ):
            return platform
    return GENERIC


def by_name(name: str) -> Platform:
    for platform in PLATFORMS:
        if platform.name == name:
            return platform
    raise KeyError(name)


def workspace(environ: Environ) -> Path:
    """The job's workspace: the first workspace variable of the table that is set (a
    container may see another platform's too), else the current directory."""
    for platform in PLATFORMS:
        value = environ.get(platform.workspace_var) if platform.workspace_var else None
        if value:
            return Path(value)
    return Path.cwd()


def is_secret(name: str) -> bool:
    """True for a variable the agents never see: ours and every platform's secrets."""
    return (name.startswith(OWN_SECRET_PREFIXES) or name in OWN_SECRETS
            or any(name in p.secrets for p in PLATFORMS))


__all__ = ["GENERIC", "GITHUB", "GITLAB", "JENKINS", "PLATFORMS", "CommitFacts", "Platform",
           "by_name", "detect", "is_secret", "workspace"]
