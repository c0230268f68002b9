"""What every CI mode is handed: the platform, the parsed inputs, the agents' environment,
and what a mode hands back (:class:`Plan`: a job of the registry, its settings, its policy).

Shared types of the CI front door live here, below ``ci/main.py`` and ``ci/modes/``, so the
modes never import the front door.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from neens_action.ci.inputs import Inputs
from neens_action.policy import GatePolicy
from neens_action.publish.actions import Commands
from neens_action.settings.connection import Connection
from neens_action.world import World

# Variables the agents and the install command never need to see.
_SCRUB_PREFIXES = ("INPUT_", "NEENS_INPUT_")
_SCRUB = {"NEENS_GITLAB_TOKEN", "ACTIONS_RUNTIME_TOKEN", "ACTIONS_ID_TOKEN_REQUEST_TOKEN"}


def detect_platform(environ: Mapping[str, str]) -> str:
    """``github`` | ``gitlab`` | ``jenkins`` | ``generic``."""
    if environ.get("GITHUB_ACTIONS") == "true":
        return "github"
    if environ.get("GITLAB_CI") == "true":
        return "gitlab"
    if environ.get("JENKINS_URL"):
        return "jenkins"
    return "generic"


def workspace_of(environ: Mapping[str, str]) -> Path:
    for var in ("GITHUB_WORKSPACE", "CI_PROJECT_DIR", "WORKSPACE"):
        if environ.get(var):
            return Path(environ[var])
    return Path.cwd()


@dataclass
class CiContext:
    """What a mode builder gets: the parsed inputs and the world its flow will use."""

    environ: Mapping[str, str]  # the job's environment, as received
    platform: str
    inputs: Inputs
    world: World  # environ here is the agents' environment (secrets for us scrubbed)
    workspace: Path
    commands: Commands | None = None  # GitHub only

    def log(self, line: str) -> None:
        self.world.log(line)


@dataclass
class Plan:
    """What a mode builds from the inputs: the job to run (a name in ``neens_action.jobs``),
    its validated settings and the gate-as-code policy (or None)."""

    job: str
    settings: Connection
    policy: GatePolicy | None = None


def agent_environment(environ: Mapping[str, str], inputs: Inputs) -> dict[str, str]:
    """The environment the install command and the agents run with.

    Action inputs (and the GitHub/GitLab tokens inside them) are dropped; the Neens URL and key
    are exported as ``NEENS_*``, and the OTLP exporter is pointed at Neens unless the job
    already configured it, so an OpenTelemetry agent needs no extra set-up.
    """
    env = {k: v for k, v in environ.items()
           if not k.startswith(_SCRUB_PREFIXES) and k not in _SCRUB}
    base_url, api_key = inputs.get("base-url"), inputs.get("api-key")
    if base_url:
        env["NEENS_BASE_URL"] = base_url
        if not env.get("OTEL_EXPORTER_OTLP_ENDPOINT") and not env.get(
            "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"
        ):
            env["OTEL_EXPORTER_OTLP_ENDPOINT"] = base_url
    if api_key:
        env["NEENS_API_KEY"] = api_key
        if not env.get("OTEL_EXPORTER_OTLP_HEADERS") and not env.get(
            "OTEL_EXPORTER_OTLP_TRACES_HEADERS"
        ):
            env["OTEL_EXPORTER_OTLP_HEADERS"] = f"Authorization=Bearer {api_key}"
    return env


def artifact_path(ctx: CiContext, name: str) -> str | None:
    """An artifact input as an absolute path (relative ones live in the workspace); None
    when switched off."""
    value = ctx.inputs.get(name)
    if not value or value.lower() in ("off", "none", "false"):
        return None
    path = Path(value)
    return str(path if path.is_absolute() else ctx.workspace / path)
