"""Eval gates (issue 7): active/paused/no-data gates, E11, gates_policy drift."""

from __future__ import annotations

from tests.helpers import start_sandbox
from tests.sandbox.integration.support import create, eval_run, wait_terminal, write_seed


def test_active_gates_listing(sandbox):
    gates = sandbox.get("/flywheel/gates/ci").json()["gates"]
    assert gates == [{
        "gateId": "gate-refund", "name": "FM: Wrong refund amount",
        "failureModeName": "Wrong refund amount", "goldenVersionId": "gate-refund-golden",
        "goldenItemCount": 2, "judgeId": "j_answer", "passThreshold": 0.7, "problem": None,
    }]


def test_active_gates_pass_and_fail(sandbox):
    ok = eval_run(sandbox, {"version_label": "abc123", "gates": "active"})
    assert ok["datasetId"] is None and ok["total"] == 2
    assert {i["gateId"] for i in ok["items"]} == {"gate-refund"}
    row = ok["gates"][0]
    assert row["enforced"] is True and row["verdict"] == "pass" and row["passed"] is True
    assert (row["nScored"], row["nItems"], row["passRate"]) == (2, 2, 1.0)
    gate = sandbox.get(f"/preprod-evals/{ok['id']}/gate").json()
    assert gate["passed"] is True and gate["gates"] == ok["gates"]
    assert gate["regressions"] is None  # gates-only: nothing compared

    bad = eval_run(sandbox, {"version_label": "def456", "gates": "active"}, mode="bad")
    row = bad["gates"][0]
    assert row["verdict"] == "fail" and row["passRate"] == 0.0
    gate = sandbox.get(f"/preprod-evals/{bad['id']}/gate").json()
    assert gate["passed"] is False
    assert any("FM: Wrong refund amount" in r for r in gate["reasons"])


def test_dataset_plus_gates_and_no_data(sandbox):
    run = eval_run(sandbox, {"dataset_id": "ds_refunds", "gates": "active"},
                   skip=("g_1", "g_2"))
    assert run["total"] == 8 and run["aggregate"]["passed"] == 6
    row = run["gates"][0]
    assert row["verdict"] == "no_data" and row["nScored"] == 0 and row["passed"] is False
    gate = sandbox.get(f"/preprod-evals/{run['id']}/gate").json()
    assert gate["passed"] is False
    assert any("NO DATA" in r for r in gate["reasons"])
    # the dataset comparison ignores gate items
    cmp = sandbox.get(f"/preprod-evals/{run['id']}/comparison").json()
    assert cmp["baseline"]["totalItems"] == 6


def test_explicit_paused_gate_is_reported_not_enforced(sandbox):
    run = eval_run(sandbox, {"version_label": "p1", "gates": ["gate-refund", "gate-leak"]},
                   skip=("l_1",))
    rows = {r["gateId"]: r for r in run["gates"]}
    assert rows["gate-leak"]["enforced"] is False and rows["gate-leak"]["verdict"] == "no_data"
    assert rows["gate-refund"]["enforced"] is True and rows["gate-refund"]["passed"] is True
    gate = sandbox.get(f"/preprod-evals/{run['id']}/gate").json()
    assert gate["passed"] is True  # a paused gate never fails the build
    leaky = eval_run(sandbox, {"version_label": "p2", "gates": ["gate-leak"]}, mode="leaky")
    assert leaky["gates"][0]["verdict"] == "fail"
    assert sandbox.get(f"/preprod-evals/{leaky['id']}/gate").json()["passed"] is True


def test_pending_rows_before_scoring(sandbox):
    run = create(sandbox, {"version_label": "q", "gates": "active"})
    assert run["gates"][0]["verdict"] == "pending"
    sandbox.post(f"/preprod-evals/{run['id']}/start")
    done = wait_terminal(sandbox, run["id"])
    assert done["gates"][0]["verdict"] == "no_data"
    assert sandbox.get(f"/preprod-evals/{run['id']}/gate").json()["passed"] is False


def test_gates_policy_echo_threshold_override_and_drift(sandbox):
    policy = {"mode": "exact", "severity": "block",
              "enforce": [{"id": "gate-leak"}, {"id": "gate-ghost"}]}
    run = create(sandbox, {"version_label": "gp", "gates_policy": policy})
    assert run["gatesPolicy"]["mode"] == "exact"
    kinds = {d["gateId"]: d["kind"] for d in run["gateDrift"]}
    assert kinds == {"gate-leak": "paused", "gate-ghost": "missing",
                     "gate-refund": "unlisted_active"}
    include = create(sandbox, {"version_label": "gi", "gates_policy": {
        "mode": "include", "enforce": [{"id": "gate-refund", "min_pass_rate": 0.4}]}})
    rows = include["gates"]
    assert rows[0]["threshold"] == 0.4 and rows[0]["thresholdSource"] == "repo"
    assert include["gateDrift"] == []


def test_no_active_gate_refuses_the_create(tmp_path):
    seed = write_seed(tmp_path, """
judges: [{id: j, metric: correctness, kind: contains}]
gates:
  - {id: gate-x, name: X, status: paused, threshold: 0.5, judges: [j],
     items: [{id: x1, input: "a", expected_output: "a"}]}
""")
    sb = start_sandbox(tmp_path, seed=seed)
    try:
        resp = sb.post("/preprod-evals", json={"version_label": "x", "gates": "active"})
        assert resp.status_code == 422 and resp.json()["detail"] == "no active eval gates"
        assert sb.get("/flywheel/gates/ci").json() == {"gates": []}
        explicit = sb.post("/preprod-evals", json={"version_label": "x", "gates": ["gate-x"]})
        assert explicit.status_code == 201
        assert explicit.json()["gates"][0]["enforced"] is False
    finally:
        sb.stop()
