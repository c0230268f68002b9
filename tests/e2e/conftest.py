"""Session fixtures of the e2e tier: the lab, the image (built once), one sandbox."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.lab import Lab, action_image, build_image, find_lab
from tests.helpers import ROOT, Sandbox, start_sandbox

# Where the e2e logs (docker build, act, gitlab-ci-local) are kept for a failing run.
LOGS = ROOT / ".neens" / "e2e-logs"


@pytest.fixture(scope="session")
def lab() -> Lab:
    return find_lab()


@pytest.fixture(scope="session")
def e2e_logs() -> Path:
    LOGS.mkdir(parents=True, exist_ok=True)
    return LOGS


@pytest.fixture(scope="session")
def image(lab: Lab, e2e_logs: Path) -> str:
    """The action's image, built from this Dockerfile under the exact tag action.yml names
    (act and gitlab-ci-local then use the local image; nothing is pulled)."""
    tag = action_image()
    seconds = build_image(lab, tag, e2e_logs / "docker-build.log")
    print(f"docker build {tag}: {seconds:.1f}s")
    return tag


@pytest.fixture(scope="session")
def e2e_sandbox(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Sandbox]:
    """One sandbox for the tier on a random loopback port (each test creates its own runs)."""
    sb = start_sandbox(tmp_path_factory.mktemp("e2e-sandbox"))
    yield sb
    sb.stop()


@pytest.fixture(scope="session")
def baseline_run(e2e_sandbox: Sandbox) -> str:
    """A completed passing run over ds_refunds, made on the host with the real CLI, for the
    regression cases to compare with (``baseline: run:<id>``)."""
    from tests.helpers import AGENT, PY, run_cli

    env = e2e_sandbox.agent_env(AGENT_MODE="good")
    started = time.monotonic()
    proc = run_cli(
        ["eval", "run", "--create", "--dataset", "ds_refunds", "--version-label", "e2e-base",
         "--poll-interval", "1", "--json", "--", PY, str(AGENT)], env, timeout=180,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    import json

    run_id = json.loads(proc.stdout)["runId"]
    print(f"baseline run {run_id}: {time.monotonic() - started:.1f}s")
    return run_id
