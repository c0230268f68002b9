"""What every CI mode is handed: the platform, the parsed inputs, the agents' environment,
and what a mode hands back (:class:`Plan`: a job of the registry, its settings, its policy).

Shared types of the CI front door live here, below ``ci/main.py`` and ``ci/modes/``, so the
modes never import the front door.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from neens_action.ci.inputs import Inputs
from neens_action.otlp import TRACES_PATH, origin_text, same_origin, traces_endpoint, with_key
from neens_action.policy import GatePolicy
from neens_action.publish.actions import Commands
from neens_action.settings.connection import Connection
from neens_action.world import World

# The agents' environment (docs/trust-boundary.md): the job's environment minus what only the
# front door needs. Denied: the action's inputs (tokens inside), the CI platforms' tokens and
# the runner's file-command paths (an agent writing $GITHUB_OUTPUT could forge our outputs).
_SCRUB_PREFIXES = ("INPUT_", "NEENS_INPUT_")
_SCRUB = frozenset({
    # ours: the key reaches agents only as the OTLP exporter header it needs
    "NEENS_API_KEY", "NEENS_GITLAB_TOKEN",
    # GitHub Actions
    "GITHUB_TOKEN", "GH_TOKEN", "ACTIONS_RUNTIME_TOKEN", "ACTIONS_RUNTIME_URL",
    "ACTIONS_ID_TOKEN_REQUEST_TOKEN", "ACTIONS_ID_TOKEN_REQUEST_URL", "ACTIONS_CACHE_URL",
    "ACTIONS_RESULTS_URL", "GITHUB_OUTPUT", "GITHUB_STEP_SUMMARY", "GITHUB_ENV", "GITHUB_PATH",
    "GITHUB_STATE",
    # GitLab CI
    "CI_JOB_TOKEN", "CI_BUILD_TOKEN", "CI_JOB_JWT", "CI_JOB_JWT_V1", "CI_JOB_JWT_V2",
    "CI_REGISTRY_PASSWORD", "CI_DEPENDENCY_PROXY_PASSWORD", "CI_DEPLOY_PASSWORD",
})
# scheme://user:password@host...: the userinfo is dropped from every such value
_USERINFO = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*://)[^/?#\s]*@")


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

    environ: Mapping[str, str] = field(repr=False)  # the job's environment, as received
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


def agent_environment(environ: Mapping[str, str], inputs: Inputs,
                      warn: Callable[[str], None] | None = None) -> dict[str, str]:
    """The environment the install command and the agents run with.

    The denied variables above are dropped and userinfo is stripped from URLs; the Neens URL
    is exported as ``NEENS_BASE_URL``. Traces go to Neens unless the job points them
    elsewhere; the key is added, as the traces-only header variable (so metric and log
    exporters never send it), only when the traces endpoint has ``base-url``'s origin. A
    job whose traces go elsewhere keeps its variables as they are, and ``warn`` says so once.
    """
    env = {k: _USERINFO.sub(r"\1", v) for k, v in environ.items()
           if not k.startswith(_SCRUB_PREFIXES) and k not in _SCRUB}
    base_url, api_key = inputs.get("base-url"), inputs.get("api-key")
    if not base_url:
        return env
    env["NEENS_BASE_URL"] = base_url
    endpoint = traces_endpoint(env)
    if endpoint is None:
        endpoint = env["OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"] = base_url.rstrip("/") + TRACES_PATH
    if not api_key:
        return env
    if same_origin(endpoint, base_url):
        headers = with_key(env, api_key)
        if headers is not None:
            env["OTEL_EXPORTER_OTLP_TRACES_HEADERS"] = headers
    elif warn is not None:
        warn(f"neens: warning: the agents export traces to {origin_text(endpoint)}, not to "
             "base-url: the Neens key is not added to their exporter headers (traces reach "
             "Neens only if that collector forwards them with the key)")
    return env


def artifact_path(ctx: CiContext, name: str) -> str | None:
    """An artifact input as an absolute path (relative ones live in the workspace); None
    when switched off."""
    value = ctx.inputs.get(name)
    if not value or value.lower() in ("off", "none", "false"):
        return None
    path = Path(value)
    return str(path if path.is_absolute() else ctx.workspace / path)
