"""Fidelity: the vendor's own CLI (neens-eval 0.8.0) drives the sandbox unchanged.

Install it with:  python3 -m venv .venv-vendor && .venv-vendor/bin/pip install neens-eval==0.8.0
(or point NEENS_VENDOR_CLI at its ``neens`` executable). Missing => this test fails.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from tests.helpers import AGENT, PY, ROOT

DEFAULT = ROOT / ".venv-vendor" / "bin" / "neens"
HOW = ("the vendor CLI is missing: run 'python3 -m venv .venv-vendor && "
       ".venv-vendor/bin/pip install neens-eval==0.8.0' in the repo, or set NEENS_VENDOR_CLI")


@pytest.fixture
def vendor_cli() -> str:
    path = os.environ.get("NEENS_VENDOR_CLI") or str(DEFAULT)
    if not Path(path).is_file() or not os.access(path, os.X_OK):
        pytest.fail(f"{HOW} (looked for {path})")
    return path


def _vendor(cli: str, sb, mode: str, *args: str) -> subprocess.CompletedProcess:
    env = sb.agent_env(AGENT_MODE=mode)
    return subprocess.run(
        [cli, "eval", "run", "--create", "--dataset", "ds_refunds", "--poll-interval", "1",
         *args, "--json", "--", PY, str(AGENT)],
        env=env, capture_output=True, text=True, timeout=300, cwd=ROOT,
    )


def test_vendor_cli_passes_a_good_agent_and_blocks_a_regression(vendor_cli, sandbox):
    good = _vendor(vendor_cli, sandbox, "good", "--version-label", "main-1",
                   "--branch", "main", "--baseline", "branch:main", "--max-regressions", "0")
    assert good.returncode == 0, good.stderr[-3000:]
    doc = json.loads(good.stdout)
    assert doc["exitCode"] == 0 and doc["gatePassed"] is True
    assert doc["run"]["status"] == "completed" and doc["run"]["completed"] == 6
    base_id = doc["runId"]
    assert "gate:        PASSED" in good.stderr

    bad = _vendor(vendor_cli, sandbox, "bad", "--version-label", "feat-1",
                  "--branch", "feature", "--baseline", "branch:main", "--max-regressions", "0")
    assert bad.returncode == 1, bad.stderr[-3000:]
    doc = json.loads(bad.stdout)
    assert doc["run"]["status"] == "completed_with_regressions"
    assert doc["gate"]["regressions"] == 3 and doc["gate"]["passed"] is False
    assert f"Baseline: run {base_id} — branch:main:" in bad.stderr
    assert "regressions: 3" in bad.stderr
    assert doc["buildVerdict"]["verdict"] == "blocked"
    view = sandbox.get(f"/preprod-evals/{doc['runId']}").json()
    assert view["ciResult"]["exit_code"] == 1 and view["buildVerdict"] == "blocked"


def test_vendor_cli_with_eval_gates(vendor_cli, sandbox):
    env = sandbox.agent_env(AGENT_MODE="good")
    proc = subprocess.run(
        [vendor_cli, "eval", "run", "--gates", "active", "--version-label", "g1",
         "--poll-interval", "1", "--", PY, str(AGENT)],
        env=env, capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "Enforcing 1 eval gate(s)" in proc.stderr
    assert "1/1 passed" in proc.stderr
    env["AGENT_MODE"] = "bad"
    proc = subprocess.run(
        [vendor_cli, "eval", "run", "--gates", "gate-refund,gate-leak", "--version-label",
         "g2", "--poll-interval", "1", "--", PY, str(AGENT)],
        env=env, capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert proc.returncode == 1, proc.stderr[-3000:]
    assert "1 enforced gate(s) failing the build" in proc.stderr


def test_vendor_cli_push_and_policy(vendor_cli, tmp_path, monkeypatch):
    from tests.helpers import start_http_agent, start_sandbox

    agent, port = start_http_agent()
    monkeypatch.setenv("NEENS_HTTP_AGENT_PORT", str(port))
    sb = start_sandbox(tmp_path)
    try:
        env = sb.agent_env()
        ok = subprocess.run(
            [vendor_cli, "eval", "push", "--dataset", "ds_refunds", "--version-label", "p1",
             "--agent-connection", "conn_local", "--min-pass-rate", "0.9", "--json"],
            env=env, capture_output=True, text=True, timeout=300, cwd=ROOT)
        assert ok.returncode == 0, ok.stderr[-3000:]
        assert json.loads(ok.stdout)["run"]["status"] == "completed"
        down = subprocess.run(
            [vendor_cli, "eval", "push", "--dataset", "ds_refunds", "--version-label", "p2",
             "--agent-connection", "conn_down"],
            env=env, capture_output=True, text=True, timeout=300, cwd=ROOT)
        assert down.returncode == 2, down.stderr[-3000:]  # a failed run is a run error
        policy = tmp_path / "policy.json"
        policy.write_text(json.dumps({"rules": [
            {"metric": "correctness", "min_avg": 0.99},
            {"cost": {"max_avg_usd": 0.5}, "severity": "warn"},
            {"latency": {"max_delta_pct": 100000}}]}), encoding="utf-8")
        env["AGENT_MODE"] = "bad"
        blocked = subprocess.run(
            [vendor_cli, "eval", "run", "--create", "--dataset", "ds_refunds",
             "--version-label", "pol", "--gate-policy", str(policy), "--poll-interval", "1",
             "--json", "--", PY, str(AGENT)],
            env=env, capture_output=True, text=True, timeout=300, cwd=ROOT)
        assert blocked.returncode == 1, blocked.stderr[-3000:]
        results = json.loads(blocked.stdout)["policyEval"]["results"]
        by_label = {r["dimension"]: r for r in results}
        assert by_label["metric[correctness]"]["status"] == "fail"
        assert by_label["metric[correctness]"]["observed"] == 0.5
        assert by_label["cost"]["status"] == "pass"
    finally:
        sb.stop()
        agent.terminate()
        agent.wait(10)
