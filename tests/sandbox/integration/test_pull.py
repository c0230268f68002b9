"""Pull runs end to end: the real sandbox, the real OpenTelemetry example agent."""

from __future__ import annotations

import pytest

from tests.helpers import items_of, start_sandbox
from tests.sandbox.integration.support import create, eval_run, replay, run_agent, wait_terminal

DS = {"dataset_id": "ds_refunds"}


def test_good_agent_scores_every_item_and_passes(sandbox):
    run = eval_run(sandbox, {**DS, "gate": {"min_pass_rate": 0.9}})
    assert run["status"] == "completed"
    assert (run["completed"], run["total"]) == (6, 6)
    agg = run["aggregate"]
    assert agg["passRate"] == 1.0 and agg["passed"] == 6 and agg["failed"] == 0
    assert agg["errored"] == 0 and agg["avgScore"] == 1.0
    assert [i["datasetVersionItemId"] for i in run["items"]] == [f"it_{n}" for n in range(1, 7)]
    first = run["items"][0]
    assert first["passed"] is True and first["gateId"] is None
    assert first["scores"] == {"correctness": 1.0, "toxicity_safety": 1.0}
    assert "$42.00" in first["output"] and first["model"] == "gpt-4o-mini"
    assert first["steps"] == 2 and first["latencyMs"] > 0  # execute_tool + chat, not the agent
    # priced: gpt-4o-mini at 0.15 / 0.60 USD per million tokens
    expected = (first["inputTokens"] * 0.15 + first["outputTokens"] * 0.60) / 1e6
    assert first["costUsd"] == pytest.approx(expected)
    gate = sandbox.get(f"/preprod-evals/{run['id']}/gate").json()
    assert gate["passed"] is True and gate["passRate"] == 1.0
    assert gate["gate"] == {"min_pass_rate": 0.9} and gate["gates"] == []
    metrics = sandbox.get(f"/preprod-evals/{run['id']}/metrics").json()
    assert metrics["scored"] == 6
    assert {m["metricKey"]: m["avgScore"] for m in metrics["metrics"]} == {
        "correctness": 1.0, "toxicity_safety": 1.0}


def test_status_transitions_and_missing_traces(sandbox):
    run = create(sandbox, {**DS, "name": "t", "version_label": "v1"})
    assert run["status"] == "awaiting_traces" and run["total"] == 6
    items = items_of(sandbox, run["id"])
    assert items[0] == {"item_id": "it_1", "input": "Refund for order 42 ($42.00)?",
                        "expected_output": "$42.00", "gate_id": None}
    replay(sandbox, run["id"], items[:4])  # two items never get a trace
    mid = sandbox.get(f"/preprod-evals/{run['id']}").json()
    assert mid["status"] == "awaiting_traces" and mid["completed"] == 4  # scored at ingest
    started = sandbox.post(f"/preprod-evals/{run['id']}/start").json()
    assert started["status"] == "running" and started["total"] == 6
    assert "items" not in started  # the run object without its item views, unless asked
    asked = sandbox.post(f"/preprod-evals/{run['id']}/start?items=true").json()
    assert [i["datasetVersionItemId"] for i in asked["items"]][:2] == ["it_1", "it_2"]
    again = sandbox.post(f"/preprod-evals/{run['id']}/start")  # idempotent while running
    assert again.status_code == 200
    done = wait_terminal(sandbox, run["id"])  # after the 1 s capture grace
    # it_6 passed in production (default 7-day window): unscored now => a regression
    assert done["status"] == "completed_with_regressions"
    cmp = sandbox.get(f"/preprod-evals/{run['id']}/comparison").json()
    assert [r["itemId"] for r in cmp["regressions"]] == ["it_6"]
    assert cmp["regressions"][0]["after"] == "unscored"
    missing = [i for i in done["items"] if i["passed"] is None]
    assert [i["datasetVersionItemId"] for i in missing] == ["it_5", "it_6"]
    assert all(i["error"] == "no trace captured" for i in missing)
    agg = done["aggregate"]
    assert agg["passRate"] == pytest.approx(4 / 6) and agg["errored"] == 2
    assert sandbox.post(f"/preprod-evals/{run['id']}/start").status_code == 409
    assert sandbox.post(f"/preprod-evals/{run['id']}/cancel").status_code == 409


def test_nothing_captured_fails_the_gate(sandbox):
    run = eval_run(sandbox, DS, skip=tuple(f"it_{n}" for n in range(1, 7)))
    assert run["status"] == "completed_with_regressions"  # production passes were lost
    assert run["aggregate"]["passed"] == 0 and run["aggregate"]["errored"] == 6
    gate = sandbox.get(f"/preprod-evals/{run['id']}/gate").json()
    assert gate["passed"] is False and "no item was scored" in gate["reasons"]


def test_bad_agent_fails_some_items(sandbox):
    run = eval_run(sandbox, DS, mode="bad")
    failed = sorted(i["datasetVersionItemId"] for i in run["items"] if i["passed"] is False)
    assert failed == ["it_2", "it_3", "it_5"]  # odd order numbers get a wrong amount
    assert run["aggregate"]["passRate"] == 0.5
    assert "missing '$19.99'" in run["items"][1]["reason"]


def test_json_protocol_and_unpriced_model(sandbox):
    run = eval_run(sandbox, DS, protocol="http/json", model="llama-3-local")
    assert run["status"] == "completed" and run["aggregate"]["passed"] == 6
    assert all(i["model"] == "llama-3-local" and i["costUsd"] is None for i in run["items"])
    cmp = sandbox.get(f"/preprod-evals/{run['id']}/comparison").json()
    cand = cmp["traits"]["candidate"]
    assert cand["n"] == 6 and cand["avg_cost"] is None
    assert cand["unpricedModels"] == ["llama-3-local"]
    assert cmp["deltas"]["cost"] == {"before": None, "after": None, "delta": None}


def test_cost_rules_priced_unpriced_and_failing(sandbox):
    gate_cfg = {"cost": {"max_avg_usd": 0.000001, "max_delta_pct": 50}}
    priced = eval_run(sandbox, {**DS, "gate": gate_cfg})
    gate = sandbox.get(f"/preprod-evals/{priced['id']}/gate").json()
    rules = {r["rule"]: r for r in gate["costRules"]}
    assert rules["max_avg_usd"]["status"] == "fail" and gate["passed"] is False
    assert rules["max_avg_usd"]["observed"] > 0.000001
    # default baseline: 7-day production window; it_1 and it_6 match, priced
    assert rules["max_delta_pct"]["status"] in ("pass", "fail")
    assert isinstance(rules["max_delta_pct"]["observed"], float)
    unpriced = eval_run(sandbox, {**DS, "gate": gate_cfg}, model="llama-3-local")
    gate = sandbox.get(f"/preprod-evals/{unpriced['id']}/gate").json()
    assert {r["status"] for r in gate["costRules"]} == {"skipped"}
    assert "llama-3-local" in gate["costRules"][0]["reason"]
    assert gate["passed"] is True
    nothing = sandbox.post("/preprod-evals", json={**DS, "version_label": "v", "gate": {
        "cost": None}}).json()
    assert nothing["gate"] == {}


def test_label_mismatch_and_legacy_attributes(sandbox):
    run = create(sandbox, {**DS, "name": "m", "version_label": "v1"})
    item = items_of(sandbox, run["id"])[0]
    run_agent(sandbox, run["id"], item, label="other-label",
              extra={"OTEL_RESOURCE_ATTRIBUTES": (
                  f"neens.eval_run_id={run['id']},neens.dataset_item_id={item['item_id']},"
                  f"neens.version_label=other-label,beacon.eval_run_id={run['id']}")})
    view = sandbox.get(f"/preprod-evals/{run['id']}").json()
    assert view["labelMismatch"] is True
    assert view["items"][0]["passed"] is True  # still linked
    assert view["legacyCorrelationSeenAt"] and view["legacyCorrelationAttrs"] == [
        "beacon.eval_run_id"]


def test_percent_encoded_ids_and_span_attribute_fallback(sandbox):
    run = create(sandbox, {**DS, "name": "p", "version_label": "v 1,rc"})
    item = items_of(sandbox, run["id"])[0]
    run_agent(sandbox, run["id"], item, label="v 1,rc", extra={
        "OTEL_RESOURCE_ATTRIBUTES": (f"neens.eval_run_id={run['id']},neens.dataset_item_id="
                                     f"{item['item_id']},neens.version_label=v%201%2Crc")})
    view = sandbox.get(f"/preprod-evals/{run['id']}").json()
    assert view["items"][0]["passed"] is True and view["labelMismatch"] is False


def test_score_delay_holds_the_verdict(tmp_path):
    sb = start_sandbox(tmp_path, extra=["--score-delay", "2"])
    try:
        run = create(sb, {**DS, "name": "d", "version_label": "v1"})
        replay(sb, run["id"], items_of(sb, run["id"]))
        import time

        t0 = time.monotonic()
        sb.post(f"/preprod-evals/{run['id']}/start")
        assert sb.get(f"/preprod-evals/{run['id']}").json()["status"] == "running"
        done = wait_terminal(sb, run["id"])
        assert time.monotonic() - t0 >= 1.9
        assert done["status"] == "completed" and done["aggregate"]["passed"] == 6
    finally:
        sb.stop()


def test_cancel_and_ci_result(sandbox):
    run = create(sandbox, {**DS, "name": "c", "version_label": "v1"})
    assert sandbox.get(f"/preprod-evals/{run['id']}").json()["buildVerdict"] == "unknown"
    body = {"verdict": "blocked", "exit_code": 1, "enforced": True, "gate_passed": False,
            "rules": [], "policy": None, "sdk": {"name": "neens-action", "version": "1"}}
    assert sandbox.post(f"/preprod-evals/{run['id']}/ci-result", json=body).status_code == 200
    body2 = {**body, "verdict": "errored", "exit_code": 2}
    assert sandbox.post(f"/preprod-evals/{run['id']}/ci-result", json=body2).status_code == 200
    cancelled = sandbox.post(f"/preprod-evals/{run['id']}/cancel").json()
    assert cancelled["status"] == "cancelled"
    view = sandbox.get(f"/preprod-evals/{run['id']}").json()
    assert view["ciResult"]["verdict"] == "errored" and view["ciResult"]["exit_code"] == 2
    assert view["buildVerdict"] == "errored"
    assert sandbox.post(f"/preprod-evals/{run['id']}/cancel").status_code == 409
    late = sandbox.post(f"/preprod-evals/{run['id']}/ci-result", json={"verdict": "nope"})
    assert late.status_code == 422


def test_correlation_keys_as_span_attributes(sandbox):
    import requests

    run = create(sandbox, {**DS, "name": "s", "version_label": "v1"})

    def attr(key, value):
        return {"key": key, "value": {"stringValue": value}}

    body = {"resourceSpans": [{"resource": {"attributes": [attr("service.name", "x")]},
                               "scopeSpans": [{"spans": [{
        "traceId": "0af7651916cd43dd8448eb211c80319c", "spanId": "b7ad6b7169203331",
        "name": "root", "startTimeUnixNano": "1000000", "endTimeUnixNano": "9000000",
        "attributes": [attr("neens.eval_run_id", run["id"]),
                       attr("neens.dataset_item_id", "it_1"),
                       attr("neens.output", "Refund of $42.00 approved")]}]}]}]}
    resp = requests.post(sandbox.url + "/v1/traces", json=body, headers=sandbox.headers,
                         timeout=10)
    assert resp.status_code == 200 and resp.json() == {}
    item = sandbox.get(f"/preprod-evals/{run['id']}").json()["items"][0]
    assert item["passed"] is True and item["latencyMs"] == 8.0
    assert item["costUsd"] is None  # no model, no usage: unpriced, never $0


def test_finish_on_ingest_option(tmp_path):
    sb = start_sandbox(tmp_path, extra=["--finish-on-ingest"])
    try:
        run = create(sb, {**DS, "name": "f", "version_label": "v1"})
        items = items_of(sb, run["id"])
        replay(sb, run["id"], items[:5])
        assert sb.get(f"/preprod-evals/{run['id']}").json()["status"] == "awaiting_traces"
        replay(sb, run["id"], items[5:])
        done = wait_terminal(sb, run["id"])
        assert done["status"] == "completed" and done["aggregate"]["passed"] == 6
        assert sb.post(f"/preprod-evals/{run['id']}/start").status_code == 409
    finally:
        sb.stop()
