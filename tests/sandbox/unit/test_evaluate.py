from __future__ import annotations

import pytest

from neens_sandbox import baselines, evaluate
from neens_sandbox.http import ApiError


def item(iid, passed, *, gate=None, error=None, cost=0.001, model="m", score=None):
    session = {"costUsd": cost, "latencyMs": 100.0, "steps": 2,
               "unpricedModels": [] if cost is not None else [model]}
    return {"item_id": iid, "input": iid, "passed": passed, "error": error, "gate_id": gate,
            "score": score if score is not None else (1.0 if passed else 0.0),
            "scores": {"correctness": 1.0 if passed else 0.0}, "session": session}


RUN = {"id": "ppr_1", "status": "completed", "dataset_id": "ds", "gate": {}, "gates": [],
       "error": None, "resolution": None}


def test_aggregate_counts_unscored_as_not_passed():
    agg = evaluate.aggregate([item("a", True), item("b", False),
                              item("c", None, error="no trace captured")])
    assert agg["passRate"] == pytest.approx(1 / 3) and agg["errored"] == 1
    assert agg["failed"] == 1 and agg["avgScore"] == 0.5


def test_comparison_regressions_new_passes_and_unscored():
    items = [item("a", True), item("b", False), item("c", None, error="x"), item("d", True)]
    cohort = {"a": {"passed": False, "session": {}}, "b": {"passed": True, "session": {}},
              "c": {"passed": True, "session": {}}}
    cmp = evaluate.comparison(RUN, items, cohort, {"kind": "preprod_run", "runId": "p0"})
    assert [r["itemId"] for r in cmp["regressions"]] == ["b", "c"]
    assert [r["itemId"] for r in cmp["newPasses"]] == ["a"]
    assert cmp["baseline"]["matchedItems"] == 3 and cmp["baseline"]["compared"] is True
    none = evaluate.comparison(RUN, items, {}, {"kind": "prod_window", "range": "7d"})
    assert none["baseline"]["compared"] is False
    assert none["deltas"]["cost"] == {"before": None, "after": None, "delta": None}
    gates_only = evaluate.comparison({**RUN, "dataset_id": None}, items, {}, None)
    assert gates_only["baseline"]["compared"] is None


def test_cost_rules_unpriced_missing_baseline_and_pct():
    cohort = {"a": {"passed": True, "session": {"costUsd": 0.002}}}
    cfg = {"max_avg_usd": 0.0005, "max_delta": 1.0, "max_delta_pct": -40}
    cmp = evaluate.comparison(RUN, [item("a", True)], cohort, {"kind": "x"})
    rules = {r["rule"]: r for r in evaluate.cost_rules(cfg, cmp)}
    assert rules["max_avg_usd"]["status"] == "fail"
    assert rules["max_delta"]["status"] == "pass"
    assert rules["max_delta_pct"]["observed"] == -50.0
    assert rules["max_delta_pct"]["status"] == "pass"
    unpriced = evaluate.comparison(RUN, [item("a", True, cost=None, model="llama")], cohort,
                                   {"kind": "x"})
    out = evaluate.cost_rules(cfg, unpriced)
    assert {r["status"] for r in out} == {"skipped"} and "llama" in out[0]["reason"]
    nobase = evaluate.comparison(RUN, [item("a", True)], {}, {"kind": "x"})
    rules = {r["rule"]: r for r in evaluate.cost_rules(cfg, nobase)}
    assert rules["max_avg_usd"]["status"] == "fail"
    assert rules["max_delta"]["status"] == "skipped" and "no baseline" in rules[
        "max_delta"]["reason"]


def test_gate_verdict_rules():
    items = [item("a", True), item("b", False)]
    cmp = evaluate.comparison(RUN, items, {}, None)
    ok = evaluate.gate_verdict({**RUN, "gate": {"max_regressions": 0}}, items, cmp)
    assert ok["passed"] is True and ok["regressions"] is None
    low = evaluate.gate_verdict({**RUN, "gate": {"min_pass_rate": 0.9}}, items, cmp)
    assert low["passed"] is False and "pass rate 50.00% < 90.00%" in low["reasons"]
    failed = evaluate.gate_verdict({**RUN, "status": "failed"}, items, cmp)
    assert failed["passed"] is False
    running = evaluate.gate_verdict({**RUN, "status": "running"}, items, cmp)
    assert running["passed"] is False
    none = [item("a", None, error="no trace captured")]
    empty = evaluate.gate_verdict(RUN, none, evaluate.comparison(RUN, none, {}, None))
    assert "no item was scored" in empty["reasons"]


def test_gate_rows_and_metrics():
    sel = {"gateId": "g", "name": "G", "enforced": True, "threshold": 0.5,
           "passThreshold": 0.5, "thresholdSource": "server"}
    run = {**RUN, "gates": [sel]}
    rows = evaluate.gate_rows(run, [item("x", True, gate="g"), item("y", False, gate="g")])
    assert rows[0]["verdict"] == "pass" and rows[0]["passRate"] == 0.5
    nodata = evaluate.gate_rows(run, [item("x", None, gate="g", error="no trace captured")])
    assert nodata[0]["verdict"] == "no_data" and nodata[0]["passed"] is False
    pending = evaluate.gate_rows({**run, "status": "running"}, [item("x", None, gate="g")])
    assert pending[0]["verdict"] == "pending"
    m = evaluate.metrics(RUN, [item("a", True), item("b", False)])
    assert m["metrics"] == [{"metricKey": "correctness", "avgScore": 0.5, "passRate": 0.5,
                             "scored": 2}]


@pytest.mark.parametrize("spec, wire", [
    ("run:ppr_1", {"kind": "preprod_run", "value": "ppr_1"}),
    ("branch: main ", {"kind": "branch", "value": "main"}),
    ("prod", {"kind": "prod_window", "range": "7d"}),
    ("prod:30d", {"kind": "prod_window", "range": "30d"}),
])
def test_baseline_specs(spec, wire):
    assert baselines.parse_spec(spec) == wire


@pytest.mark.parametrize("raw", [
    {"kind": "branch", "value": ""}, {"kind": "branch"}, {"kind": "prod_window", "range": ""},
    {"kind": "what"}, "branch:main",
])
def test_invalid_baselines_are_422(raw):
    with pytest.raises(ApiError) as err:
        baselines.validate(raw)
    assert err.value.status == 422
