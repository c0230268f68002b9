"""Issue 17, in the built image run as GitHub runs a Docker action: an agent that dumps its own
environment, ``/proc/$PPID/environ`` and every other process it can see finds no CI token and
no runner file-command path, and the Neens key only in the OTLP traces exporter variable (the
traces endpoint is Neens's origin). The front door (PID 1, non-dumpable) cannot be read."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.e2e.lab import Lab
from tests.fakes.github_server import parse_outputs
from tests.helpers import ROOT, Sandbox

pytestmark = pytest.mark.e2e

AGENT_DIR = ROOT / "tests" / "integration" / "hardening"  # nosy_agent.py
TOKENS = {
    "GITHUB_TOKEN": "ghs_envTokenFromStepEnv0001",
    "INPUT_GITHUB-TOKEN": "ghs_inputTokenOfTheAction0002",
    "ACTIONS_RUNTIME_TOKEN": "eyRuntimeToken0003",
    "ACTIONS_ID_TOKEN_REQUEST_TOKEN": "eyOidcRequestToken0004",
    "CI_JOB_TOKEN": "glcbt-jobToken0005",
    "CI_REGISTRY_PASSWORD": "glcbt-registryPassword0006",
    "CI_JOB_JWT_V2": "eyJobJwt0007",
}
REPO_TOKEN = "glcbt-repositoryUrlToken0008"
FILE_COMMANDS = {  # the runner's file-command paths, as GitHub mounts them
    "GITHUB_OUTPUT": "/github/file_commands/set_output_e2e",
    "GITHUB_STEP_SUMMARY": "/github/file_commands/step_summary_e2e",
    "GITHUB_ENV": "/github/file_commands/set_env_e2e",
    "GITHUB_PATH": "/github/file_commands/add_path_e2e",
    "GITHUB_STATE": "/github/file_commands/save_state_e2e",
}


def run_as_the_action(lab: Lab, image: str, sandbox: Sandbox, tmp: Path) -> tuple[str, Path]:
    """``docker run`` the way the GitHub runner starts a Docker action (its mounts, workdir,
    ``INPUT_*`` and ``GITHUB_*`` variables, the default capabilities), no arguments."""
    dirs = {name: tmp / name for name in ("workspace", "file_commands", "home", "nosy")}
    for path in dirs.values():
        path.mkdir()
    for value in FILE_COMMANDS.values():
        (dirs["file_commands"] / Path(value).name).write_text("")
    env = {
        "GITHUB_ACTIONS": "true", "CI": "true", "HOME": "/github/home",
        "GITHUB_WORKSPACE": "/github/workspace", "GITHUB_REPOSITORY": "neens/demo",
        "GITHUB_SHA": "0" * 40, "GITHUB_REF": "refs/heads/feature/e2e",
        "GITHUB_EVENT_NAME": "push", "ACTIONS_RUNTIME_URL": "https://pipelines.invalid/",
        "ACTIONS_ID_TOKEN_REQUEST_URL": "https://token.invalid/",
        "CI_REPOSITORY_URL": f"https://gitlab-ci-token:{REPO_TOKEN}@gitlab.invalid/g/p.git",
        **FILE_COMMANDS, **TOKENS,
        "INPUT_BASE-URL": sandbox.url, "INPUT_API-KEY": sandbox.api_key,
        "INPUT_COMMAND": "python3 /agent/nosy_agent.py", "INPUT_CREATE": "true",
        "INPUT_DATASET": "ds_refunds", "INPUT_VERSION-LABEL": "nosy-e2e",
        "INPUT_CONCURRENCY": "3", "INPUT_POLL-INTERVAL": "1", "INPUT_COMMENT": "off",
        "INPUT_SUMMARY": "true", "INPUT_MODE": "run", "NOSY_OUT": "/nosy",
    }
    args = ["run", "--rm", "--network", "host", "--workdir", "/github/workspace",
            "-v", f"{dirs['workspace']}:/github/workspace",
            "-v", f"{dirs['file_commands']}:/github/file_commands",
            "-v", f"{dirs['home']}:/github/home", "-v", f"{dirs['nosy']}:/nosy",
            "-v", f"{AGENT_DIR}:/agent:ro"]
    for name, value in env.items():
        args += ["-e", f"{name}={value}"]
    proc = lab.docker_cmd(*args, image, timeout=300)
    assert proc.returncode in (0, 1), proc.stdout[-4000:]
    return proc.stdout, dirs["nosy"]


def test_the_agent_finds_no_token_and_the_key_only_where_it_needs_it(
        lab: Lab, image: str, e2e_sandbox: Sandbox, tmp_path: Path):
    log, nosy = run_as_the_action(lab, image, e2e_sandbox, tmp_path)
    assert "Traceback" not in log, log[-3000:]
    assert "no trace captured" not in log, log[-3000:]  # the agents' traces reached Neens
    outputs = parse_outputs((tmp_path / "file_commands" / "set_output_e2e").read_text())
    assert outputs["run-id"].startswith("ppr_"), outputs
    dumps = [json.loads(p.read_text()) for p in sorted(nosy.glob("*.json"))]
    assert len(dumps) == 6, log[-3000:]  # one per ds_refunds item
    key = e2e_sandbox.api_key
    secrets = [*TOKENS.values(), REPO_TOKEN]
    front_doors = 0
    for dump in dumps:
        own = dump["own"]
        # The key: only in the traces exporter's header variable, traces go to Neens.
        assert {k for k, v in own.items() if key in v} == {"OTEL_EXPORTER_OTLP_TRACES_HEADERS"}
        assert own["OTEL_EXPORTER_OTLP_TRACES_HEADERS"] == f"Authorization=Bearer {key}"
        assert own["OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"] == e2e_sandbox.url + "/v1/traces"
        assert "OTEL_EXPORTER_OTLP_HEADERS" not in own
        assert own["CI_REPOSITORY_URL"] == "https://gitlab.invalid/g/p.git"
        readable = [("own", own)] + [
            (f"{p['pid']} {p.get('cmdline', '')}", p["environ"])
            for p in dump["ancestors"] + dump["others"] if "environ" in p]
        for who, environ in readable:
            for name in [*TOKENS, *FILE_COMMANDS]:
                assert name not in environ, (who, name)
            assert not any(k.startswith("INPUT_") for k in environ), who
            for secret in secrets:
                assert not [k for k, v in environ.items() if secret in v], (who, secret)
            for name, value in environ.items():
                if key in value:
                    assert name == "OTEL_EXPORTER_OTLP_TRACES_HEADERS", (who, name)
            assert not [v for v in environ.values() if "/github/file_commands" in v], who
        # /proc/$PPID/environ and up: the front door is among the ancestors, and unreadable.
        assert dump["ancestors"], dump
        for proc in dump["ancestors"]:
            if "entrypoint.py" in proc.get("cmdline", ""):
                front_doors += 1
                assert "environ" not in proc, "the front door's environment is readable"
                assert "PermissionError" in proc["error"], proc
    assert front_doors == len(dumps)
