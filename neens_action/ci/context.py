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
from neens_action.ci.platforms import Platform, is_secret
from neens_action.otlp import TRACES_PATH, origin_text, same_origin, traces_endpoint, with_key
from neens_action.policy import GatePolicy
from neens_action.publish.actions import Commands
from neens_action.settings.connection import Connection
from neens_action.world import World

# scheme://user:password@host...: the userinfo is dropped from every such value
_USERINFO = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*://)[^/?#\s]*@")


@dataclass
class CiContext:
    """What a mode builder gets: the parsed inputs and the world its flow will use."""

    environ: Mapping[str, str] = field(repr=False)  # the job's environment, as received
    platform: Platform  # resolved once, by the front door
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

    Denied (docs/trust-boundary.md): the action's inputs (tokens inside), our key, and every
    platform's secrets (:func:`neens_action.ci.platforms.is_secret`: tokens, and the runner's
    file-command paths, as an agent writing $GITHUB_OUTPUT could forge our outputs). They
    are dropped and userinfo is stripped from URLs; the Neens URL
    is exported as ``NEENS_BASE_URL``. Traces go to Neens unless the job points them
    elsewhere; the key is added, as the traces-only header variable (so metric and log
    exporters never send it), only when the traces endpoint has ``base-url``'s origin. A
    job whose traces go elsewhere keeps its variables as they are, and ``warn`` says so once.
    """
    env = {k: _USERINFO.sub(r"\1", v) for k, v in environ.items()
           if not is_secret(k)}
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
