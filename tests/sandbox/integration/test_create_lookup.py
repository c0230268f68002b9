"""Sandbox support for safe creates and sharding: ``Idempotency-Key`` on E1, E13, E17 and E20
with the lookups ``GET /preprod-evals|/model-sweeps|/scenario-suites?idempotency_key=``, and
``items[].captured`` on the run object."""

from __future__ import annotations

import subprocess
import time

import requests

from tests.helpers import AGENT, PY, ROOT, start_sandbox


def post_keyed(sandbox, body, key):
    return requests.post(sandbox.url + "/preprod-evals", json=body, timeout=10,
                         headers={**sandbox.headers, "Idempotency-Key": key})


def test_a_repeated_key_returns_the_first_run_and_the_lookup_finds_it(sandbox):
    body = {"name": "k", "version_label": "k1", "dataset_id": "ds_refunds"}
    assert sandbox.get("/preprod-evals?idempotency_key=abc-1").json() == {"runs": []}
    first = post_keyed(sandbox, body, "abc-1")
    assert first.status_code == 201
    again = post_keyed(sandbox, body, "abc-1")
    assert again.status_code == 200 and again.json()["id"] == first.json()["id"]
    found = sandbox.get("/preprod-evals?idempotency_key=abc-1").json()["runs"]
    assert [r["id"] for r in found] == [first.json()["id"]] and "items" not in found[0]
    other = post_keyed(sandbox, body, "abc-2")
    assert other.json()["id"] != first.json()["id"]


def test_bad_keys_and_a_bare_listing_are_refused(sandbox):
    body = {"name": "k", "version_label": "k1", "dataset_id": "ds_refunds"}
    bad = post_keyed(sandbox, body, "has space")
    assert bad.status_code == 400 and "Idempotency-Key" in bad.json()["detail"]
    assert sandbox.get("/preprod-evals").status_code == 422


def test_items_say_whether_their_trace_was_captured(sandbox):
    run = sandbox.post("/preprod-evals", json={"name": "c", "version_label": "c1",
                                               "dataset_id": "ds_refunds"}).json()
    assert {i["captured"] for i in run["items"]} == {False}
    env = sandbox.agent_env(OTEL_RESOURCE_ATTRIBUTES=(
        f"neens.eval_run_id={run['id']},neens.dataset_item_id=it_2,neens.version_label=c1"))
    subprocess.run([PY, str(AGENT)], input="Refund for order 7, $19.99", env=env, text=True,
                   capture_output=True, timeout=120, check=True)
    items = sandbox.get(f"/preprod-evals/{run['id']}").json()["items"]
    assert {i["datasetVersionItemId"]: i["captured"] for i in items if i["captured"]} == {
        "it_2": True}


def keyed(sb, path, body, key):
    return requests.post(sb.url + path, json=body, timeout=10,
                         headers={**sb.headers, "Idempotency-Key": key})


def test_sweep_suite_and_launch_keys_answer_the_first_object(tmp_path):
    data = ROOT / "tests" / "integration" / "data"
    (tmp_path / "sweeps").mkdir()
    sb = start_sandbox(tmp_path / "sweeps", seed=data / "sweep_seed.yaml")
    try:
        body = {"name": "s", "versionLabel": "v", "datasetId": "ds_sweep", "passK": 1,
                "arms": [{"label": "a", "model": "gpt-4o", "runnerMode": "runner"}]}
        assert sb.get("/model-sweeps?idempotency_key=sw-1").json() == {"sweeps": []}
        first = keyed(sb, "/model-sweeps", body, "sw-1")
        again = keyed(sb, "/model-sweeps", body, "sw-1")
        assert (first.status_code, again.status_code) == (201, 200)
        assert again.json()["id"] == first.json()["id"]
        found = sb.get("/model-sweeps?idempotency_key=sw-1").json()["sweeps"]
        assert [s["id"] for s in found] == [first.json()["id"]]
        assert keyed(sb, "/model-sweeps", body, "sw-2").json()["id"] != first.json()["id"]
        assert sb.get("/model-sweeps").status_code == 422
    finally:
        sb.stop()
    (tmp_path / "suites").mkdir()
    sb = start_sandbox(tmp_path / "suites", seed=data / "stress_seed.yaml")
    try:
        body = {"name": "st", "failure_mode_ids": ["fm_refund"]}
        first = keyed(sb, "/scenario-suites", body, "su-1")
        again = keyed(sb, "/scenario-suites", body, "su-1")
        suite_id = first.json()["id"]
        assert (first.status_code, again.status_code, again.json()["id"]) == (201, 200, suite_id)
        assert [s["id"] for s in sb.get("/scenario-suites?idempotency_key=su-1").json()[
            "suites"]] == [suite_id]
        for _ in range(100):
            if sb.get(f"/scenario-suites/{suite_id}").json()["status"] == "ready":
                break
            time.sleep(0.1)
        path = f"/scenario-suites/{suite_id}/launch"
        run = keyed(sb, path, {"version_label": "v"}, "la-1")
        rerun = keyed(sb, path, {"version_label": "v"}, "la-1")
        assert (run.status_code, rerun.status_code) == (201, 200)
        assert rerun.json()["id"] == run.json()["id"]
        runs = sb.get("/preprod-evals?idempotency_key=la-1").json()["runs"]  # the E1 lookup
        assert [r["id"] for r in runs] == [run.json()["id"]]
    finally:
        sb.stop()
