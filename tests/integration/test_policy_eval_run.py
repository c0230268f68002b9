"""Gate-as-code policies through ``neens eval run`` as a process: the real sandbox, the
example agent (OpenTelemetry SDK, protobuf) as real processes (spec 9, 8.2, 4.9).

The sandbox's seeded production window (``prod:7d``, the default baseline outside CI)
matches 2 of the 6 golden items, so baseline-relative rules have a cohort; ``prod:1d``
matches none (a missing baseline). ``NEENS_EVAL_MODEL=llama-3-local`` makes the agent's
sessions unpriced.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.helpers import AGENT, PY, Sandbox, run_cli
from tests.integration.policy_support import (
    assert_ci_result,
    neens_json,
    results,
    statuses,
    stored_run,
    write_policy,
)

RUN = ["eval", "run", "--create", "--dataset", "ds_refunds", "--concurrency", "6",
       "--poll-interval", "0.5", "--poll-timeout", "120", "--timeout", "60"]
AGENT_CMD = ["--", PY, str(AGENT)]
NO_BASELINE = ["--baseline", "prod:1d"]


def eval_run(sb: Sandbox, label: str, *flags: str, **env: str) -> tuple[Any, dict[str, Any]]:
    return neens_json(sb, [*RUN, "--version-label", label, *flags, *AGENT_CMD], **env)


def comparison(sb: Sandbox, run_id: str) -> dict[str, Any]:
    resp = sb.get(f"/preprod-evals/{run_id}/comparison")
    assert resp.status_code == 200, resp.text
    return resp.json()


def test_absolute_budgets_pass_and_warn(sandbox: Sandbox, tmp_path: Path) -> None:
    policy = write_policy(tmp_path, {"rules": [
        {"cost": {"max_avg_usd": 1}},
        {"cost": {"max_avg_usd": 1e-9}, "severity": "warn"},
        {"latency": {"max_avg_ms": 60000}},
        {"latency": {"max_avg_ms": 0.0001}, "severity": "warn"},
        {"steps": {"max_avg": 10}},
        {"steps": {"max_avg": 1}, "severity": "warn"},
        {"metric": "correctness", "min_avg": 0.9},
        {"metric": "toxicity_safety", "min_avg": 0.9, "severity": "warn"},
        {"max_abs_failures": 0}, {"min_pass_rate": 1.0}, {"min_avg_score": 0.9},
    ]})
    proc, doc = eval_run(sandbox, "abs-1", "--gate-policy", str(policy))
    assert (proc.returncode, doc["verdict"]) == (0, "warned"), proc.stderr
    assert statuses(doc) == [
        ("cost", "pass"), ("cost", "warn"), ("latency", "pass"), ("latency", "warn"),
        ("steps", "pass"), ("steps", "warn"), ("metric[correctness]", "pass"),
        ("metric[toxicity_safety]", "pass"), ("abs_failures", "pass"), ("pass_rate", "pass"),
        ("avg_score", "pass"),
    ]
    traits = comparison(sandbox, doc["runId"])["traits"]["candidate"]
    observed = [r["observed"] for r in results(doc)]
    assert observed[:6] == [traits["avg_cost"]] * 2 + [traits["avg_latency"]] * 2 + \
        [traits["avg_steps"]] * 2
    assert traits["avg_cost"] > 0 and traits["avg_steps"] > 1
    assert_ci_result(sandbox, proc, doc, verdict="warned", policy_file=policy)
    assert "policy:      0 blocking failure(s), 3 warning(s)" in proc.stderr


@pytest.mark.parametrize(("rule", "label", "env"), [
    ({"cost": {"max_avg_usd": 1e-9}}, "cost", {}),
    ({"latency": {"max_avg_ms": 0.0001}}, "latency", {}),
    ({"steps": {"max_avg": 1}}, "steps", {}),
    ({"metric": "correctness", "min_avg": 0.9}, "metric[correctness]", {"AGENT_MODE": "bad"}),
])
def test_each_dimension_blocks(sandbox: Sandbox, tmp_path: Path, rule: dict[str, Any],
                               label: str, env: dict[str, str]) -> None:
    policy = write_policy(tmp_path, {"rules": [rule]})
    proc, doc = eval_run(sandbox, f"block-{label}", "--gate-policy", str(policy), **env)
    assert (proc.returncode, doc["verdict"]) == (1, "blocked"), proc.stderr
    assert doc["gatePassed"] is True  # the server gate passed: the policy alone blocks
    assert statuses(doc) == [(label, "fail")]
    result = results(doc)[0]
    if label == "metric[correctness]":
        metrics = sandbox.get(f"/preprod-evals/{doc['runId']}/metrics").json()["metrics"]
        row = next(m for m in metrics if m["metricKey"] == "correctness")
        assert result["observed"] == row["avgScore"] < 0.9
        assert result["threshold"] == rule
    else:
        key = {"cost": "avg_cost", "latency": "avg_latency", "steps": "avg_steps"}[label]
        assert result["observed"] == comparison(sandbox, doc["runId"])["traits"]["candidate"][key]
    assert_ci_result(sandbox, proc, doc, verdict="blocked", policy_file=policy)


def test_deltas_against_the_production_baseline(sandbox: Sandbox, tmp_path: Path) -> None:
    policy = write_policy(tmp_path, {"rules": [
        {"cost": {"max_delta": 1, "max_delta_pct": 1000}},
        {"latency": {"max_delta_pct": 0}, "severity": "warn"},
        {"steps": {"max_delta": 0}},
    ]}, name="deltas.yml")
    proc, doc = eval_run(sandbox, "delta-1", "--gate-policy", str(policy),
                         AGENT_MODE="slow", AGENT_SLOW_S="1")
    assert (proc.returncode, doc["verdict"]) == (1, "blocked"), proc.stderr
    assert statuses(doc) == [("cost", "pass"), ("cost", "pass"), ("latency", "warn"),
                             ("steps", "fail")]
    comp = comparison(sandbox, doc["runId"])
    assert comp["baseline"]["compared"] is True
    cost, latency, steps = (comp["deltas"][k] for k in ("cost", "latencyMs", "steps"))
    observed = [r["observed"] for r in results(doc)]
    assert observed == [cost["delta"], round(cost["delta"] / cost["before"] * 100, 2),
                        round(latency["delta"] / latency["before"] * 100, 2), steps["delta"]]
    assert observed[2] > 0  # a 1 s agent is slower than the 725 ms production cohort
    assert_ci_result(sandbox, proc, doc, verdict="blocked", policy_file=policy)


def test_unpriced_model_skips_every_cost_rule(sandbox: Sandbox, tmp_path: Path) -> None:
    policy = write_policy(tmp_path, {"rules": [
        {"cost": {"max_avg_usd": 0, "max_delta": 0, "max_delta_pct": 0}},
        {"steps": {"max_avg": 10}},
    ], "on_missing_baseline": "block"})
    proc, doc = eval_run(sandbox, "local-1", "--gate-policy", str(policy),
                         NEENS_EVAL_MODEL="llama-3-local")
    assert (proc.returncode, doc["verdict"]) == (0, "passed"), proc.stderr
    assert statuses(doc) == [("cost", "skipped")] * 3 + [("steps", "pass")]
    for r in results(doc)[:3]:
        assert "unpriced: llama-3-local" in r["reason"] and r["observed"] is None
    assert [r["threshold"] for r in results(doc)[:3]] == [0, 0, 0]
    traits = comparison(sandbox, doc["runId"])["traits"]["candidate"]
    assert traits["avg_cost"] is None and traits["unpricedModels"] == ["llama-3-local"]
    assert_ci_result(sandbox, proc, doc, verdict="passed", policy_file=policy)


@pytest.mark.parametrize(("mode", "code", "verdict", "status"), [
    ("block", 1, "blocked", "fail"),
    ("warn", 0, "warned", "warn"),
    ("pass", 0, "passed", "skipped"),
])
def test_missing_baseline_modes(sandbox: Sandbox, tmp_path: Path, mode: str, code: int,
                                verdict: str, status: str) -> None:
    policy = write_policy(tmp_path, {"rules": [
        {"max_regressions": 0}, {"latency": {"max_avg_ms": 60000, "max_delta_pct": 10}},
    ], "on_missing_baseline": mode})
    proc, doc = eval_run(sandbox, f"nobase-{mode}", "--gate-policy", str(policy), *NO_BASELINE)
    assert (proc.returncode, doc["verdict"]) == (code, verdict), proc.stderr
    assert statuses(doc) == [("regressions", status), ("latency", "pass"), ("latency", status)]
    regressions, _, pct = results(doc)
    assert "matched none of the run's items" in regressions["reason"]
    assert regressions["reason"].endswith(f"on_missing_baseline={mode}")
    assert pct["threshold"] == {"max_avg_ms": 60000, "max_delta_pct": 10}
    assert comparison(sandbox, doc["runId"])["baseline"]["compared"] is False
    assert "regressions: not compared (no baseline)" in proc.stderr
    assert_ci_result(sandbox, proc, doc, verdict=verdict, policy_file=policy)


def test_override_flags_replace_file_rules(sandbox: Sandbox, tmp_path: Path) -> None:
    policy = write_policy(tmp_path, {"rules": [
        {"latency": {"max_avg_ms": 0.0001, "max_delta_pct": 1000}, "severity": "warn"},
        {"min_avg_score": 0.99, "severity": "warn"},
        {"steps": {"max_avg": 10}},
        {"max_abs_failures": 5},
    ]})
    proc, doc = eval_run(sandbox, "override-1", "--gate-policy", str(policy),
                         "--max-latency-delta-pct", "0", "--min-avg-score", "0.5",
                         "--max-abs-failures", "0", "--max-cost-delta-pct", "1000",
                         AGENT_MODE="slow", AGENT_SLOW_S="1")
    assert (proc.returncode, doc["verdict"]) == (1, "blocked"), proc.stderr
    got = [(r["dimension"], r["severity"], r["status"], r["threshold"]) for r in results(doc)]
    assert got == [
        ("steps", "block", "pass", 10),
        ("cost", "block", "pass", 1000),
        ("latency", "block", "fail", 0),
        ("avg_score", "block", "pass", 0.5),
        ("abs_failures", "block", "pass", 0),
    ]
    assert_ci_result(sandbox, proc, doc, verdict="blocked", policy_file=policy,
                     overridden=True)


def test_override_flags_without_a_file(sandbox: Sandbox) -> None:
    proc, doc = eval_run(sandbox, "flags-1", "--min-avg-score", "0.99", AGENT_MODE="bad")
    assert (proc.returncode, doc["verdict"]) == (1, "blocked"), proc.stderr
    assert statuses(doc) == [("avg_score", "fail")]
    assert_ci_result(sandbox, proc, doc, verdict="blocked", overridden=True)


def test_yaml_policy_from_env_with_server_gate_cost(sandbox: Sandbox, tmp_path: Path) -> None:
    clean = write_policy(tmp_path, {"gate": {"max_regressions": 0, "cost": None},
                                    "rules": [{"max_regressions": 0}]}, name="gate.yaml")
    proc, doc = eval_run(sandbox, "env-1", NEENS_GATE_POLICY=str(clean))
    assert (proc.returncode, doc["verdict"]) == (0, "passed"), proc.stderr
    assert stored_run(sandbox, doc["runId"])["gate"] == {"max_regressions": 0}  # no cost: null
    assert statuses(doc) == [("regressions", "pass")]
    assert_ci_result(sandbox, proc, doc, verdict="passed", policy_file=clean)

    budget = write_policy(tmp_path, {"gate": {"cost": {"max_avg_usd": 1e-9}}},
                          name="budget.yml")
    proc, doc = eval_run(sandbox, "env-2", NEENS_GATE_POLICY=str(budget))
    assert (proc.returncode, doc["verdict"]) == (1, "blocked"), proc.stderr
    assert doc["gatePassed"] is False and results(doc) == []
    assert stored_run(sandbox, doc["runId"])["gate"] == {"cost": {"max_avg_usd": 1e-9}}
    assert [r["status"] for r in doc["gate"]["costRules"]] == ["fail"]
    assert_ci_result(sandbox, proc, doc, verdict="blocked", policy_file=budget)


@pytest.mark.parametrize(("severity", "code", "verdict", "status"), [
    ("block", 1, "blocked", "fail"),
    ("warn", 0, "warned", "warn"),
])
def test_declared_gates_drift(sandbox: Sandbox, tmp_path: Path, severity: str, code: int,
                              verdict: str, status: str) -> None:
    policy = write_policy(tmp_path, {"gates": {
        "mode": "exact", "severity": severity,
        "enforce": ["gate-refund", {"id": "gate-gone", "name": "retired gate"}],
    }})
    proc, doc = neens_json(sandbox, ["eval", "run", "--version-label", f"drift-{severity}",
                                     "--gate-policy", str(policy), "--concurrency", "4",
                                     "--poll-interval", "0.5", *AGENT_CMD])
    assert (proc.returncode, doc["verdict"]) == (code, verdict), proc.stderr
    drift = [r for r in results(doc) if r["dimension"].startswith("gate_drift:")]
    assert [(r["dimension"], r["status"], r["observed"]) for r in drift] == [
        ("gate_drift:gate-gone", status, "missing")]
    sent = stored_run(sandbox, doc["runId"])
    assert sent["gatesPolicy"]["enforce"][1] == {"id": "gate-gone"}  # name dropped
    tier = "BLOCKING" if severity == "block" else "WARNING"
    assert f"gate drift ({tier}):" in proc.stderr
    assert_ci_result(sandbox, proc, doc, verdict=verdict, policy_file=policy)


@pytest.mark.parametrize(("content", "message"), [
    (b"\xff\xfe{}", "not UTF-8 text"),
    (b'{"rules": [', "not valid JSON (line 1 column 12"),
    (b'{"rules": [{"latency": {"max_avg_ms": "fast"}}]}',
     "rules[0].latency.max_avg_ms: expected a number, got the string 'fast'"),
    (b'{"rules": [{"cost": {"max_avg_usd": 1}, "steps": {"max_avg": 2}}]}',
     "rules[0]: has 2 dimensions (cost, steps)"),
    (b'{"gate": {"cost": {"max_avg_usd": 1, "budget": 2}}}',
     "gate.cost.budget: unknown key"),
])
def test_malformed_policy_exits_2_before_any_run(sandbox: Sandbox, tmp_path: Path,
                                                 content: bytes, message: str) -> None:
    path = tmp_path / "bad.json"
    path.write_bytes(content)
    proc = run_cli([*RUN, "--version-label", "bad", "--gate-policy", str(path), *AGENT_CMD],
                   sandbox.agent_env())
    assert proc.returncode == 2
    assert proc.stderr.startswith(f"neens: error: gate policy {path}: ")
    assert message in proc.stderr and proc.stderr.count("\n") == 1, proc.stderr
    missing = run_cli([*RUN, "--version-label", "bad", *AGENT_CMD],
                      sandbox.agent_env(NEENS_GATE_POLICY=str(tmp_path / "nope.yml")))
    assert missing.returncode == 2 and "nope.yml: file not found" in missing.stderr
