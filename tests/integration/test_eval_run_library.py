"""Library use (``run_eval``) and reliability under injected faults, against the real sandbox."""

from __future__ import annotations

import io
import os
import subprocess

from neens_action import NeensEvalClient, run_eval
from neens_action.world import World
from tests.helpers import AGENT, PY, TEST_KEY, run_cli, start_sandbox


def create_run(sandbox, label: str, attempts: int = 20) -> str:
    """POST /preprod-evals from the test itself (retrying the sandbox's injected faults)."""
    last = None
    for _ in range(attempts):
        try:
            resp = sandbox.post("/preprod-evals", json={"name": label, "version_label": label,
                                                        "dataset_id": "ds_refunds"})
        except OSError as exc:  # a dropped connection
            last = exc
            continue
        if resp.status_code in (200, 201):
            return resp.json()["id"]
        last = resp.text
    raise AssertionError(f"could not create a run: {last}")


def test_run_eval_library(sandbox, monkeypatch):
    for key, value in sandbox.agent_env().items():
        if key.startswith(("OTEL_", "NEENS_")):
            monkeypatch.setenv(key, value)
    run_id = create_run(sandbox, "lib-1")
    client = NeensEvalClient(sandbox.url, api_key=sandbox.api_key)
    err = io.StringIO()
    outcome = run_eval(run_id, [PY, str(AGENT)], client=client, per_item_timeout=60,
                       concurrency=3, world=World(environ=dict(os.environ), err=err))
    assert outcome.exit_code == 0 and outcome.build_verdict == "passed"
    assert outcome.policy_eval is None and outcome.ci_result_reported
    assert len(outcome.invocations) == 6
    assert "  gate:        PASSED" in err.getvalue() and TEST_KEY not in err.getvalue()
    assert sandbox.get(f"/preprod-evals/{run_id}").json()["buildVerdict"] == "passed"

    # a policy, and opting out of the ci-result report
    from neens_action import GatePolicy

    run2 = create_run(sandbox, "lib-2")
    policy = GatePolicy.from_dict({"rules": [{"min_avg_score": 0.99}]})
    o2 = run_eval(run2, f"AGENT_MODE=bad {PY} {AGENT}", client=client, concurrency=2,
                  policy=policy, report_ci_result=False,
                  world=World(environ=dict(os.environ), err=io.StringIO()))
    assert o2.exit_code == 1 and o2.policy_eval.blocked and o2.policy_eval.reasons()
    assert not o2.ci_result_reported
    assert sandbox.get(f"/preprod-evals/{run2}").json()["buildVerdict"] == "unknown"


def test_run_survives_injected_faults(tmp_path):
    """Every safe call is retried: 500s, 429s with Retry-After, dropped connections, stalls."""
    sb = start_sandbox(tmp_path, extra=["--chaos", "0.15", "--chaos-seed", "7"])
    try:
        run_id = create_run(sb, "chaos-1")
        proc = run_cli(["eval", "run", "--run-id", run_id, "--concurrency", "3", "--json",
                        "--", PY, str(AGENT)], sb.agent_env(), timeout=300)
        assert TEST_KEY not in proc.stdout + proc.stderr and "Traceback" not in proc.stderr
        assert proc.returncode == 0, proc.stderr
        hits = [line for line in sb.log.read_text().splitlines()
                if f"/preprod-evals/{run_id}" in line and "(chaos)" in line]
        assert hits  # faults really hit the CLI's calls (deterministic with the seed)
    finally:
        sb.stop()


def test_version_flag_is_fast_and_plain():
    proc = subprocess.run([PY, "-m", "neens_action", "--version"], capture_output=True,
                          text=True, timeout=60)
    assert proc.returncode == 0 and proc.stdout.startswith("neens ")
