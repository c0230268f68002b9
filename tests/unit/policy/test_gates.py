"""The policy ``gates`` block: validation (9.10), normalisation (4.3), drift results (9.6)."""

from __future__ import annotations

import re

import pytest

from neens_action.api.answers import Run
from neens_action.errors import PolicyError
from neens_action.policy import GatePolicy, evaluate


def gates_error(block: object) -> str:
    with pytest.raises(PolicyError) as info:
        GatePolicy.from_dict({"gates": block}, source="pol.json")
    message = str(info.value)
    assert message.startswith("gate policy pol.json: ")
    return message


def test_normalisation_fills_defaults_and_drops_names() -> None:
    policy = GatePolicy.from_dict({"gates": {"enforce": [
        "gate-refund",
        {"id": "gate-notes", "name": "FM: leaks notes", "min_pass_rate": 0.8},
        {"id": "gate:x.y_z", "guardrails": [{"kpi": "refund_rate", "tolerance": 0.02},
                                             {"kpi": "csat", "tolerance": 1, "severity": "warn"}]},
    ]}})
    assert policy.gates_block() == {
        "mode": "exact",
        "severity": "block",
        "enforce": [
            {"id": "gate-refund"},
            {"id": "gate-notes", "min_pass_rate": 0.8},
            {"id": "gate:x.y_z", "guardrails": [
                {"kpi": "refund_rate", "tolerance": 0.02, "severity": "block"},
                {"kpi": "csat", "tolerance": 1, "severity": "warn"},
            ]},
        ],
    }


def test_include_mode_may_be_empty() -> None:
    policy = GatePolicy.from_dict({"gates": {"mode": "include", "severity": "warn", "enforce": []}})
    assert policy.gates_block() == {"mode": "include", "severity": "warn", "enforce": []}


def test_gates_block_is_a_copy() -> None:
    policy = GatePolicy.from_dict({"gates": {"enforce": ["g1"]}})
    block = policy.gates_block()
    assert block is not None
    block["enforce"].append({"id": "g2"})
    assert policy.gates_block() == {"mode": "exact", "severity": "block", "enforce": [{"id": "g1"}]}


GATES_MALFORMED: list[tuple[object, str]] = [
    (["g1"], r": gates: expected an object with mode, severity and enforce, got a list"),
    ({"enforce": ["g1"], "extra": 1}, r": gates.extra: unknown key \(expected one of 'mode', "
                                      r"'severity', 'enforce'\)"),
    ({"mode": "all", "enforce": ["g1"]}, r": gates.mode: expected one of 'exact', 'include', "
                                         r"got the string 'all'"),
    ({"severity": "fatal", "enforce": ["g1"]}, r": gates.severity: expected one of 'block', "
                                               r"'warn'"),
    ({"mode": "exact"}, r": gates.enforce: missing \(expected a list"),
    ({"enforce": "g1"}, r": gates.enforce: expected a list of gate ids or objects, got the "
                        r"string 'g1'"),
    ({"enforce": [f"g{i}" for i in range(51)]}, r": gates.enforce: lists 51 gates \(at most 50"),
    ({"enforce": []}, r": gates.enforce: is empty in exact mode"),
    ({"enforce": [3]}, r": gates.enforce\[0\]: expected a gate id \(string\) or an object, got "
                       r"the number 3"),
    ({"enforce": [{"id": "g1", "threshold": 0.5}]},
     r": gates.enforce\[0\].threshold: unknown key \(expected one of 'id', 'name', "
     r"'min_pass_rate', 'guardrails'\)"),
    ({"enforce": [{"name": "x"}]}, r": gates.enforce\[0\]: missing 'id'"),
    ({"enforce": ["g1", {"id": ""}]}, r": gates.enforce\[1\].id: an empty string is not a valid "
                                      r"gate id \(expected 1-128 letters"),
    ({"enforce": ["has space"]}, r": gates.enforce\[0\]: the string 'has space' is not a valid "
                                 r"gate id"),
    ({"enforce": ["g" * 129]}, r": gates.enforce\[0\]: .* is not a valid gate id"),
    ({"enforce": [{"id": 12}]}, r": gates.enforce\[0\].id: expected a gate id \(string\), got "
                                r"the number 12"),
    ({"enforce": ["Active"]}, r": gates.enforce\[0\]: 'active' is not a gate id \(use mode: "
                              r"include"),
    ({"enforce": ["g1", {"id": "g1"}]}, r": gates.enforce\[1\].id: duplicate gate id 'g1'"),
    ({"enforce": [{"id": "g1", "min_pass_rate": 1.5}]},
     r": gates.enforce\[0\].min_pass_rate: expected a number between 0 and 1, got the number "
     r"1.5 \(above 1\)"),
    ({"enforce": [{"id": "g1", "min_pass_rate": True}]},
     r"gates.enforce\[0\].min_pass_rate: .*got a boolean \(true\)"),
    ({"enforce": [{"id": "g1", "min_pass_rate": float("nan")}]}, r"min_pass_rate: .*non-finite"),
    ({"enforce": [{"id": "g1", "guardrails": {"kpi": "x"}}]},
     r": gates.enforce\[0\].guardrails: expected a list of guardrail objects, got an object"),
    ({"enforce": [{"id": "g1", "guardrails": [{"kpi": f"k{i}", "tolerance": 1}
                                              for i in range(11)]}]},
     r": gates.enforce\[0\].guardrails: lists 11 guardrails \(at most 10"),
    ({"enforce": [{"id": "g1", "guardrails": ["csat"]}]},
     r": gates.enforce\[0\].guardrails\[0\]: expected a guardrail object"),
    ({"enforce": [{"id": "g1", "guardrails": [{"kpi": "csat", "tolerance": 1, "max": 2}]}]},
     r": gates.enforce\[0\].guardrails\[0\].max: unknown key \(expected one of 'kpi', "
     r"'tolerance', 'severity'\)"),
    ({"enforce": [{"id": "g1", "guardrails": [{"tolerance": 1}]}]},
     r": gates.enforce\[0\].guardrails\[0\]: missing 'kpi'"),
    ({"enforce": [{"id": "g1", "guardrails": [{"kpi": "bad kpi!", "tolerance": 1}]}]},
     r": gates.enforce\[0\].guardrails\[0\].kpi: the string 'bad kpi!' is not a valid KPI id"),
    ({"enforce": [{"id": "g1", "guardrails": [{"kpi": "csat", "tolerance": 1},
                                              {"kpi": "csat", "tolerance": 2}]}]},
     r": gates.enforce\[0\].guardrails\[1\].kpi: duplicate KPI 'csat'"),
    ({"enforce": [{"id": "g1", "guardrails": [{"kpi": "csat"}]}]},
     r": gates.enforce\[0\].guardrails\[0\]: missing 'tolerance'"),
    ({"enforce": [{"id": "g1", "guardrails": [{"kpi": "csat", "tolerance": -1}]}]},
     r"guardrails\[0\].tolerance: expected a number between 0 and 1 000 000, got the number -1"),
    ({"enforce": [{"id": "g1", "guardrails": [{"kpi": "csat", "tolerance": 1_000_001}]}]},
     r"guardrails\[0\].tolerance: .*\(above 1000000\)"),
    ({"enforce": [{"id": "g1", "guardrails": [{"kpi": "csat", "tolerance": "1"}]}]},
     r"guardrails\[0\].tolerance: .*got the string '1'"),
    ({"enforce": [{"id": "g1", "guardrails": [{"kpi": "csat", "tolerance": float("inf")}]}]},
     r"guardrails\[0\].tolerance: .*non-finite"),
    ({"enforce": [{"id": "g1", "guardrails": [{"kpi": "csat", "tolerance": 1,
                                               "severity": "info"}]}]},
     r"guardrails\[0\].severity: expected one of 'block', 'warn', got the string 'info'"),
]


@pytest.mark.parametrize(("block", "pattern"), GATES_MALFORMED)
def test_malformed_gates_block(block: object, pattern: str) -> None:
    message = gates_error(block)
    assert re.search(pattern, message), message


def test_fifty_gates_and_ten_guardrails_are_allowed() -> None:
    rails = [{"kpi": f"k{i}", "tolerance": 1_000_000} for i in range(10)]
    enforce = [{"id": f"g{i}", "guardrails": rails} for i in range(50)]
    policy = GatePolicy.from_dict({"gates": {"enforce": enforce}})
    block = policy.gates_block()
    assert block is not None
    assert len(block["enforce"]) == 50


# --- drift results ---------------------------------------------------------------------------

DRIFT = [
    {"gateId": "gate-a", "kind": "missing", "message": "gate-a is listed but absent in Neens"},
    {"gateId": "gate-b", "kind": "paused", "message": ""},
    {"kind": "unlisted_active"},
    "junk",
]


def test_drift_results_block_severity() -> None:
    policy = GatePolicy.from_dict({"gates": {"enforce": ["gate-a"]},
                                   "rules": [{"max_abs_failures": 5}]})
    run = {"aggregate": {"failed": 0}, "gatesPolicy": {"mode": "exact"}, "gateDrift": DRIFT}
    result = evaluate(policy, run=Run.decode(run), comparison=None, metrics=None)
    assert [r.dimension for r in result.results] == [
        "abs_failures", "gate_drift:gate-a", "gate_drift:gate-b", "gate_drift:?",
    ]
    drift = result.results[1:]
    assert all(r.severity == "block" and r.status == "fail" for r in drift)
    assert drift[0].observed == "missing" and drift[0].threshold is None
    assert drift[0].reason == "gate-a is listed but absent in Neens"
    assert drift[1].reason == "gate gate-b differs between the repo and Neens (paused)"
    assert drift[2].reason == "gate ? differs between the repo and Neens (unlisted_active)"
    assert result.blocked and not result.warned
    assert result.results[1].to_ci_rule() == {
        "rule": "gate_drift:gate-a", "observed": "missing", "threshold": None,
        "severity": "block", "outcome": "fail", "message": "gate-a is listed but absent in Neens",
    }


def test_drift_results_warn_severity() -> None:
    policy = GatePolicy.from_dict({"gates": {"severity": "warn", "enforce": ["gate-a"]}})
    run = {"gatesPolicy": {}, "gateDrift": DRIFT[:1]}
    result = evaluate(policy, run=Run.decode(run), comparison=None, metrics=None)
    assert [(r.status, r.severity) for r in result.results] == [("warn", "warn")]
    assert result.warned and not result.blocked


def test_no_drift_results_without_acknowledgement_or_block() -> None:
    with_block = GatePolicy.from_dict({"gates": {"enforce": ["gate-a"]}})
    without = GatePolicy.from_dict({})
    not_echoed = {"gateDrift": DRIFT}
    assert evaluate(with_block, run=Run.decode(not_echoed)).results == []
    echoed = {"gatesPolicy": None, "gateDrift": DRIFT}
    assert evaluate(without, run=Run.decode(echoed), comparison=None, metrics=None).results == []
    no_drift = {"gatesPolicy": {}, "gateDrift": []}
    assert evaluate(with_block, run=Run.decode(no_drift)).results == []
