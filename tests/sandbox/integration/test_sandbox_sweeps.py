"""The sandbox's model sweeps (E12-E16, spec 11.12, decision 12) over real HTTP, with the real
example agents (the OTel SDK agent for runner sweeps, the HTTP agent for push sweeps)."""

from __future__ import annotations

import json
import os
import subprocess
import time
from collections.abc import Iterator
from typing import Any

import pytest

from neens_action.agents.correlation import SweepTag, item_env
from tests.helpers import PY, ROOT, Sandbox, db_count, items_of, start_http_agent, start_sandbox

SEED = ROOT / "tests" / "integration" / "data" / "sweep_seed.yaml"
WRAPPER = ROOT / "tests" / "integration" / "data" / "sweep_agent.py"
TERMINAL = {"completed", "completed_with_failures", "failed", "cancelled", "void"}


@pytest.fixture
def sb(tmp_path) -> Iterator[Sandbox]:
    sandbox = start_sandbox(tmp_path, seed=SEED)
    yield sandbox
    sandbox.stop()


@pytest.fixture
def push_sb(tmp_path, monkeypatch) -> Iterator[Sandbox]:
    """A sandbox whose conn_good / conn_bad reach two real HTTP agents (good and bad)."""
    good, good_port = start_http_agent("--mode", "good")
    bad, bad_port = start_http_agent("--mode", "bad")
    monkeypatch.setenv("SWEEP_GOOD_PORT", str(good_port))
    monkeypatch.setenv("SWEEP_BAD_PORT", str(bad_port))
    sandbox = start_sandbox(tmp_path, seed=SEED)
    try:
        yield sandbox
    finally:
        sandbox.stop()
        for proc in (good, bad):
            proc.terminate()
            proc.wait(10)


def runner_arms(*pairs: tuple[str, str]) -> list[dict[str, str]]:
    return [{"label": label, "model": model, "runnerMode": "runner"} for label, model in pairs]


def body(arms: list[dict[str, Any]], **kw: Any) -> dict[str, Any]:
    return {"name": "bake-off", "versionLabel": "v1", "datasetId": "ds_sweep", "arms": arms,
            **kw}


def create(sb: Sandbox, data: dict[str, Any]) -> dict[str, Any]:
    resp = sb.post("/model-sweeps", json=data)
    assert resp.status_code in (200, 201), resp.text
    return resp.json()


def refused(sb: Sandbox, path: str, data: dict[str, Any], status: int = 422) -> str:
    resp = sb.post(path, json=data)
    assert resp.status_code == status, resp.text
    return resp.json()["detail"]


def wait_sweep(sb: Sandbox, sweep_id: str, timeout: float = 90) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    delay = 0.05
    while True:
        sweep = sb.get(f"/model-sweeps/{sweep_id}").json()
        if sweep["status"] in TERMINAL:
            return sweep
        assert time.monotonic() < deadline, f"sweep stuck in {sweep['status']}"
        time.sleep(delay)
        delay = min(delay * 1.5, 0.5)


def drive_run(sb: Sandbox, sweep: dict[str, Any], arm: dict[str, Any], run: dict[str, Any],
              *, bad: bool = False, service: str | None = None) -> None:
    """What ``sweep run`` does for one child run: the agent per item, then /start."""
    items = items_of(sb, run["runId"])
    for item in items:
        env = item_env(run_id=run["runId"], item_id=item["item_id"], version_label="v1",
                       item_input=item["input"], base=sb.agent_env(),
                       sweep=SweepTag(sweep["id"], arm["label"], run["rep"], arm["model"]))
        if bad:
            env["SWEEP_BAD_MODELS"] = arm["model"]
        if service:
            env["OTEL_SERVICE_NAME"] = service
        proc = subprocess.run([PY, str(WRAPPER)], input=item["input"], env=env,
                              capture_output=True, text=True, timeout=90)
        assert proc.returncode == 0, proc.stderr[-2000:]
    resp = sb.post(f"/preprod-evals/{run['runId']}/start")
    assert resp.status_code == 200, resp.text


def test_preview_prices_priced_arms_and_is_partial_when_unpriced(sb):
    resp = sb.post("/model-sweeps/preview", json={
        "datasetId": "ds_sweep", "passK": 2, "budgetUsd": 0.000001,
        "arms": runner_arms(("big", "gpt-4o"), ("local", "llama-3-local"))})
    assert resp.status_code == 200, resp.text
    data = resp.json()
    est = data["estimate"]
    assert est["totalRuns"] == 4 and est["totalCalls"] == 16 and est["itemCount"] == 4
    assert est["passK"] == 2
    big, local = est["perArm"]
    assert big["label"] == "big" and big["runs"] == 2 and big["calls"] == 8 and big["usd"] > 0
    assert local["usd"] is None
    assert est["totalUsd"] == big["usd"]  # the priced arms only: a floor
    assert est["partial"] is True and est["unpricedModels"] == ["llama-3-local"]
    assert est["unpricedArms"] == ["local"] and isinstance(est["basis"], dict)
    assert len(data["refusals"]) == 1 and "above the budget" in data["refusals"][0]
    assert db_count(sb, "sweeps") == 0 and db_count(sb, "runs") == 0  # writes nothing


def test_push_preview_uses_the_connection_model(sb):
    data = sb.post("/model-sweeps/preview", json={
        "datasetId": "ds_sweep", "arms": [{"label": "a", "agentConnectionId": "conn_good"}],
    }).json()
    assert data["estimate"]["perArm"][0]["model"] == "gpt-4o-mini"
    assert data["estimate"]["passK"] == 3  # the deployment default
    assert data["estimate"]["partial"] is False and data["refusals"] == []


@pytest.mark.parametrize("data,status,needle", [
    (body(runner_arms(("a", "gpt-4o"), ("a", "gpt-4o-mini"))), 422, "labels must be distinct"),
    (body(runner_arms(("a", "gpt-4o"), ("b", "gpt-4o"))), 422, "same model twice"),
    (body([{"label": "a", "agentConnectionId": "conn_good"},
           {"label": "b", "agentConnectionId": "conn_good"}]), 422, "same model twice"),
    (body([{"label": "a", "agentConnectionId": "conn_good"},
           *runner_arms(("b", "gpt-4o"))]), 422, "not both"),
    (body([{"label": "a", "agentConnectionId": "conn_nope"}]), 404, "conn_nope not found"),
    (body([]), 422, "non-empty list"),
    (body(runner_arms(("a", "gpt-4o")), datasetVersionId="dsv_x"), 422, "exactly one"),
    ({**body(runner_arms(("a", "gpt-4o"))), "datasetId": None}, 422, "exactly one"),
    (body(runner_arms(("a", "gpt-4o")), datasetId="ds_nope"), 404, "ds_nope not found"),
    (body(runner_arms(("a", "gpt-4o")), datasetId="ds_nogolden"), 422, "no golden version"),
    (body(runner_arms(("a", "gpt-4o")), passK=0), 422, "passK"),
    (body(runner_arms(("a", "gpt-4o")), judgeDeploymentIds=["j_nope"]), 422, "j_nope"),
    ({**body(runner_arms(("a", "gpt-4o"))), "name": ""}, 422, "name is required"),
])
def test_create_refusals_write_nothing(sb, data, status, needle):
    assert needle in refused(sb, "/model-sweeps", data, status)
    assert db_count(sb, "sweeps") == 0 and db_count(sb, "runs") == 0


def test_budget_refusal_is_a_422_with_a_sentence(sb):
    detail = refused(sb, "/model-sweeps", body(runner_arms(("a", "gpt-4o")), budgetUsd=0.0001))
    assert detail.startswith("sweep refused: the estimated cost $")
    assert "is above the budget of $0.0001" in detail
    assert db_count(sb, "runs") == 0


def test_runner_sweep_lists_every_child_run_awaiting_traces(sb):
    sweep = create(sb, body(runner_arms(("big", "gpt-4o"), ("small", "gpt-4o-mini")), passK=3))
    assert sweep["id"].startswith("msw-") and sweep["status"] == "pending"
    assert sweep["runnerMode"] == "runner" and sweep["passK"] == 3
    assert sweep["estimate"]["totalRuns"] == 6
    assert [a["label"] for a in sweep["arms"]] == ["big", "small"]
    for arm in sweep["arms"]:
        assert arm["runnerMode"] == "runner" and arm["runsTotal"] == 3
        assert arm["runsTerminal"] == 0 and arm["passed"] is None
        assert [r["rep"] for r in arm["runs"]] == [1, 2, 3]
        assert {r["status"] for r in arm["runs"]} == {"awaiting_traces"}
        run = sb.get(f"/preprod-evals/{arm['runs'][0]['runId']}").json()
        assert run["status"] == "awaiting_traces" and run["versionLabel"] == "v1"
        assert run["datasetVersionId"] == "ds_sweep-v1" and run["total"] == 4
        assert run["extra"]["sweepId"] == sweep["id"] and run["extra"]["arm"] == arm["label"]
    again = sb.get(f"/model-sweeps/{sweep['id']}").json()
    assert again["arms"][1]["runs"] == sweep["arms"][1]["runs"]
    assert sb.get("/model-sweeps/msw-nope").status_code == 404


def test_runner_sweep_figures_verdict_and_agents(sb):
    sweep = create(sb, body(runner_arms(("big", "gpt-4o"), ("small", "gpt-4o-mini"),
                                        ("local", "llama-3-local")), passK=2))
    big, small, local = sweep["arms"]
    for run in big["runs"]:
        drive_run(sb, sweep, big, run, bad=True)
    for run in small["runs"]:
        drive_run(sb, sweep, small, run, service="refund-bot")
    for run in local["runs"]:
        drive_run(sb, sweep, local, run, service="refund-bot")
    done = wait_sweep(sb, sweep["id"])
    assert done["status"] == "completed"
    by_label = {a["label"]: a for a in done["arms"]}
    assert by_label["big"]["greens"] == 0 and by_label["big"]["passed"] is False
    assert by_label["small"]["greens"] == 2 and by_label["small"]["passed"] is True
    assert by_label["small"]["runsTerminal"] == 2 and by_label["small"]["status"] == "completed"

    cmp = sb.get(f"/model-sweeps/{sweep['id']}/comparison").json()
    assert cmp["comparable"] is True and cmp["status"] == "completed"
    assert cmp["bar"] == {"passRate": 0.9, "source": "default"}
    assert cmp["baseline"] == {"armId": big["armId"], "label": "big"}
    assert cmp["itemCount"] == 4 and cmp["passK"] == 2
    rows = {a["label"]: a for a in cmp["arms"]}
    assert rows["big"]["quality"] == {"rate": 0.5, "n": 4, "ciLow": 0.215216,
                                      "ciHigh": 0.784784, "passed": 4, "trials": 8, "scored": 8}
    assert rows["small"]["quality"]["rate"] == 1.0
    assert rows["small"]["quality"]["ciLow"] == 0.675592
    assert rows["big"]["passK"] == {"greens": 0, "k": 2, "passed": False}
    assert rows["small"]["cost"]["priced"] is True and rows["small"]["cost"]["partial"] is False
    assert 0 < rows["small"]["cost"]["costPerCaseUsd"] < rows["big"]["cost"]["costPerCaseUsd"]
    assert rows["local"]["cost"] == {"costPerCaseUsd": None, "priced": False, "partial": False,
                                     "pricedCases": 0, "cases": 8}
    assert rows["small"]["regressions"] == {"count": 0}
    assert rows["big"]["regressions"] == {"count": 0}
    assert rows["small"]["distinguishableFromBaseline"] is False  # 8 trials: CIs overlap
    assert rows["big"]["distinguishableFromBaseline"] is None  # the baseline itself
    verdict = cmp["verdict"]
    assert verdict["outcome"] == "winner" and verdict["winner"]["label"] == "small"
    saving = round((1 - rows["small"]["cost"]["costPerCaseUsd"]
                    / rows["big"]["cost"]["costPerCaseUsd"]) * 100)
    assert verdict["reason"] == (
        f"small clears the 90% bar at ${rows['small']['cost']['costPerCaseUsd']:.6f} per case"
        f" — {saving}% cheaper than big")
    assert {"armId": local["armId"], "label": "local", "reasonCode": "unpriced"} in (
        verdict["excluded"])
    assert verdict["tiedWith"] == ["local"]
    assert cmp["pricing"]["unpricedModels"] == ["llama-3-local"]
    assert cmp["warnings"] == []
    agents = {a["agent"]: a for a in cmp["agents"]}
    assert set(agents) == {"refund-agent", "refund-bot"}
    assert agents["refund-bot"]["itemCount"] == 4
    assert agents["refund-bot"]["verdict"]["outcome"] == "winner"

    # the bar: query > the sweep's gate > the default; the baseline arm by id (or label)
    strict = sb.get(f"/model-sweeps/{sweep['id']}/comparison",
                    params={"bar": "1", "baselineArm": small["armId"]}).json()
    assert strict["bar"] == {"passRate": 1.0, "source": "query"}
    assert strict["baseline"]["label"] == "small"
    assert strict["verdict"]["reason"].endswith("— small is the baseline")
    assert {a["label"]: a["regressions"]["count"] for a in strict["arms"]} == {
        "big": 2, "small": 0, "local": 0}
    low = sb.get(f"/model-sweeps/{sweep['id']}/comparison", params={"bar": "0.4"}).json()
    assert low["verdict"]["winner"]["label"] == "small"
    for bad_query in ({"bar": "1.5"}, {"bar": "x"}, {"baselineArm": "arm_nope"}):
        resp = sb.get(f"/model-sweeps/{sweep['id']}/comparison", params=bad_query)
        assert resp.status_code == 422, resp.text
    assert sb.post(f"/model-sweeps/{sweep['id']}/cancel").status_code == 409


def test_gate_bar_and_none_clear(sb):
    sweep = create(sb, body(runner_arms(("a", "gpt-4o"), ("b", "gpt-4o-mini")), passK=1,
                            gate={"min_pass_rate": 0.75, "cost": None}))
    for arm in sweep["arms"]:
        drive_run(sb, sweep, arm, arm["runs"][0], bad=True)
    wait_sweep(sb, sweep["id"])
    cmp = sb.get(f"/model-sweeps/{sweep['id']}/comparison").json()
    assert cmp["bar"] == {"passRate": 0.75, "source": "gate"}
    assert cmp["verdict"]["outcome"] == "none_clear"
    assert cmp["verdict"]["reason"] == "no arm clears the 75% bar (best: a at 50%)"


def test_same_observed_model_warning(sb):
    sweep = create(sb, body(runner_arms(("a", "gpt-4o"), ("b", "llama-3-local")), passK=1))
    for arm in sweep["arms"]:
        run = arm["runs"][0]
        for item in items_of(sb, run["runId"]):
            env = item_env(run_id=run["runId"], item_id=item["item_id"], version_label="v1",
                           item_input=item["input"], base=sb.agent_env(SWEEP_AGENT_MODE=(
                               "ignore-model")),
                           sweep=SweepTag(sweep["id"], arm["label"], 1, arm["model"]))
            proc = subprocess.run([PY, str(WRAPPER)], input=item["input"], env=env,
                                  capture_output=True, text=True, timeout=90)
            assert proc.returncode == 0, proc.stderr
        assert sb.post(f"/preprod-evals/{run['runId']}/start").status_code == 200
    wait_sweep(sb, sweep["id"])
    cmp = sb.get(f"/model-sweeps/{sweep['id']}/comparison").json()
    (warning,) = cmp["warnings"]
    assert warning["code"] == "arms_same_observed_model" and warning["arms"] == ["a", "b"]
    assert "gpt-4o-mini" in warning["message"]


def test_cancel_cancels_the_sweep_and_its_pending_runs(sb):
    sweep = create(sb, body(runner_arms(("a", "gpt-4o"), ("b", "gpt-4o-mini")), passK=2))
    drive_run(sb, sweep, sweep["arms"][0], sweep["arms"][0]["runs"][0])
    resp = sb.post(f"/model-sweeps/{sweep['id']}/cancel")
    assert resp.status_code == 200, resp.text
    assert resp.json()["status"] == "cancelled"
    got = sb.get(f"/model-sweeps/{sweep['id']}").json()
    assert got["status"] == "cancelled"
    statuses = [r["status"] for a in got["arms"] for r in a["runs"]]
    assert statuses.count("cancelled") >= 3 and "awaiting_traces" not in statuses
    assert sb.post(f"/model-sweeps/{sweep['id']}/cancel").status_code == 409
    cmp = sb.get(f"/model-sweeps/{sweep['id']}/comparison").json()
    assert cmp["status"] == "cancelled"


def test_push_sweep_calls_each_arms_connection(push_sb):
    sweep = create(push_sb, body([{"label": "good", "agentConnectionId": "conn_good"},
                                  {"label": "bad", "agentConnectionId": "conn_bad"}],
                                 passK=2))
    assert sweep["runnerMode"] == "push"
    assert [a["model"] for a in sweep["arms"]] == ["gpt-4o-mini", "gpt-4o"]
    done = wait_sweep(push_sb, sweep["id"])
    assert done["status"] == "completed"
    arms = {a["label"]: a for a in done["arms"]}
    assert arms["good"]["passed"] is True and arms["good"]["greens"] == 2
    assert arms["bad"]["passed"] is False and arms["bad"]["greens"] == 0
    cmp = push_sb.get(f"/model-sweeps/{sweep['id']}/comparison").json()
    rows = {a["label"]: a for a in cmp["arms"]}
    assert rows["good"]["quality"]["rate"] == 1.0 and rows["bad"]["quality"]["rate"] == 0.5
    assert rows["good"]["cost"]["priced"] is True
    assert rows["bad"]["regressions"] == {"count": 2}
    assert cmp["verdict"]["winner"]["label"] == "good"
    assert cmp["agents"][0]["agent"] is None  # push replies carry no service.name


def test_push_sweep_with_a_dead_connection(tmp_path, monkeypatch):
    """conn_bad points at a closed port: its runs fail, the sweep completes with failures;
    with every connection dead the sweep fails."""
    good, port = start_http_agent("--mode", "good")
    monkeypatch.setenv("SWEEP_GOOD_PORT", str(port))
    monkeypatch.delenv("SWEEP_BAD_PORT", raising=False)
    sandbox = start_sandbox(tmp_path, seed=SEED)
    try:
        sweep = create(sandbox, body([{"label": "good", "agentConnectionId": "conn_good"},
                                      {"label": "dead", "agentConnectionId": "conn_bad"}],
                                     passK=1))
        done = wait_sweep(sandbox, sweep["id"])
        assert done["status"] == "completed_with_failures"
        arms = {a["label"]: a for a in done["arms"]}
        assert arms["dead"]["status"] == "failed" and "run(s) failed" in arms["dead"]["error"]
        assert arms["good"]["status"] == "completed"
        dead = create(sandbox, body([{"label": "dead", "agentConnectionId": "conn_bad"}],
                                    passK=1))
        assert wait_sweep(sandbox, dead["id"])["status"] == "failed"
    finally:
        sandbox.stop()
        good.terminate()
        good.wait(10)


def test_void_when_a_judge_changes_while_the_sweep_runs(tmp_path):
    first = start_sandbox(tmp_path, seed=SEED)
    try:
        sweep = create(first, body(runner_arms(("a", "gpt-4o"), ("b", "gpt-4o-mini")),
                                   passK=1))
        drive_run(first, sweep, sweep["arms"][0], sweep["arms"][0]["runs"][0])
    finally:
        first.stop()
    edited = tmp_path / "edited.yaml"
    edited.write_text(SEED.read_text().replace(
        "{id: j_answer, metric: correctness, kind: contains}",
        "{id: j_answer, metric: correctness, kind: contains, case_sensitive: true}"))
    second = start_sandbox(tmp_path, seed=edited, db=first.db)
    try:
        arm = sweep["arms"][1]
        drive_run(second, sweep, arm, arm["runs"][0])
        done = wait_sweep(second, sweep["id"])
        assert done["status"] == "void"
        assert "judge definitions (j_answer changed" in done["voidReason"]
        cmp = second.get(f"/model-sweeps/{sweep['id']}/comparison").json()
        assert cmp["comparable"] is False and cmp["arms"] == []
        assert cmp["verdict"]["outcome"] == "unavailable"
        assert cmp["voidReason"] == done["voidReason"]
    finally:
        second.stop()


VENDOR = ROOT / ".venv-vendor" / "bin" / "neens"


def test_vendor_cli_runs_a_sweep_against_the_sandbox_unchanged(sb, tmp_path):
    """Fidelity: the vendor's neens-eval 0.8.0 drives a runner sweep end to end."""
    cli = os.environ.get("NEENS_VENDOR_CLI") or str(VENDOR)
    assert os.access(cli, os.X_OK), (
        "the vendor CLI is missing: python3 -m venv .venv-vendor && "
        ".venv-vendor/bin/pip install neens-eval==0.8.0 (or set NEENS_VENDOR_CLI)")
    env = sb.agent_env(SWEEP_BAD_MODELS="gpt-4o")
    proc = subprocess.run(
        [cli, "sweep", "run", "--create", "--name", "vendor", "--version-label", "v1",
         "--dataset", "ds_sweep", "--arm", "big=gpt-4o", "--arm", "small=gpt-4o-mini",
         "--k", "1", "--concurrency", "2", "--poll-interval", "1", "--json", "--",
         PY, str(WRAPPER)],
        env=env, capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr[-3000:]
    doc = json.loads(proc.stdout)
    assert doc["verdict"]["outcome"] == "winner"
    assert doc["comparison"]["arms"][1]["label"] == "small"
    assert "VERDICT: small clears the 90% bar" in proc.stderr
    decide = subprocess.run([cli, "sweep", "decide", "--sweep-id", doc["sweepId"], "--bar",
                             "0.4", "--require-winner"], env=env, capture_output=True,
                            text=True, timeout=120, cwd=ROOT)
    assert decide.returncode == 0, decide.stderr[-3000:]
    preview = subprocess.run([cli, "sweep", "preview", "--dataset-id", "ds_sweep", "--arm",
                              "a=conn_good", "--arm", "b=conn_local", "--pass-k", "2"],
                             env=env, capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert preview.returncode == 0, preview.stderr[-3000:]
    assert "PARTIAL" in preview.stderr and "llama-3-local" in preview.stderr
