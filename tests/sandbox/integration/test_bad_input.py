"""Bad input: each a JSON ``detail`` with the right status, nothing written, still serving."""

from __future__ import annotations

import requests

from tests.helpers import db_count
from tests.sandbox.integration.support import create

DS = {"dataset_id": "ds_refunds", "name": "x", "version_label": "v1"}


def _assert_rejected(sb, resp, status: int, needle: str) -> None:
    assert resp.status_code == status, resp.text
    assert resp.headers["Content-Type"] == "application/json"
    detail = resp.json()["detail"]
    assert isinstance(detail, str) and needle in detail


def test_create_errors_write_nothing(sandbox):
    post = sandbox.post
    cases = [
        (requests.post(sandbox.url + "/preprod-evals", headers={
            **sandbox.headers, "Content-Type": "application/json"}, data=b"{not json",
            timeout=10), 400, "malformed JSON"),
        (requests.post(sandbox.url + "/preprod-evals", headers=sandbox.headers,
                       data="[1, 2]", timeout=10), 400, "must be an object"),
        (post("/preprod-evals", json={**DS, "dataset_id": "ds_nope"}), 404, "ds_nope"),
        (post("/preprod-evals", json={**DS, "dataset_id": "ds_drafts"}), 422,
         "no golden version"),
        (post("/preprod-evals", json={**DS, "baseline": {"kind": "branch", "value": ""}}),
         422, "branch name is empty"),
        (post("/preprod-evals", json={**DS, "baseline": {"kind": "prod_window",
                                                         "range": "soon"}}), 422, "range"),
        (post("/preprod-evals", json={**DS, "baseline": {"kind": "preprod_run",
                                                         "value": "ppr_missing"}}), 422,
         "not found"),
        (post("/preprod-evals", json={**DS, "gate": {"max_regressions": -1}}), 422,
         "max_regressions"),
        (post("/preprod-evals", json={**DS, "gate": {"cost": {"max_usd": 1}}}), 422,
         "max_usd"),
        (post("/preprod-evals", json={**DS, "gates": ["gate-nope"]}), 422, "gate-nope"),
        (post("/preprod-evals", json={**DS, "gates": "all"}), 422, "active"),
        (post("/preprod-evals", json={**DS, "gates": "active", "gates_policy": {
            "enforce": []}}), 422, "not both"),
        (post("/preprod-evals", json={"name": "x", "version_label": "v1"}), 422,
         "dataset_id"),
        (post("/preprod-evals", json={"dataset_id": "ds_refunds"}), 422, "version_label"),
        (post("/preprod-evals", json={**DS, "pr_number": "12"}), 422, "pr_number"),
        (post("/preprod-evals", json={**DS, "runner_mode": "push"}), 422,
         "agent_connection_id"),
        (post("/preprod-evals", json={**DS, "runner_mode": "push",
                                      "agent_connection_id": "conn_nope"}), 404, "conn_nope"),
        (post("/preprod-evals", json={**DS, "judge_deployment_ids": ["j_nope"]}), 422,
         "j_nope"),
        (post("/preprod-evals", json={**DS, "dataset_version_id": "dsv_nope"}), 404,
         "dsv_nope"),
    ]
    for resp, status, needle in cases:
        _assert_rejected(sandbox, resp, status, needle)
    assert db_count(sandbox, "runs") == 0 and db_count(sandbox, "run_items") == 0
    assert create(sandbox, DS)["status"] == "awaiting_traces"  # still serving


def test_auth_on_every_route_including_otlp(sandbox):
    run = create(sandbox, DS)
    paths = [("POST", "/preprod-evals"), ("GET", f"/preprod-evals/{run['id']}"),
             ("GET", f"/preprod-evals/{run['id']}/items"),
             ("POST", f"/preprod-evals/{run['id']}/start"),
             ("POST", f"/preprod-evals/{run['id']}/cancel"),
             ("GET", f"/preprod-evals/{run['id']}/gate"),
             ("GET", "/flywheel/gates/ci"), ("POST", "/v1/traces"), ("GET", "/nowhere")]
    for headers, needle in (({}, "missing API key"),
                            ({"Authorization": "Bearer nk_live_wrong"}, "invalid API key"),
                            ({"Authorization": "Basic abc"}, "Bearer")):
        for method, path in paths:
            resp = requests.request(method, sandbox.url + path, headers=headers, timeout=10,
                                    data=b"{}" if method == "POST" else None)
            _assert_rejected(sandbox, resp, 401, needle)
    view = sandbox.get(f"/preprod-evals/{run['id']}").json()
    assert view["status"] == "awaiting_traces"  # /start and /cancel were refused
    assert db_count(sandbox, "runs") == 1
    # the seed's key works as well as --api-key
    seeded = requests.get(sandbox.url + f"/preprod-evals/{run['id']}", timeout=10,
                          headers={"Authorization": "Bearer nk_live_sandbox"})
    assert seeded.status_code == 200


def test_otlp_garbage_and_unknown_routes(sandbox):
    run = create(sandbox, DS)
    garbage = [
        (b"\xff\xff\xff\xff\x0f", "application/x-protobuf"),
        (b"{not json", "application/json"),
        (b'{"resourceSpans": [{"scopeSpans": [{"spans": [{"traceId": "xyz"}]}]}]}',
         "application/json"),
        (b"<xml/>", "text/xml"),
    ]
    for body, ctype in garbage:
        resp = requests.post(sandbox.url + "/v1/traces", data=body, timeout=10,
                             headers={**sandbox.headers, "Content-Type": ctype})
        assert resp.status_code == 400, (body, resp.text)
        assert resp.json()["detail"]
    gz = requests.post(sandbox.url + "/v1/traces", data=b"not gzip", timeout=10,
                       headers={**sandbox.headers, "Content-Type": "application/x-protobuf",
                                "Content-Encoding": "gzip"})
    assert gz.status_code == 400
    empty = requests.post(sandbox.url + "/v1/traces", data=b"{}", timeout=10,
                          headers={**sandbox.headers, "Content-Type": "application/json"})
    assert empty.status_code == 200 and empty.json() == {}
    assert db_count(sandbox, "spans") == 0
    _assert_rejected(sandbox, sandbox.get("/preprod-evals/ppr_nope"), 404, "ppr_nope")
    _assert_rejected(sandbox, sandbox.get("/nowhere"), 404, "no such route")
    _assert_rejected(sandbox, sandbox.get("/preprod-evals/" + run["id"] + "/start"), 405,
                     "not allowed")
    _assert_rejected(sandbox, sandbox.post(f"/preprod-evals/{run['id']}/run"), 409,
                     "pull run")
    assert sandbox.get(f"/preprod-evals/{run['id']}").json()["status"] == "awaiting_traces"


def test_spans_for_unknown_runs_are_rejected_partially(sandbox):
    body = {"resourceSpans": [{
        "resource": {"attributes": [
            {"key": "neens.eval_run_id", "value": {"stringValue": "ppr_ghost"}},
            {"key": "neens.dataset_item_id", "value": {"stringValue": "it_1"}}]},
        "scopeSpans": [{"spans": [{
            "traceId": "0af7651916cd43dd8448eb211c80319c", "spanId": "b7ad6b7169203331",
            "name": "x", "startTimeUnixNano": "1", "endTimeUnixNano": "2"}]}]}]}
    resp = requests.post(sandbox.url + "/v1/traces", json=body, headers=sandbox.headers,
                         timeout=10)
    assert resp.status_code == 200
    partial = resp.json()["partialSuccess"]
    assert partial["rejectedSpans"] == "1" and "ppr_ghost" in partial["errorMessage"]
    assert db_count(sandbox, "spans") == 0
