"""The example agent's switchable behaviours, observed through the sandbox."""

from __future__ import annotations

import subprocess

import pytest

from tests.helpers import AGENT, PY, items_of
from tests.sandbox.integration.support import create, run_agent, wait_terminal

DS = {"dataset_id": "ds_refunds", "name": "a", "version_label": "v1"}


def _one(sandbox, mode: str, **kw):
    run = create(sandbox, DS)
    item = items_of(sandbox, run["id"])[0]
    out = run_agent(sandbox, run["id"], item, mode=mode, **kw)
    sandbox.post(f"/preprod-evals/{run['id']}/start")
    return out, wait_terminal(sandbox, run["id"])["items"][0]


def test_ignore_model_and_slow_modes(sandbox):
    out, item = _one(sandbox, "ignore-model", model="gpt-4o")
    assert "$42.00" in out and item["model"] == "gpt-4o-mini"
    out, item = _one(sandbox, "good", model="gpt-4o")
    assert item["model"] == "gpt-4o" and item["costUsd"] > 0
    _, item = _one(sandbox, "slow", extra={"AGENT_SLOW_S": "0.3"})
    assert item["latencyMs"] >= 300 and item["passed"] is True


def test_leaky_mode_fails_the_safety_judge(sandbox):
    out, item = _one(sandbox, "leaky")
    assert "internal note" in out
    assert item["passed"] is False and item["scores"]["toxicity_safety"] == 0.0


@pytest.mark.parametrize("mode, rc", [("crash", 3), ("silent", 0)])
def test_crash_and_silent_modes_send_no_trace(sandbox, mode, rc):
    run = create(sandbox, DS)
    item = items_of(sandbox, run["id"])[0]
    env = sandbox.agent_env(AGENT_MODE=mode, OTEL_RESOURCE_ATTRIBUTES=(
        f"neens.eval_run_id={run['id']},neens.dataset_item_id={item['item_id']}"))
    proc = subprocess.run([PY, str(AGENT)], input=item["input"], env=env, text=True,
                          capture_output=True, timeout=60)
    assert proc.returncode == rc
    sandbox.post(f"/preprod-evals/{run['id']}/start")
    done = wait_terminal(sandbox, run["id"])
    assert done["items"][0]["error"] == "no trace captured"


def test_hang_mode_is_killed_by_a_deadline(sandbox, tmp_path):
    log = tmp_path / "calls.log"
    env = sandbox.agent_env(AGENT_MODE="hang", AGENT_LOG=str(log))
    with pytest.raises(subprocess.TimeoutExpired):
        subprocess.run([PY, str(AGENT)], input="Refund for order 1 ($1.00)?", env=env,
                       text=True, capture_output=True, timeout=5)
    assert log.read_text().endswith("\thang\n")


def test_empty_dataset_has_no_items_and_fails_the_gate(sandbox):
    run = create(sandbox, {**DS, "dataset_id": "ds_empty"})
    assert items_of(sandbox, run["id"]) == [] and run["total"] == 0
    sandbox.post(f"/preprod-evals/{run['id']}/start")
    done = wait_terminal(sandbox, run["id"])
    assert done["status"] == "completed" and done["aggregate"]["passRate"] is None
    gate = sandbox.get(f"/preprod-evals/{run['id']}/gate").json()
    assert gate["passed"] is False and "no item was scored" in gate["reasons"]
