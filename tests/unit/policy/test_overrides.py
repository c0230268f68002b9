"""Override flags, build_policy and the server-gate merge (spec 9.7, 4.2, 4.9)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from neens_action.errors import PolicyError
from neens_action.policy import GatePolicy, Rule, build_policy, merge_server_gate

NONE = {"max_cost_delta_pct": None, "max_latency_delta_pct": None, "min_avg_score": None,
        "max_abs_failures": None}


@pytest.fixture
def policy_file(tmp_path: Path) -> Path:
    path = tmp_path / "team-gate.json"
    path.write_text(json.dumps({
        "gate": {"max_regressions": 0, "cost": None},
        "rules": [
            {"cost": {"max_avg_usd": 0.05, "max_delta_pct": 20}, "severity": "warn"},
            {"latency": {"max_avg_ms": 3000}},
            {"min_avg_score": 0.6, "severity": "warn"},
            {"cost": {"max_delta": 0.01}},
            {"max_abs_failures": 10},
            {"steps": {"max_avg": 8}},
        ],
        "on_missing_baseline": "block",
    }))
    return path


def test_nothing_means_no_policy() -> None:
    assert build_policy(None, NONE) is None
    assert build_policy(None, {}) is None
    assert build_policy("", None) is None
    assert build_policy("  ", {"min_avg_score": ""}) is None


def test_file_without_flags(policy_file: Path) -> None:
    pol = build_policy(str(policy_file), NONE)
    assert pol is not None
    assert len(pol.rules) == 6
    assert pol.identity() == {"name": "team-gate.json", "sha256": pol.sha256, "overridden": False}


def test_each_flag_replaces_every_rule_of_its_dimension(policy_file: Path) -> None:
    pol = build_policy(policy_file, {**NONE, "max_cost_delta_pct": 15})
    assert pol is not None
    assert pol.rules == (
        Rule("latency", "block", {"max_avg_ms": 3000}),
        Rule("min_avg_score", "warn", 0.6),
        Rule("max_abs_failures", "block", 10),
        Rule("steps", "block", {"max_avg": 8}),
        Rule("cost", "block", {"max_delta_pct": 15}),
    )
    assert pol.identity() == {"name": "team-gate.json", "sha256": pol.sha256, "overridden": True}
    assert pol.on_missing_baseline == "block"
    assert pol.server_gate() == {"max_regressions": 0}


def test_all_four_flags(policy_file: Path) -> None:
    pol = build_policy(policy_file, {"max_cost_delta_pct": 10, "max_latency_delta_pct": 25.5,
                                     "min_avg_score": 0.8, "max_abs_failures": 0})
    assert pol is not None
    assert pol.rules == (
        Rule("steps", "block", {"max_avg": 8}),
        Rule("cost", "block", {"max_delta_pct": 10}),
        Rule("latency", "block", {"max_delta_pct": 25.5}),
        Rule("min_avg_score", "block", 0.8),
        Rule("max_abs_failures", "block", 0),
    )


def test_flags_without_a_file() -> None:
    pol = build_policy(None, {**NONE, "max_abs_failures": 2, "min_avg_score": 0.7})
    assert pol is not None
    assert pol.rules == (Rule("min_avg_score", "block", 0.7), Rule("max_abs_failures", "block", 2))
    assert pol.on_missing_baseline == "warn"
    assert pol.server_gate() is None
    assert pol.gates_block() is None
    assert pol.identity() == {"name": None, "sha256": None, "overridden": True}


def test_flag_values_may_be_text() -> None:
    pol = build_policy(None, {"max_cost_delta_pct": " -50 ", "max_latency_delta_pct": "12.5",
                              "min_avg_score": "0.75", "max_abs_failures": "3"})
    assert pol is not None
    assert [r.threshold for r in pol.rules] == [
        {"max_delta_pct": -50}, {"max_delta_pct": 12.5}, 0.75, 3,
    ]
    assert isinstance(pol.rules[3].threshold, int)


@pytest.mark.parametrize(("overrides", "pattern"), [
    ({"min_avg_score": 1.5}, r"^invalid policy override: --min-avg-score: expected a number "
                             r"between 0 and 1, got the number 1.5 \(above 1\)$"),
    ({"min_avg_score": "high"}, r"^invalid policy override: --min-avg-score: expected a number, "
                                r"got the string 'high'$"),
    ({"max_abs_failures": -1}, r"^invalid policy override: --max-abs-failures: expected a number "
                               r">= 0"),
    ({"max_cost_delta_pct": float("nan")}, r"--max-cost-delta-pct: expected a number, got a "
                                           r"non-finite number"),
    ({"max_latency_delta_pct": True}, r"--max-latency-delta-pct: expected a number, got a "
                                      r"boolean"),
    ({"max_latency_delta_pct": "inf"}, r"--max-latency-delta-pct: .*non-finite"),
])
def test_invalid_flag_values(overrides: dict[str, object], pattern: str) -> None:
    with pytest.raises(PolicyError, match=pattern):
        build_policy(None, overrides)


def test_unknown_override_key_is_a_programming_error() -> None:
    with pytest.raises(ValueError, match="unknown policy override 'max_steps'"):
        GatePolicy().with_overrides({"max_steps": 1})


def test_with_overrides_nothing_set_is_identity() -> None:
    pol = GatePolicy.from_dict({"rules": [{"max_regressions": 0}]})
    assert pol.with_overrides(NONE) is pol
    assert pol.identity() is None


def test_bad_file_still_errors_with_flags(tmp_path: Path) -> None:
    with pytest.raises(PolicyError, match="file not found"):
        build_policy(tmp_path / "missing.yml", {"min_avg_score": 0.5})


# --- merge_server_gate -------------------------------------------------------------------------


def test_merge_server_gate() -> None:
    pol = GatePolicy.from_dict({"gate": {"max_regressions": 2, "min_pass_rate": 0.5,
                                         "cost": {"max_avg_usd": 0.01}}})
    assert merge_server_gate(pol, None, None) == {
        "max_regressions": 2, "min_pass_rate": 0.5, "cost": {"max_avg_usd": 0.01},
    }
    assert merge_server_gate(pol, 0, 0.9) == {
        "max_regressions": 0, "min_pass_rate": 0.9, "cost": {"max_avg_usd": 0.01},
    }
    assert merge_server_gate(pol, 0, None)["min_pass_rate"] == 0.5  # type: ignore[index]
    assert pol.server_gate() == {"max_regressions": 2, "min_pass_rate": 0.5,
                                 "cost": {"max_avg_usd": 0.01}}


def test_merge_server_gate_empty_is_none() -> None:
    assert merge_server_gate(None, None, None) is None
    assert merge_server_gate(GatePolicy.from_dict({"gate": {"cost": None}}), None, None) is None
    assert merge_server_gate(None, 0, None) == {"max_regressions": 0}
    assert merge_server_gate(None, None, 0.0) == {"min_pass_rate": 0.0}
