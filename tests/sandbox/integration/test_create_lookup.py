"""Sandbox support for safe creates and sharding: ``Idempotency-Key`` on E1 with the lookup
``GET /preprod-evals?idempotency_key=``, and ``items[].captured`` on the run object."""

from __future__ import annotations

import subprocess

import requests

from tests.helpers import AGENT, PY


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
