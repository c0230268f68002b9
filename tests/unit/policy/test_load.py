"""Loading and validating gate-as-code policy files (spec neens-api.md 9.1, 9.2, 9.10)."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from neens_action.errors import EXIT_ERROR, PolicyError, UsageError
from neens_action.policy import GatePolicy, GatePolicyError, Rule

EXAMPLE = Path(__file__).resolve().parents[3] / "examples" / "neens-gate.example.json"


def write(tmp_path: Path, name: str, content: str | bytes) -> Path:
    path = tmp_path / name
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content, encoding="utf-8")
    return path


def load_error(tmp_path: Path, doc: object, name: str = "pol.json") -> str:
    path = write(tmp_path, name, json.dumps(doc))
    with pytest.raises(PolicyError) as info:
        GatePolicy.from_file(path)
    message = str(info.value)
    assert "\n" not in message
    assert message.startswith(f"gate policy {path}: ")
    return message


# --- reading -------------------------------------------------------------------------------


def test_example_file_loads_with_identity() -> None:
    policy = GatePolicy.from_file(EXAMPLE)
    assert policy.name == "neens-gate.example.json"
    assert policy.sha256 == hashlib.sha256(EXAMPLE.read_bytes()).hexdigest()
    assert policy.identity() == {
        "name": "neens-gate.example.json",
        "sha256": policy.sha256,
        "overridden": False,
    }
    assert policy.server_gate() == {"max_regressions": 0, "min_pass_rate": 0.9}
    assert [r.label for r in policy.rules] == [
        "cost", "latency", "steps", "abs_failures", "regressions", "pass_rate", "avg_score",
        "metric[correctness]", "metric[toxicity_safety]",
    ]
    assert policy.on_missing_baseline == "warn"


def test_sha256_is_of_the_raw_bytes(tmp_path: Path) -> None:
    raw = b'\xef\xbb\xbf{"rules": [ {"max_regressions": 0} ]}\r\n'  # BOM + CRLF kept in hash
    path = write(tmp_path, "bom.json", raw)
    policy = GatePolicy.from_file(str(path))
    assert policy.sha256 == hashlib.sha256(raw).hexdigest()
    assert policy.rules == (Rule("max_regressions", "block", 0),)


def test_yaml_by_extension(tmp_path: Path) -> None:
    text = (
        "gate:\n  max_regressions: 1\n  cost: {max_avg_usd: 0.004, max_delta_pct: -50}\n"
        "rules:\n  - latency: {max_avg_ms: 2000}\n    severity: warn\n"
        "  - metric: correctness\n    min_avg: 0.7\non_missing_baseline: block\n"
    )
    for name in ("pol.yml", "pol.YAML"):
        policy = GatePolicy.from_file(write(tmp_path, name, text))
        assert policy.server_gate() == {
            "max_regressions": 1, "cost": {"max_avg_usd": 0.004, "max_delta_pct": -50},
        }
        assert policy.rules == (
            Rule("latency", "warn", {"max_avg_ms": 2000}),
            Rule("metric", "block", {"metric": "correctness", "min_avg": 0.7}),
        )
        assert policy.on_missing_baseline == "block"


def test_json_name_falls_back_to_yaml_mapping(tmp_path: Path) -> None:
    policy = GatePolicy.from_file(write(tmp_path, "policy.txt", "rules:\n  - min_pass_rate: 0.5\n"))
    assert policy.rules == (Rule("min_pass_rate", "block", 0.5),)


def test_invalid_json_reports_the_json_error(tmp_path: Path) -> None:
    path = write(tmp_path, "pol.json", '{"rules": [ {"max_regressions": 0} ')
    with pytest.raises(PolicyError, match=r"not valid JSON \(line 1 column \d+: .*\), nor a YAML"):
        GatePolicy.from_file(path)
    path = write(tmp_path, "words.json", "just some words")
    with pytest.raises(PolicyError, match=r"words.json: not valid JSON \(line 1 column 1"):
        GatePolicy.from_file(path)


def test_invalid_yaml_names_line_and_column(tmp_path: Path) -> None:
    path = write(tmp_path, "pol.yaml", "rules:\n  - cost: {max_avg_usd: 1\n  - x: [\n")
    with pytest.raises(PolicyError, match=r"pol.yaml: not valid YAML \(line \d+ column \d+: "):
        GatePolicy.from_file(path)


def test_yaml_without_pyyaml(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from neens_action.settings import policy_read as load

    monkeypatch.setattr(load, "_import_yaml", lambda: None)
    path = write(tmp_path, "pol.yml", "rules: []\n")
    with pytest.raises(PolicyError, match=r"pol.yml: a YAML policy needs PyYAML"):
        GatePolicy.from_file(path)
    path = write(tmp_path, "pol.json", "rules: []\n")
    with pytest.raises(PolicyError, match=r"pol.json: not valid JSON \(line 1 column 1: [^)]*\)$"):
        GatePolicy.from_file(path)


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(PolicyError, match=r"gate policy .*nope.json: file not found"):
        GatePolicy.from_file(tmp_path / "nope.json")


def test_directory(tmp_path: Path) -> None:
    with pytest.raises(PolicyError, match=r": is a directory, not a file"):
        GatePolicy.from_file(tmp_path)


def test_unreadable_file_os_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = write(tmp_path, "pol.json", "{}")

    def deny(self: Path) -> bytes:
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(Path, "read_bytes", deny)
    with pytest.raises(PolicyError, match=r"pol.json: cannot read the file \(permission denied\)"):
        GatePolicy.from_file(path)

    def broken(self: Path) -> bytes:
        raise OSError(5, "Input/output error")

    monkeypatch.setattr(Path, "read_bytes", broken)
    with pytest.raises(PolicyError, match=r"cannot read the file \(Input/output error\)"):
        GatePolicy.from_file(path)


def test_not_utf8(tmp_path: Path) -> None:
    path = write(tmp_path, "latin.json", '{"rules": [], "x": "caf\xe9"}'.encode("latin-1"))
    pattern = r"latin.json: not UTF-8 text \(invalid byte at offset 23\); save the file as UTF-8"
    with pytest.raises(PolicyError, match=pattern):
        GatePolicy.from_file(path)


def test_empty_file(tmp_path: Path) -> None:
    with pytest.raises(PolicyError, match=r"e.json: the file is empty"):
        GatePolicy.from_file(write(tmp_path, "e.json", "  \n"))


def test_policy_error_is_a_usage_error_exit_2() -> None:
    assert issubclass(PolicyError, UsageError)
    assert PolicyError("x").exit_code == EXIT_ERROR
    assert GatePolicyError is PolicyError


# --- document validation (every case of 9.10 plus type checks) ------------------------------

MALFORMED: list[tuple[object, str]] = [
    # top level
    ([], r"expected an object at the top level, got a list"),
    ("rules", r"expected an object at the top level, got the string 'rules'"),
    ({"rulez": []}, r": rulez: unknown key \(expected one of 'gate', 'gates', 'rules'"),
    # gate
    ({"gate": 3}, r": gate: expected an object with max_regressions, min_pass_rate or cost, got "
                  r"the number 3"),
    ({"gate": {"max_regresions": 0}}, r": gate.max_regresions: unknown key \(expected one of "
                                      r"'max_regressions', 'min_pass_rate', 'cost'\)"),
    ({"gate": {"max_regressions": "0"}}, r": gate.max_regressions: expected a whole number >= 0, "
                                         r"got the string '0'"),
    ({"gate": {"max_regressions": 1.5}}, r"gate.max_regressions: expected a whole number >= 0"),
    ({"gate": {"max_regressions": -1}}, r"gate.max_regressions: .* \(below 0\)"),
    ({"gate": {"max_regressions": True}}, r"gate.max_regressions: .*got a boolean \(true\)"),
    ({"gate": {"min_pass_rate": 1.2}}, r"gate.min_pass_rate: expected a number between 0 and 1, "
                                       r"got the number 1.2 \(above 1\)"),
    ({"gate": {"cost": [1]}}, r": gate.cost: expected an object with max_avg_usd, max_delta, "
                              r"max_delta_pct, got a list"),
    ({"gate": {"cost": {"max_avg": 1}}}, r": gate.cost.max_avg: unknown key \(expected one of "
                                         r"'max_avg_usd', 'max_delta', 'max_delta_pct'\)"),
    ({"gate": {"cost": {"max_avg_usd": "cheap"}}}, r"gate.cost.max_avg_usd: expected a number, "
                                                   r"got the string 'cheap'"),
    # on_missing_baseline
    ({"on_missing_baseline": "ignore"}, r": on_missing_baseline: expected one of 'block', "
                                        r"'warn', 'pass', got the string 'ignore'"),
    ({"on_missing_baseline": False}, r"on_missing_baseline: .*got a boolean \(false\)"),
    # rules
    ({"rules": {"cost": {}}}, r": rules: expected a list of rule objects, got an object"),
    ({"rules": ["max_regressions"]}, r": rules\[0\]: expected a rule object"),
    ({"rules": [{"max_regressions": 0}, {"severity": "warn"}]},
     r": rules\[1\]: no dimension key \(expected one of cost, latency, steps"),
    ({"rules": [{"costs": {"max_avg_usd": 1}}]},
     r": rules\[0\].costs: unknown dimension \(expected one of 'cost', 'latency'"),
    ({"rules": [{"cost": {"max_avg_usd": 1}, "latency": {"max_avg_ms": 1}}]},
     r": rules\[0\]: has 2 dimensions \(cost, latency\); put each in its own rule"),
    ({"rules": [{"max_regressions": 0, "note": "x"}]},
     r": rules\[0\].note: unknown key beside dimension 'max_regressions' \(allowed: severity\)"),
    ({"rules": [{"max_regressions": 0, "min_avg": 0.5}]},
     r": rules\[0\].min_avg: unknown key beside dimension 'max_regressions'"),
    ({"rules": [{"max_regressions": 0, "severity": "error"}]},
     r": rules\[0\].severity: expected one of 'block', 'warn', got the string 'error'"),
    ({"rules": [{"max_regressions": 0, "severity": None}]}, r"rules\[0\].severity: .*got null"),
    ({"rules": [{"cost": 0.05}]},
     r": rules\[0\].cost: expected an object with max_avg_usd, max_delta, max_delta_pct, got the "
     r"number 0.05"),
    ({"rules": [{"latency": {"max_avg_usd": 1}}]},
     r": rules\[0\].latency.max_avg_usd: unknown key \(expected one of 'max_avg_ms', "
     r"'max_delta_ms', 'max_delta_pct'\)"),
    ({"rules": [{"steps": {"max_avg": "8"}}]},
     r": rules\[0\].steps.max_avg: expected a number, got the string '8'"),
    ({"rules": [{"cost": {"max_delta_pct": True}}]},
     r": rules\[0\].cost.max_delta_pct: expected a number, got a boolean \(true\)"),
    ({"rules": [{"cost": {"max_delta_pct": None}}]},
     r": rules\[0\].cost.max_delta_pct: expected a number, got null"),
    ({"rules": [{"max_abs_failures": "3"}]},
     r": rules\[0\].max_abs_failures: expected a number >= 0, got the string '3'"),
    ({"rules": [{"max_abs_failures": -2}]}, r"rules\[0\].max_abs_failures: .*\(below 0\)"),
    ({"rules": [{"max_regressions": False}]},
     r": rules\[0\].max_regressions: expected a number >= 0, got a boolean \(false\)"),
    ({"rules": [{"min_pass_rate": 90}]},
     r": rules\[0\].min_pass_rate: expected a number between 0 and 1, got the number 90"),
    ({"rules": [{"min_avg_score": [0.8]}]},
     r": rules\[0\].min_avg_score: expected a number between 0 and 1, got a list"),
    ({"rules": [{"metric": "", "min_avg": 0.5}]}, r": rules\[0\].metric: the metric name is empty"),
    ({"rules": [{"metric": "  ", "min_avg": 0.5}]}, r"rules\[0\].metric: the metric name is empty"),
    ({"rules": [{"metric": 7, "min_avg": 0.5}]},
     r": rules\[0\].metric: expected a metric key \(string\), got the number 7"),
    ({"rules": [{"metric": "faithfulness"}]},
     r": rules\[0\]: metric 'faithfulness' has neither min_avg nor max_avg"),
    ({"rules": [{"metric": "f", "min_avg": "high"}]},
     r": rules\[0\].min_avg: expected a number between 0 and 1, got the string 'high'"),
    ({"rules": [{"metric": "f", "max_avg": 2}]}, r"rules\[0\].max_avg: .*\(above 1\)"),
    ({"rules": [{"metric": "f", "min_avg": 0.9, "max_avg": 0.2}]},
     r": rules\[0\]: min_avg 0.9 is above max_avg 0.2"),
    ({"rules": [{"metric": "f", "min_avg": 0.5, "note": 1}]},
     r"rules\[0\].note: unknown key beside dimension 'metric' \(allowed: severity, min_avg, "
     r"max_avg\)"),
    ({"rules": [{"min_avg_score": float("nan")}]}, r"rules\[0\].min_avg_score: .*non-finite"),
    ({"rules": [{"cost": {"max_avg_usd": float("inf")}}]}, r"max_avg_usd: .*non-finite"),
]


@pytest.mark.parametrize(("doc", "pattern"), MALFORMED)
def test_malformed_document_message(tmp_path: Path, doc: object, pattern: str) -> None:
    message = load_error(tmp_path, doc)
    assert __import__("re").search(pattern, message), message


def test_yaml_non_string_key(tmp_path: Path) -> None:
    path = write(tmp_path, "p.yaml", "rules:\n  - 1: 2\n")
    with pytest.raises(PolicyError, match=r"rules\[0\]: keys must be strings, got the number 1"):
        GatePolicy.from_file(path)


def test_yaml_string_number_is_rejected_with_the_key_path(tmp_path: Path) -> None:
    path = write(tmp_path, "p.yaml", "rules:\n  - cost: {max_avg_usd: 5e-2}\n")  # YAML 1.1: str
    with pytest.raises(PolicyError, match=r"rules\[0\].cost.max_avg_usd: expected a number, got "
                                          r"the string '5e-2'"):
        GatePolicy.from_file(path)


def test_from_dict_names_its_source() -> None:
    with pytest.raises(PolicyError, match=r"^gate policy <dict>: rules\[0\]: no dimension key"):
        GatePolicy.from_dict({"rules": [{}]})
    with pytest.raises(PolicyError, match=r"^gate policy team.json: on_missing_baseline"):
        GatePolicy.from_dict({"on_missing_baseline": "x"}, source="team.json")


def test_long_values_are_truncated_in_messages() -> None:
    with pytest.raises(PolicyError) as info:
        GatePolicy.from_dict({"rules": [{"min_avg_score": "x" * 500}]})
    assert len(str(info.value)) < 200
    assert "…" in str(info.value)


# --- valid shapes ------------------------------------------------------------------------------


def test_absent_and_null_blocks_count_as_absent() -> None:
    for doc in ({}, {"gate": {}}, {"gate": None, "gates": None, "rules": None},
                {"gate": {"cost": None}}, {"gate": {"cost": {}}}):
        policy = GatePolicy.from_dict(doc)
        assert policy.server_gate() is None
        assert policy.gates_block() is None
        assert policy.rules == ()
        assert policy.on_missing_baseline == "warn"
        assert policy.identity() is None


def test_server_gate_drops_null_and_empty_cost() -> None:
    for cost in (None, {}, {"max_avg_usd": None}):
        policy = GatePolicy.from_dict({"gate": {"max_regressions": 0, "cost": cost}})
        assert policy.server_gate() == {"max_regressions": 0}
        assert "cost" not in json.dumps(policy.server_gate())
    policy = GatePolicy.from_dict({"gate": {"cost": {"max_delta_pct": -50}}})
    assert policy.server_gate() == {"cost": {"max_delta_pct": -50}}


def test_server_gate_is_a_copy() -> None:
    policy = GatePolicy.from_dict({"gate": {"cost": {"max_avg_usd": 1}}})
    gate = policy.server_gate()
    assert gate is not None
    gate["cost"]["max_avg_usd"] = 99
    assert policy.server_gate() == {"cost": {"max_avg_usd": 1}}


def test_gate_whole_float_regressions_become_int() -> None:
    policy = GatePolicy.from_dict({"gate": {"max_regressions": 2.0}})
    gate = policy.server_gate()
    assert gate == {"max_regressions": 2}
    assert isinstance(gate["max_regressions"], int)


def test_nested_sub_keys_kept_in_evaluation_order() -> None:
    policy = GatePolicy.from_dict(
        {"rules": [{"cost": {"max_delta_pct": 5, "max_avg_usd": 1, "max_delta": 0.1}}]}
    )
    assert list(policy.rules[0].threshold) == ["max_avg_usd", "max_delta", "max_delta_pct"]


def test_empty_nested_rule_is_valid() -> None:
    policy = GatePolicy.from_dict({"rules": [{"steps": {}, "severity": "warn"}]})
    assert policy.rules == (Rule("steps", "warn", {}),)


def test_every_dimension_parses_with_default_block_severity() -> None:
    doc = {"rules": [
        {"cost": {"max_avg_usd": 0.1}}, {"latency": {"max_delta_ms": 50}},
        {"steps": {"max_delta": 1}}, {"max_abs_failures": 2}, {"max_regressions": 0},
        {"min_pass_rate": 0.5}, {"min_avg_score": 0.6},
        {"metric": "m", "max_avg": 0.3, "severity": "warn"},
    ]}
    policy = GatePolicy.from_dict(doc)
    assert [(r.dimension, r.severity) for r in policy.rules] == [
        ("cost", "block"), ("latency", "block"), ("steps", "block"),
        ("max_abs_failures", "block"), ("max_regressions", "block"), ("min_pass_rate", "block"),
        ("min_avg_score", "block"), ("metric", "warn"),
    ]
    assert GatePolicy.from_dict(policy.to_dict()) == policy


def test_from_dict_accepts_any_mapping() -> None:
    from types import MappingProxyType

    policy = GatePolicy.from_dict(MappingProxyType({"rules": [{"max_regressions": 1}]}))
    assert policy.rules == (Rule("max_regressions", "block", 1),)
