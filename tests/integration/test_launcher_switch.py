"""NEENS_LAUNCHER through the real CLI, sandbox and example agent: popen works, anything
else is one clear line and exit 2."""

from __future__ import annotations

import subprocess

from tests.helpers import AGENT, PY, TEST_KEY, Sandbox, run_cli

CREATE = ["eval", "run", "--create", "--dataset", "ds_refunds", "--concurrency", "2",
          "--version-label", "good-1", "--", PY, str(AGENT)]


def cli(sandbox: Sandbox, **env: str) -> subprocess.CompletedProcess:
    proc = run_cli(CREATE, sandbox.agent_env(**env), timeout=180)
    assert "Traceback" not in proc.stderr and TEST_KEY not in proc.stderr
    return proc


def test_neens_launcher_popen_runs_the_agents(sandbox):
    proc = cli(sandbox, NEENS_LAUNCHER="popen")
    assert proc.returncode == 0, proc.stderr
    assert "with rc=0" in proc.stderr


def test_neens_launcher_portable_runs_the_agents(sandbox):
    """The Windows/macOS path (threads, no poll), forced on Linux."""
    proc = cli(sandbox, NEENS_LAUNCHER="portable")
    assert proc.returncode == 0, proc.stderr
    assert "with rc=0" in proc.stderr


def test_a_bad_neens_launcher_exits_2_with_one_line(sandbox):
    proc = cli(sandbox, NEENS_LAUNCHER="spawn")
    assert proc.returncode == 2, proc.stderr
    errors = [line for line in proc.stderr.splitlines() if line.startswith("neens: error:")]
    assert errors == ["neens: error: NEENS_LAUNCHER must be popen, glibc or portable (got 'spawn')"]
    assert proc.stderr.strip().splitlines() == errors  # refused before any request: no run
    assert "Created run" not in proc.stderr
