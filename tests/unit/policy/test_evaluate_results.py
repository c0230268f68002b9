"""Evaluating a gate-as-code policy, part 2: unpriced cost, degraded fetches, results."""

from __future__ import annotations

import json

import pytest

from neens_action.api.answers import Run
from neens_action.policy import GatePolicy, PolicyEval, RuleResult, evaluate
from tests.unit.policy.support import comparison, policy, run_eval, statuses

# --- unpriced cost -----------------------------------------------------------------------------


@pytest.mark.parametrize("mode", ["block", "warn", "pass"])
def test_candidate_unpriced_skips_every_cost_check(mode: str) -> None:
    comp = comparison(cand={"avg_cost": None, "unpricedModels": ["local-llm", "gpt-x"]},
                      cost=(0.01, None, None))
    pol = policy({"cost": {"max_avg_usd": 0.0, "max_delta": 0.0, "max_delta_pct": 0}},
                 {"latency": {"max_avg_ms": 10}}, mode=mode)
    result = run_eval(pol, comp=comp)
    cost = result.results[:3]
    assert [r.status for r in cost] == ["skipped"] * 3
    assert all("unpriced: local-llm, gpt-x" in r.reason for r in cost)
    assert all("Model pricing" in r.reason for r in cost)
    assert [r.threshold for r in cost] == [0.0, 0.0, 0]
    assert result.results[3].status == "fail"  # latency has no unpriced logic


def test_baseline_unpriced_skips_only_deltas() -> None:
    comp = comparison(base={"avg_cost": None, "unpricedModels": ["old-model"]},
                      cost=(None, 0.012, None))
    pol = policy({"cost": {"max_avg_usd": 0.01, "max_delta": 0.1, "max_delta_pct": 5}},
                 mode="block")
    result = run_eval(pol, comp=comp)
    assert statuses(result) == [("cost", "fail"), ("cost", "skipped"), ("cost", "skipped")]
    assert "no baseline session ran on a priced model (unpriced: old-model)" in \
        result.results[1].reason


def test_candidate_with_no_sessions_is_not_unpriced() -> None:
    comp = comparison(cand={"avg_cost": None, "n": 0, "unpricedModels": []})
    result = run_eval(policy({"cost": {"max_avg_usd": 0.05}}), comp=comp)
    assert result.results[0].status == "skipped"
    assert "no data" in result.results[0].reason
    assert "unpriced" not in result.results[0].reason


def test_unpriced_without_model_names() -> None:
    comp = comparison(cand={"avg_cost": None, "unpricedModels": None})
    r = run_eval(policy({"cost": {"max_avg_usd": 0.05}}), comp=comp).results[0]
    assert r.status == "skipped" and "unpriced: unknown models" in r.reason


# --- failed fetches degrade ----------------------------------------------------------------------


def test_comparison_unavailable_degrades_to_skipped_or_warn() -> None:
    pol = policy({"cost": {"max_avg_usd": 1, "max_delta_pct": 1}},
                 {"max_regressions": 0}, {"min_pass_rate": 0.5}, mode="block")
    run = {"aggregate": {"passRate": 0.9}}
    result = run_eval(pol, run=run, comp=None, default_comp=False)
    assert statuses(result) == [("cost", "skipped"), ("cost", "warn"), ("regressions", "warn"),
                                ("pass_rate", "pass")]
    assert "could not be fetched" in result.results[0].reason
    assert "downgraded to a warning" in result.results[1].reason
    assert not result.blocked
    result = run_eval(policy({"steps": {"max_delta": 1}}, mode="pass"), comp=None,
                      default_comp=False)
    assert statuses(result) == [("steps", "skipped")]


def test_comparison_unavailable_regressions_still_use_run_aggregate() -> None:
    result = run_eval(policy({"max_regressions": 0}, mode="block"), comp=None, default_comp=False)
    assert statuses(result) == [("regressions", "fail")]
    assert result.results[0].observed == 1


# --- aggregation and serialisation -----------------------------------------------------------


def test_blocked_warned_and_reasons() -> None:
    pol = policy({"max_abs_failures": 1}, {"min_avg_score": 0.9, "severity": "warn"},
                 {"min_pass_rate": 0.5})
    result = run_eval(pol)
    assert result.blocked and result.warned
    assert result.reasons() == ["abs_failures 2 > 1", "warning: avg_score 0.82 < 0.9"]
    assert [r.dimension for r in result.failures] == ["abs_failures"]
    assert [r.dimension for r in result.warnings] == ["avg_score"]


def test_to_json_shape() -> None:
    result = run_eval(policy({"metric": "correctness", "min_avg": 0.9}))
    doc = result.to_json()
    assert doc == {
        "blocked": True,
        "warned": False,
        "results": [{
            "dimension": "metric[correctness]", "severity": "block", "status": "fail",
            "observed": 0.8, "threshold": {"metric": "correctness", "min_avg": 0.9},
            "reason": "metric[correctness] 0.8 < min_avg 0.9",
        }],
    }
    json.dumps(doc, allow_nan=False)


def test_ci_rule_nulls_non_finite_numbers() -> None:
    r = RuleResult("cost", "warn", "warn", float("inf"), {"max_avg_usd": float("nan"), "x": [1.0]},
                   "msg")
    assert r.to_ci_rule() == {"rule": "cost", "observed": None,
                              "threshold": {"max_avg_usd": None, "x": [1.0]},
                              "severity": "warn", "outcome": "warn", "message": "msg"}
    assert r.to_json()["observed"] is None


def test_empty_policy_evaluates_to_nothing() -> None:
    result = evaluate(GatePolicy.from_dict({}), run=Run(), comparison=None, metrics=None)
    assert result == PolicyEval(blocked=False, warned=False, results=[])
    assert result.reasons() == []
    assert result.to_json() == {"blocked": False, "warned": False, "results": []}


def test_example_policy_end_to_end() -> None:
    from tests.unit.policy.test_load import EXAMPLE

    pol = GatePolicy.from_file(EXAMPLE)
    result = run_eval(pol)
    assert [r.dimension for r in result.results] == [
        "cost", "cost", "latency", "latency", "steps", "steps", "abs_failures", "regressions",
        "pass_rate", "avg_score", "metric[correctness]", "metric[toxicity_safety]",
    ]
    assert [r.status for r in result.results] == [
        "pass", "pass", "pass", "warn", "pass", "pass", "pass", "pass", "fail", "pass", "pass",
        "pass",
    ]
    assert result.blocked and result.warned
