"""Scenario suites in the real sandbox (E17-E20, decision 13), over HTTP, with the fake LLM
server as a real process when a test needs the LLM strategies."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.fakes import llm_server
from tests.helpers import ROOT, Sandbox, start_sandbox

BASE_SEED = ROOT / "tests" / "integration" / "data" / "stress_seed.yaml"
SCENARIO_FIELDS = {"id", "input", "expected_output", "strategy", "failure_mode_id",
                   "failure_mode_name"}


def write_seed(tmp: Path, *, llm: dict | None = None, connections: list | None = None) -> Path:
    data = yaml.safe_load(BASE_SEED.read_text())
    if llm is not None:
        data["llm"] = llm
    if connections is not None:
        data["connections"] = connections
    path = tmp / f"seed-{time.monotonic_ns()}.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


def wait_suite(sb: Sandbox, suite_id: str, statuses: tuple[str, ...] = ("ready", "failed"),
               timeout: float = 60.0) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while True:
        suite = sb.get(f"/scenario-suites/{suite_id}").json()
        if suite["status"] in statuses:
            return suite
        assert time.monotonic() < deadline, f"suite stuck in {suite['status']}"
        time.sleep(0.1)


def create(sb: Sandbox, **body: Any) -> dict[str, Any]:
    body.setdefault("name", "suite")
    resp = sb.post("/scenario-suites", json=body)
    assert resp.status_code == 201, resp.text
    return resp.json()


@pytest.fixture(scope="module")
def plain(tmp_path_factory) -> Sandbox:
    """No LLM configured; one agent_http connection (nothing listens on it)."""
    tmp = tmp_path_factory.mktemp("plain")
    sb = start_sandbox(tmp, seed=write_seed(tmp, connections=[
        {"id": "conn_agent", "url": "http://127.0.0.1:9/answer", "model": "gpt-4o-mini"}]))
    yield sb
    sb.stop()


@pytest.fixture(scope="module")
def llm(tmp_path_factory) -> llm_server.FakeLlm:
    fake = llm_server.start(tmp_path_factory.mktemp("llm"))
    yield fake
    fake.stop()


@pytest.fixture(scope="module")
def with_llm(tmp_path_factory, llm) -> Sandbox:
    tmp = tmp_path_factory.mktemp("with_llm")
    sb = start_sandbox(tmp, seed=write_seed(
        tmp, llm={"base_url": llm.url, "model": "fake-model"},
        connections=[{"id": "conn_agent", "url": "http://127.0.0.1:9/answer"}]))
    yield sb
    sb.stop()


def test_replay_only_suites_generate_without_any_llm(plain: Sandbox) -> None:
    first = create(plain, name="Refund regressions", failure_mode_ids=["fm_refund", "fm_leak"])
    assert first["id"].startswith("sts_")
    assert first["status"] in ("generating", "ready")
    suite = wait_suite(plain, first["id"])
    assert suite["status"] == "ready", suite
    assert suite["error"] is None
    rows = suite["scenarios"]
    assert [r["input"] for r in rows] == [
        "Refund me for order 9 ($50.00)",
        "I need the refund for order 12 ($19.99) today",
        "What does your file say about my refund for order 7 ($10.00)?",
    ]
    assert all(set(r) == SCENARIO_FIELDS for r in rows)
    assert {r["strategy"] for r in rows} == {"replay"}
    assert [r["failure_mode_id"] for r in rows] == ["fm_refund", "fm_refund", "fm_leak"]
    assert rows[0]["failure_mode_name"] == "Wrong refund amount"
    assert rows[0]["expected_output"] == "$50.00"  # the exemplar's own expectation
    assert "must not exhibit the 'Leaks internal notes' failure mode" in rows[2]["expected_output"]
    assert [s["strategy"] for s in suite["skippedStrategies"]] == [
        "paraphrase", "escalate", "boundary"]
    assert all("no LLM connection" in s["reason"] for s in suite["skippedStrategies"])
    assert (suite["perMode"], suite["strategies"], suite["includeReplay"]) == (
        5, ["paraphrase", "escalate", "boundary"], True)
    assert suite["scenarioCount"] == 3
    assert suite["progress"]["done"] == suite["progress"]["total"] > 0
    assert suite["version"] == 1 and suite["datasetVersionId"]
    assert suite["failureModes"] == [{"id": "fm_refund", "name": "Wrong refund amount"},
                                     {"id": "fm_leak", "name": "Leaks internal notes"}]


def test_replay_only_never_calls_a_configured_model(with_llm: Sandbox,
                                                    llm: llm_server.FakeLlm) -> None:
    before = len(llm.calls())
    suite = wait_suite(with_llm, create(with_llm, failure_mode_ids=["fm_refund"],
                                        strategies=[])["id"])
    assert suite["status"] == "ready"
    assert {r["strategy"] for r in suite["scenarios"]} == {"replay"}
    assert suite["skippedStrategies"] == []
    assert len(llm.calls()) == before


def test_with_an_llm_all_four_strategies_appear_with_their_source_mode(
        with_llm: Sandbox, llm: llm_server.FakeLlm) -> None:
    before = len(llm.calls())
    suite = wait_suite(with_llm, create(with_llm, failure_mode_ids=["fm_refund", "fm_leak"],
                                        per_mode=3)["id"])
    assert suite["status"] == "ready", suite
    assert suite["skippedStrategies"] == []
    rows = suite["scenarios"]
    pairs = {(r["failure_mode_id"], r["strategy"]) for r in rows}
    for fm in ("fm_refund", "fm_leak"):
        for strategy in ("replay", "paraphrase", "escalate", "boundary"):
            assert (fm, strategy) in pairs
    names = {r["failure_mode_id"]: r["failure_mode_name"] for r in rows}
    assert names == {"fm_refund": "Wrong refund amount", "fm_leak": "Leaks internal notes"}
    # per_mode 3 over three strategies: one LLM scenario per strategy and mode
    assert len(rows) == 3 + 2 * 3
    assert len({r["id"] for r in rows}) == len(rows)
    refund_llm = [r for r in rows if r["failure_mode_id"] == "fm_refund"
                  and r["strategy"] != "replay"]
    assert all("order 9 ($50.00)" in r["input"] for r in refund_llm)
    assert {r["expected_output"] for r in refund_llm} == {"$50.00"}
    calls = llm.calls()[before:]
    assert sorted(c["strategy"] for c in calls) == sorted(
        ["paraphrase", "escalate", "boundary"] * 2)
    assert {c["model"] for c in calls} == {"fake-model"}
    assert {c["path"] for c in calls} == {"/v1/chat/completions"}


def test_regenerate_makes_a_fresh_golden_version(with_llm: Sandbox) -> None:
    first = wait_suite(with_llm, create(with_llm, failure_mode_ids=["fm_refund"],
                                        per_mode=3)["id"])
    run_a = with_llm.post(f"/scenario-suites/{first['id']}/launch",
                          json={"version_label": "a"}).json()
    resp = with_llm.post(f"/scenario-suites/{first['id']}/regenerate",
                         json={"per_mode": 2, "strategies": ["escalate"]})
    assert resp.status_code == 202, resp.text
    assert resp.json()["status"] in ("generating", "ready")
    second = wait_suite(with_llm, first["id"])
    assert second["status"] == "ready"
    assert second["datasetVersionId"] != first["datasetVersionId"]
    assert second["version"] == 2
    assert [v["datasetVersionId"] for v in second["versions"]] == [
        first["datasetVersionId"], second["datasetVersionId"]]
    assert (second["perMode"], second["strategies"], second["includeReplay"]) == (
        2, ["escalate"], True)  # overrides; the rest kept
    assert {r["strategy"] for r in second["scenarios"]} == {"replay", "escalate"}
    assert not {r["id"] for r in first["scenarios"]} & {r["id"] for r in second["scenarios"]}
    # the earlier version is frozen: the run launched on it keeps its items
    items = with_llm.get(f"/preprod-evals/{run_a['id']}/items").json()["items"]
    assert [i["item_id"] for i in items] == [r["id"] for r in first["scenarios"]]
    run_b = with_llm.post(f"/scenario-suites/{first['id']}/launch",
                          json={"version_label": "b"}).json()
    assert run_b["datasetVersionId"] == second["datasetVersionId"]
    assert run_a["datasetVersionId"] == first["datasetVersionId"]
    assert wait_suite(with_llm, first["id"])["runIds"] == [run_a["id"], run_b["id"]]


def test_launch_creates_an_ordinary_preprod_run(with_llm: Sandbox) -> None:
    suite = wait_suite(with_llm, create(with_llm, failure_mode_ids=["fm_leak"],
                                        strategies=[])["id"])
    resp = with_llm.post(f"/scenario-suites/{suite['id']}/launch", json={
        "version_label": "abc123", "gate": {"max_regressions": 0, "min_pass_rate": 0.9},
        "baseline": {"kind": "prod_window", "range": "7d"}})
    assert resp.status_code == 201, resp.text
    run = resp.json()
    assert run["id"].startswith("ppr_") and run["status"] == "awaiting_traces"
    assert run["runnerMode"] == "runner"
    assert run["versionLabel"] == "abc123"
    assert run["datasetVersionId"] == suite["datasetVersionId"]
    assert run["gate"] == {"max_regressions": 0, "min_pass_rate": 0.9}
    assert run["extra"]["scenarioSuiteId"] == suite["id"]
    assert [i["input"] for i in run["items"]] == [r["input"] for r in suite["scenarios"]]
    push = with_llm.post(f"/scenario-suites/{suite['id']}/launch",
                         json={"version_label": "p", "agent_connection_id": "conn_agent"})
    assert push.status_code == 201, push.text
    assert push.json()["runnerMode"] == "push"
    assert push.json()["agentConnectionId"] == "conn_agent"


@pytest.mark.parametrize(
    ("body", "status", "needle"),
    [
        ({}, 422, "version_label is required"),
        ({"version_label": "v", "dataset_id": "ds_refunds"}, 422, "dataset_id cannot be set"),
        ({"version_label": "v", "gates": "active"}, 422, "gates cannot be set"),
        ({"version_label": "v", "runner_mode": "runner", "agent_connection_id": "conn_agent"},
         422, "only for runner_mode push"),
        ({"version_label": "v", "runner_mode": "sideways"}, 422, "runner_mode"),
        ({"version_label": "v", "runner_mode": "push"}, 422, "agent_connection_id"),
        ({"version_label": "v", "agent_connection_id": "conn_nope"}, 404, "conn_nope"),
        ({"version_label": "v", "judge_deployment_ids": ["j_nope"]}, 422, "j_nope"),
    ],
)
def test_bad_launches_are_refused(plain: Sandbox, body: dict, status: int, needle: str) -> None:
    suite = wait_suite(plain, create(plain, failure_mode_ids=["fm_refund"])["id"])
    resp = plain.post(f"/scenario-suites/{suite['id']}/launch", json=body)
    assert resp.status_code == status, resp.text
    assert needle in resp.json()["detail"]
    assert wait_suite(plain, suite["id"])["runIds"] == []  # nothing was created


@pytest.mark.parametrize(
    ("body", "status", "needle"),
    [
        ({"failure_mode_ids": ["fm_refund"]}, 422, "name is required"),
        ({"name": "x"}, 422, "failure_mode_ids is required"),
        ({"name": "x", "failure_mode_ids": ["fm_refund", "fm_nope"]}, 404, "fm_nope"),
        ({"name": "x", "failure_mode_ids": ["fm_refund"], "per_mode": 26}, 422, "1 to 25"),
        ({"name": "x", "failure_mode_ids": ["fm_refund"], "strategies": ["rewrite"]}, 422,
         "unknown strategy"),
        ({"name": "x", "failure_mode_ids": ["fm_refund"], "include_replay": False,
          "strategies": []}, 422, "nothing to generate"),
        ({"name": "x", "failure_mode_ids": ["fm_refund"], "connection_id": "llm"}, 422,
         "no LLM connection is configured"),
        ({"name": "x", "failure_mode_ids": ["fm_refund"], "connection_id": "conn_agent"}, 422,
         "not an LLM connection"),
        ({"name": "x", "failure_mode_ids": ["fm_refund"], "connection_id": "conn_x"}, 404,
         "conn_x"),
    ],
)
def test_bad_suites_are_refused(plain: Sandbox, body: dict, status: int, needle: str) -> None:
    resp = plain.post("/scenario-suites", json=body)
    assert resp.status_code == status, resp.text
    assert needle in resp.json()["detail"]


def test_unknown_suites_and_missing_keys(plain: Sandbox) -> None:
    assert plain.get("/scenario-suites/sts_nope").status_code == 404
    assert plain.post("/scenario-suites/sts_nope/launch",
                      json={"version_label": "v"}).status_code == 404
    assert plain.post("/scenario-suites/sts_nope/regenerate", json={}).status_code == 404
    import requests

    resp = requests.post(plain.url + "/scenario-suites", timeout=10,
                         json={"name": "x", "failure_mode_ids": ["fm_refund"]})
    assert resp.status_code == 401


def test_a_suite_with_no_scenario_fails_and_cannot_launch(plain: Sandbox) -> None:
    suite = wait_suite(plain, create(plain, failure_mode_ids=["fm_empty"])["id"])
    assert suite["status"] == "failed"
    assert "no scenario could be generated" in suite["error"]
    assert "no LLM connection" in suite["error"]
    assert suite["scenarios"] == [] and suite["datasetVersionId"] is None
    resp = plain.post(f"/scenario-suites/{suite['id']}/launch", json={"version_label": "v"})
    assert resp.status_code == 409
    assert "not ready" in resp.json()["detail"]


def test_llm_errors_fail_or_degrade_with_the_reason(tmp_path: Path) -> None:
    broken = llm_server.start(tmp_path, "--fail-status", "500")
    sb = start_sandbox(tmp_path, seed=write_seed(tmp_path, llm={"base_url": broken.url}))
    try:
        only_llm = wait_suite(sb, create(sb, failure_mode_ids=["fm_refund"],
                                         include_replay=False)["id"])
        assert only_llm["status"] == "failed"
        assert "HTTP 500" in only_llm["error"]
        degraded = wait_suite(sb, create(sb, failure_mode_ids=["fm_refund"])["id"])
        assert degraded["status"] == "ready"
        assert {r["strategy"] for r in degraded["scenarios"]} == {"replay"}
        assert {s["strategy"] for s in degraded["skippedStrategies"]} == {
            "paraphrase", "escalate", "boundary"}
        assert all("HTTP 500" in s["reason"] and s["failure_mode_id"] == "fm_refund"
                   for s in degraded["skippedStrategies"])
        # a failed suite can be regenerated (here: replay only, which needs no model)
        resp = sb.post(f"/scenario-suites/{only_llm['id']}/regenerate",
                       json={"include_replay": True, "strategies": []})
        assert resp.status_code == 202, resp.text
        fixed = wait_suite(sb, only_llm["id"])
        assert fixed["status"] == "ready" and fixed["error"] is None
    finally:
        sb.stop()
        broken.stop()


def test_generation_is_asynchronous_and_shows_progress(tmp_path: Path) -> None:
    slow = llm_server.start(tmp_path, "--delay", "1.5")
    sb = start_sandbox(tmp_path, seed=write_seed(tmp_path, llm={"base_url": slow.url}))
    try:
        t0 = time.monotonic()
        suite = create(sb, failure_mode_ids=["fm_refund"])
        assert time.monotonic() - t0 < 1.5  # the create did not wait for the model
        assert suite["status"] == "generating"
        assert suite["progress"]["total"] == 4  # replay + three strategies
        seen = wait_suite(sb, suite["id"], statuses=("generating",))
        assert seen["progress"]["done"] < seen["progress"]["total"]
        assert seen["scenarios"] == []
        launch = sb.post(f"/scenario-suites/{suite['id']}/launch", json={"version_label": "v"})
        assert launch.status_code == 409 and "not ready" in launch.json()["detail"]
        again = sb.post(f"/scenario-suites/{suite['id']}/regenerate", json={})
        assert again.status_code == 409 and "still generating" in again.json()["detail"]
        done = wait_suite(sb, suite["id"])
        assert done["status"] == "ready"
        assert {r["strategy"] for r in done["scenarios"]} == {
            "replay", "paraphrase", "escalate", "boundary"}
    finally:
        sb.stop()
        slow.stop()


def test_the_llm_key_is_sent_but_never_shown(tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    secret = "sk-fake-llm-key-0123456789"
    guarded = llm_server.start(tmp_path, "--api-key", secret)
    monkeypatch.setenv("STRESS_TEST_LLM_KEY", secret)  # inherited by the sandbox process
    sb = start_sandbox(tmp_path, seed=write_seed(
        tmp_path, llm={"base_url": guarded.url, "api_key_env": "STRESS_TEST_LLM_KEY"}))
    try:
        resp = sb.post("/scenario-suites", json={"name": "k", "failure_mode_ids": ["fm_leak"],
                                                 "per_mode": 3})
        suite = wait_suite(sb, resp.json()["id"])
        assert suite["status"] == "ready" and suite["skippedStrategies"] == []
        assert {r["strategy"] for r in suite["scenarios"]} == {
            "replay", "paraphrase", "escalate", "boundary"}
        assert all(c["authorization"] for c in guarded.calls())
        raw = sb.get(f"/scenario-suites/{suite['id']}").text + resp.text
        assert secret not in raw
    finally:
        sb.stop()
        guarded.stop()
    assert secret not in sb.log.read_text()
    for path in sb.db.parent.glob(sb.db.name + "*"):  # the database and its WAL
        assert secret.encode() not in path.read_bytes()


def test_suites_survive_a_restart(tmp_path: Path) -> None:
    seed = write_seed(tmp_path)
    sb = start_sandbox(tmp_path, seed=seed)
    try:
        suite = wait_suite(sb, create(sb, failure_mode_ids=["fm_refund"])["id"])
    finally:
        sb.stop()
    again = start_sandbox(tmp_path, seed=seed, db=sb.db)
    try:
        after = again.get(f"/scenario-suites/{suite['id']}").json()
        assert after["status"] == "ready"
        assert after["scenarios"] == suite["scenarios"]
        run = again.post(f"/scenario-suites/{suite['id']}/launch", json={"version_label": "r"})
        assert run.status_code == 201, run.text
    finally:
        again.stop()
