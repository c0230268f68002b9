"""Evaluating a gate-as-code policy (spec neens-api.md 9.2-9.6). Pure functions only."""

from __future__ import annotations

from typing import Any

import pytest

from neens_action.policy import GatePolicy
from tests.unit.policy.support import RUN, comparison, policy, run_eval, statuses

# --- nested dimensions ------------------------------------------------------------------------


@pytest.mark.parametrize(("dim", "avg_key", "delta_key", "avg", "delta", "pct"), [
    ("cost", "max_avg_usd", "max_delta", 0.012, 0.002, 20.0),
    ("latency", "max_avg_ms", "max_delta_ms", 1500, 500, 50.0),
    ("steps", "max_avg", "max_delta", 5, 1, 25.0),
])
def test_nested_dimension_pass_and_breach(
    dim: str, avg_key: str, delta_key: str, avg: float, delta: float, pct: float
) -> None:
    passing = {dim: {avg_key: avg, delta_key: delta, "max_delta_pct": pct}}
    result = run_eval(policy(passing))
    assert statuses(result) == [(dim, "pass")] * 3
    assert [r.observed for r in result.results] == [avg, delta, pct]
    assert [r.threshold for r in result.results] == [avg, delta, pct]
    assert not result.blocked and not result.warned

    tight = {dim: {avg_key: avg * 0.9, delta_key: delta * 0.9, "max_delta_pct": pct - 1}}
    result = run_eval(policy(tight))
    assert statuses(result) == [(dim, "fail")] * 3
    assert result.blocked and not result.warned
    assert result.results[0].reason.startswith(f"{dim} {avg_key} ")
    assert " > " in result.results[0].reason
    assert result.results[2].reason.endswith("%")

    result = run_eval(policy({**tight, "severity": "warn"}))
    assert statuses(result) == [(dim, "warn")] * 3
    assert result.warned and not result.blocked
    assert all(r.severity == "warn" for r in result.results)


def test_nested_results_follow_avg_delta_pct_order() -> None:
    result = run_eval(policy({"latency": {"max_delta_pct": 99, "max_avg_ms": 9999,
                                          "max_delta_ms": 9999}}))
    assert [r.threshold for r in result.results] == [9999, 9999, 99]


def test_empty_nested_rule_yields_nothing() -> None:
    assert run_eval(policy({"cost": {}})).results == []


def test_percentage_uses_server_delta_not_after_minus_before() -> None:
    comp = comparison(latency=(1000, 99999, 250))
    result = run_eval(policy({"latency": {"max_delta_pct": 30}}), comp=comp)
    assert result.results[0].observed == 25.0
    assert result.results[0].status == "pass"


def test_percentage_is_rounded_to_two_decimals() -> None:
    comp = comparison(cost=(0.03, 0.04, 0.01))
    result = run_eval(policy({"cost": {"max_delta_pct": 50}}), comp=comp)
    assert result.results[0].observed == 33.33


def test_negative_percentage_budget() -> None:
    comp = comparison(cost=(0.010, 0.004, -0.006))  # 60% cheaper
    must_halve = run_eval(policy({"cost": {"max_delta_pct": -50}}), comp=comp).results[0]
    assert (must_halve.observed, must_halve.status) == (-60.0, "pass")
    must_cut_70 = run_eval(policy({"cost": {"max_delta_pct": -70}}), comp=comp).results[0]
    assert must_cut_70.status == "fail"
    assert must_cut_70.reason == "cost max_delta_pct -60% > -70%"


def test_breach_is_strictly_greater() -> None:
    result = run_eval(policy({"steps": {"max_avg": 5}}, {"max_abs_failures": 2},
                             {"min_pass_rate": 0.8}, {"min_avg_score": 0.82}))
    assert [r.status for r in result.results] == ["pass"] * 4


# --- delta guards and missing baseline -------------------------------------------------------

GUARDS = [
    ({"cost": (None, 0.01, None)}, "delta is null"),
    ({"cost": (0, 0.01, 0.01)}, "baseline average is 0"),
    ({"cost": (0.0, 0.01, 0.01)}, "baseline average is 0"),
    ({"cost": (None, 0.01, 0.01)}, "baseline average is null"),
    ({"cost": ("0.01", 0.01, 0.01)}, "baseline average is null"),
    ({"cost": (0.01, 0.02, "0.01")}, "delta is null"),
    ({"cost": (0.01, 0.02, float("nan"))}, "delta is null"),
    ({"cost": (0.01, 0.02, True)}, "delta is null"),
    ({"base": {"n": 0, "avg_cost": None}}, "baseline cohort has no sessions"),
]


@pytest.mark.parametrize(("kw", "why"), GUARDS)
def test_percentage_guard_is_a_missing_baseline(kw: dict[str, Any], why: str) -> None:
    pol = policy({"cost": {"max_avg_usd": 1, "max_delta_pct": 10}}, mode="block")
    result = run_eval(pol, comp=comparison(**kw))
    avg, pct = result.results
    assert avg.status == "pass"
    assert pct.status == "fail"
    assert pct.observed is None
    assert pct.threshold == {"max_avg_usd": 1, "max_delta_pct": 10}
    assert why in pct.reason
    assert pct.reason.endswith("on_missing_baseline=block")


def test_absolute_delta_with_before_zero_is_evaluated() -> None:
    comp = comparison(steps=(0, 2, 2))
    result = run_eval(policy({"steps": {"max_delta": 1, "max_delta_pct": 10}}), comp=comp)
    assert statuses(result) == [("steps", "fail"), ("steps", "warn")]


def test_missing_deltas_block_entirely() -> None:
    comp = comparison()
    del comp["deltas"]
    result = run_eval(policy({"latency": {"max_delta_ms": 1}}), comp=comp)
    assert statuses(result) == [("latency", "warn")]


@pytest.mark.parametrize(("mode", "severity", "expected"), [
    ("block", "block", "fail"),
    ("block", "warn", "warn"),
    ("warn", "block", "warn"),
    ("warn", "warn", "warn"),
    ("pass", "block", "skipped"),
    ("pass", "warn", "skipped"),
])
def test_on_missing_baseline_modes(mode: str, severity: str, expected: str) -> None:
    comp = comparison(cost=(None, None, None), latency=(None, None, None), steps=(None, None, None),
                      compared=False, matched=0)
    rules = [
        {"cost": {"max_delta": 0.1}, "severity": severity},
        {"latency": {"max_delta_pct": 10}, "severity": severity},
        {"steps": {"max_delta": 1}, "severity": severity},
        {"max_regressions": 0, "severity": severity},
    ]
    result = run_eval(policy(*rules, mode=mode), comp=comp)
    assert [r.status for r in result.results] == [expected] * 4
    assert all(r.reason.endswith(f"on_missing_baseline={mode}") for r in result.results)
    assert result.blocked == (expected == "fail")
    assert result.warned == (expected == "warn")


def test_default_mode_is_warn() -> None:
    pol = GatePolicy.from_dict({"rules": [{"max_regressions": 0}]})
    result = run_eval(pol, comp=comparison(compared=False, matched=0))
    assert statuses(result) == [("regressions", "warn")]


def test_absolute_checks_ignore_missing_baseline() -> None:
    comp = comparison(cost=(None, None, None), compared=False, matched=0)
    pol = policy({"cost": {"max_avg_usd": 0.05}}, {"min_pass_rate": 0.5}, {"max_abs_failures": 5},
                 {"min_avg_score": 0.5}, {"metric": "correctness", "min_avg": 0.5}, mode="block")
    assert [r.status for r in run_eval(pol, comp=comp).results] == ["pass"] * 5


# --- regressions -------------------------------------------------------------------------------


def test_regressions_from_comparison_list() -> None:
    comp = comparison(regressions=({"itemId": "a"}, {"itemId": "b"}))
    result = run_eval(policy({"max_regressions": 1}), comp=comp)
    assert result.results[0].observed == 2
    assert result.results[0].status == "fail"
    assert result.results[0].reason == "regressions 2 > 1"


def test_regressions_fallback_to_run_aggregate() -> None:
    comp = comparison(regressions=None)
    result = run_eval(policy({"max_regressions": 0}), comp=comp)
    assert result.results[0].observed == 1
    assert isinstance(result.results[0].observed, int)
    run = {"aggregate": {"regressions": 3.0}}
    result = run_eval(policy({"max_regressions": 5}), run=run, comp=None, default_comp=False)
    assert result.results[0].observed == 3
    assert isinstance(result.results[0].observed, int)


@pytest.mark.parametrize(("compared", "matched", "run_compared", "missing"), [
    (False, 0, True, True),  # compared: false
    (False, 3, True, True),  # compared wins over matchedItems
    (True, 0, False, False),  # compared: true wins
    (None, 0, True, False),  # null = no baseline applies (gates-only): not "matched nothing"
    ("absent", 0, True, True),  # decision 9: fallback to matchedItems == 0
    ("absent", 2, False, False),  # matchedItems decides before the aggregate
    ("absent", "absent", False, True),  # then run.aggregate.baselineCompared
    ("absent", "absent", True, False),
    ("absent", "absent", None, False),
])
def test_matched_nothing_detection(compared: Any, matched: Any, run_compared: Any,
                                   missing: bool) -> None:
    comp = comparison(compared=compared, matched=matched, regressions=())
    run = {"aggregate": {**RUN["aggregate"], "baselineCompared": run_compared}}
    result = run_eval(policy({"max_regressions": 0}, mode="block"), run=run, comp=comp)
    r = result.results[0]
    if missing:
        assert r.status == "fail" and r.observed is None
        assert "matched none of the run's items" in r.reason
    else:
        assert r.status == "pass" and r.observed == 0


def test_no_regression_signal_is_missing_baseline() -> None:
    comp = comparison(regressions=None)
    run = {"aggregate": {"passRate": 1.0}}
    result = run_eval(policy({"max_regressions": 0}, mode="block"), run=run, comp=comp)
    assert statuses(result) == [("regressions", "fail")]
    assert result.results[0].threshold == 0


# --- scalar absolute rules ---------------------------------------------------------------------


def test_abs_failures() -> None:
    result = run_eval(policy({"max_abs_failures": 1}))
    assert (result.results[0].dimension, result.results[0].observed) == ("abs_failures", 2)
    assert result.results[0].status == "fail"
    assert result.results[0].reason == "abs_failures 2 > 1"


def test_pass_rate_and_fallback_to_comparison_candidate() -> None:
    result = run_eval(policy({"min_pass_rate": 0.9}))
    assert (result.results[0].dimension, result.results[0].observed) == ("pass_rate", 0.8)
    assert result.results[0].reason == "pass_rate 0.8 < 0.9"
    result = run_eval(policy({"min_pass_rate": 0.7}), run={"aggregate": {}})
    assert (result.results[0].observed, result.results[0].status) == (0.75, "pass")


def test_avg_score() -> None:
    result = run_eval(policy({"min_avg_score": 0.9, "severity": "warn"}))
    r = result.results[0]
    assert (r.dimension, r.observed, r.status, r.severity) == ("avg_score", 0.82, "warn", "warn")


@pytest.mark.parametrize("run", [None, {}, {"aggregate": None},
                                 {"aggregate": {"failed": None, "avgScore": float("nan"),
                                                "passRate": True}}])
def test_absolute_rules_without_data_are_skipped(run: Any) -> None:
    pol = policy({"max_abs_failures": 0}, {"min_avg_score": 0.5}, {"min_pass_rate": 0.5},
                 mode="block")
    comp = comparison()
    comp["candidate"] = {}
    result = run_eval(pol, run=run, comp=comp)
    assert [r.status for r in result.results] == ["skipped"] * 3
    assert all("no data" in r.reason for r in result.results)
    assert not result.blocked and not result.warned


# --- metric ------------------------------------------------------------------------------------


def test_metric_floor_and_ceiling() -> None:
    pol = policy({"metric": "correctness", "min_avg": 0.9},
                 {"metric": "toxicity_safety", "min_avg": 0.9, "severity": "warn"},
                 {"metric": "correctness", "max_avg": 0.5, "severity": "warn"},
                 {"metric": "correctness", "min_avg": 0.5, "max_avg": 0.9})
    result = run_eval(pol)
    assert statuses(result) == [("metric[correctness]", "fail"),
                                ("metric[toxicity_safety]", "pass"),
                                ("metric[correctness]", "warn"),
                                ("metric[correctness]", "pass")]
    assert result.results[0].threshold == {"metric": "correctness", "min_avg": 0.9}
    assert result.results[0].reason == "metric[correctness] 0.8 < min_avg 0.9"
    assert result.results[2].reason == "metric[correctness] 0.8 > max_avg 0.5"
    assert result.results[3].reason == "metric[correctness] 0.8 within min_avg 0.5 and max_avg 0.9"


def test_metric_missing_row_or_rollup_is_skipped() -> None:
    pol = policy({"metric": "faithfulness", "min_avg": 0.8})
    r = run_eval(pol).results[0]
    assert (r.status, r.observed) == ("skipped", None)
    assert "no score for metric 'faithfulness'" in r.reason
    r = run_eval(pol, metrics=None).results[0]
    assert r.status == "skipped" and "could not be fetched" in r.reason
    odd = {"metrics": [None, {"metricKey": "faithfulness", "avgScore": "high"}]}
    assert run_eval(pol, metrics=odd).results[0].status == "skipped"


