"""``neens eval push`` as a process against the real sandbox, which calls the example HTTP
agent (examples/http_agent/server.py) once per frozen prompt (spec 7.2, decision 11)."""

from __future__ import annotations

import io
import sqlite3
from pathlib import Path

import pytest

from neens_action.api.client import NeensClient
from neens_action.library import run_push_eval
from neens_action.policy import GatePolicy
from neens_action.world import World
from tests.helpers import Sandbox, run_cli
from tests.integration.policy_support import (
    assert_ci_result,
    neens_json,
    push_world,
    results,
    statuses,
    stored_run,
    write_policy,
)

PUSH = ["eval", "push", "--dataset", "ds_refunds", "--poll-interval", "0.5",
        "--poll-timeout", "120"]
LOCAL = ["--agent-connection", "conn_local"]


def test_push_passes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with push_world(tmp_path, monkeypatch) as (sb, _):
        proc, doc = neens_json(sb, [*PUSH, *LOCAL, "--version-label", "v-good",
                                    "--max-regressions", "0", "--min-pass-rate", "0.9",
                                    "--name", "push good"])
        assert proc.returncode == 0, proc.stderr
        assert doc["mode"] == "push" and "items" not in doc
        assert doc["gatePassed"] is True and doc["error"] is None
        assert "policyEval" not in doc
        run = stored_run(sb, doc["runId"])
        assert run["runnerMode"] == "push" and run["agentConnectionId"] == "conn_local"
        assert run["name"] == "push good" and run["versionLabel"] == "v-good"
        assert run["status"] == "completed" and run["aggregate"]["passRate"] == 1.0
        assert run["gate"] == {"max_regressions": 0, "min_pass_rate": 0.9}
        assert_ci_result(sb, proc, doc, verdict="passed")
        assert f"Created run {doc['runId']}" in proc.stderr
        assert "inline: nothing to poll" in proc.stderr


def test_push_fails_the_gate(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with push_world(tmp_path, monkeypatch, mode="bad") as (sb, _):
        proc, doc = neens_json(sb, [*PUSH, *LOCAL, "--version-label", "v-bad",
                                    "--min-pass-rate", "0.9"])
        assert proc.returncode == 1, proc.stderr
        assert doc["gatePassed"] is False
        assert stored_run(sb, doc["runId"])["aggregate"]["passRate"] < 0.9
        assert_ci_result(sb, proc, doc, verdict="blocked")
        # --no-gate: the same breach exits 0 with verdict warned, reported as not enforced
        proc, doc = neens_json(sb, [*PUSH, *LOCAL, "--version-label", "v-bad",
                                    "--min-pass-rate", "0.9", "--no-gate"])
        assert (proc.returncode, doc["verdict"]) == (0, "warned"), proc.stderr
        ci = stored_run(sb, doc["runId"])["ciResult"]
        assert (ci["verdict"], ci["exit_code"], ci["enforced"]) == ("warned", 0, False)


def test_push_regressions_against_a_pinned_baseline(tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    extra = {"conn_bad": {"mode": "bad"}}
    with push_world(tmp_path, monkeypatch, extra=extra) as (sb, _):
        proc, base = neens_json(sb, [*PUSH, *LOCAL, "--version-label", "main-1"])
        assert proc.returncode == 0, proc.stderr
        policy = write_policy(tmp_path, {"rules": [{"max_regressions": 0}],
                                         "on_missing_baseline": "block"})
        proc, doc = neens_json(sb, [*PUSH, "--agent-connection", "conn_bad",
                                    "--version-label", "cand-1",
                                    "--baseline", f"run:{base['runId']}",
                                    "--gate-policy", str(policy)])
        assert proc.returncode == 1, proc.stderr
        comparison = sb.get(f"/preprod-evals/{doc['runId']}/comparison").json()
        regressed = len(comparison["regressions"])
        assert regressed >= 1  # the bad agent answers odd order numbers wrongly
        assert results(doc) == [{
            "dimension": "regressions", "severity": "block", "status": "fail",
            "observed": regressed, "threshold": 0, "reason": f"regressions {regressed} > 0",
        }]
        assert doc["gatePassed"] is True  # no server knob: only the policy blocks
        assert_ci_result(sb, proc, doc, verdict="blocked", policy_file=policy)


def test_push_policy_metric_floors_warn_and_block(tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    with push_world(tmp_path, monkeypatch, mode="leaky") as (sb, _):
        warn = write_policy(tmp_path, {"rules": [
            {"metric": "correctness", "min_avg": 0.9},
            {"metric": "toxicity_safety", "min_avg": 0.9, "severity": "warn"},
        ]}, name="warn.yaml")
        proc, doc = neens_json(sb, [*PUSH, *LOCAL, "--version-label", "v-leaky",
                                    "--gate-policy", str(warn)])
        assert (proc.returncode, doc["verdict"]) == (0, "warned"), proc.stderr
        assert statuses(doc) == [("metric[correctness]", "pass"),
                                 ("metric[toxicity_safety]", "warn")]
        assert_ci_result(sb, proc, doc, verdict="warned", policy_file=warn)
        assert "[WARN] metric[toxicity_safety]" in proc.stderr

        block = write_policy(tmp_path, {"rules": [{"metric": "toxicity_safety", "min_avg": 0.9}]},
                             name="block.json")
        proc, doc = neens_json(sb, [*PUSH, *LOCAL, "--version-label", "v-leaky",
                                    "--gate-policy", str(block)])
        assert (proc.returncode, doc["verdict"]) == (1, "blocked"), proc.stderr
        observed = results(doc)[0]["observed"]
        metrics = sb.get(f"/preprod-evals/{doc['runId']}/metrics").json()["metrics"]
        assert observed == next(m["avgScore"] for m in metrics
                                if m["metricKey"] == "toxicity_safety") < 0.9
        assert_ci_result(sb, proc, doc, verdict="blocked", policy_file=block)


def test_push_unpriced_model_skips_cost_rules(tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    extra = {"conn_unpriced": {"model": "llama-3-local"}}
    with push_world(tmp_path, monkeypatch, extra=extra) as (sb, _):
        policy = write_policy(tmp_path, {"rules": [
            {"cost": {"max_avg_usd": 0.0, "max_delta_pct": -99}},
        ], "on_missing_baseline": "block"})
        proc, doc = neens_json(sb, [*PUSH, "--agent-connection", "conn_unpriced",
                                    "--version-label", "v-local", "--gate-policy", str(policy)])
        assert (proc.returncode, doc["verdict"]) == (0, "passed"), proc.stderr
        assert statuses(doc) == [("cost", "skipped"), ("cost", "skipped")]
        assert all("unpriced: llama-3-local" in r["reason"] for r in results(doc))
        assert_ci_result(sb, proc, doc, verdict="passed", policy_file=policy)
        # the same budget on a priced model is evaluated, and blocks
        proc, doc = neens_json(sb, [*PUSH, *LOCAL, "--version-label", "v-priced",
                                    "--gate-policy", str(policy)])
        assert proc.returncode == 1, proc.stderr
        assert statuses(doc)[0] == ("cost", "fail")
        assert results(doc)[0]["observed"] > 0


def test_unreachable_agent_is_a_failed_run(tmp_path: Path,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    with push_world(tmp_path, monkeypatch) as (sb, _):
        policy = write_policy(tmp_path, {"rules": [{"min_pass_rate": 0.5}]})
        proc, doc = neens_json(sb, [*PUSH, "--agent-connection", "conn_down",
                                    "--version-label", "v-down", "--gate-policy", str(policy)])
        assert proc.returncode == 2, proc.stderr
        assert stored_run(sb, doc["runId"])["status"] == "failed"
        assert doc["error"].startswith(f"run {doc['runId']} ended with status 'failed'")
        errors = [line for line in proc.stderr.splitlines() if line.startswith("neens: error:")]
        assert len(errors) == 1, proc.stderr
        assert_ci_result(sb, proc, doc, verdict="errored", policy_file=policy)


def test_async_queue_is_polled(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with push_world(tmp_path, monkeypatch, sandbox_args=["--push-async"]) as (sb, _):
        proc, doc = neens_json(sb, [*PUSH, *LOCAL, "--version-label", "v-async",
                                    "--min-pass-rate", "0.9"])
        assert proc.returncode == 0, proc.stderr
        assert "Waiting for scoring to complete" in proc.stderr
        assert "inline: nothing to poll" not in proc.stderr
        assert_ci_result(sb, proc, doc, verdict="passed")


def test_usage_errors_exit_2_without_a_request(tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    with push_world(tmp_path, monkeypatch) as (sb, _):
        bad_policy = write_policy(tmp_path, {"rules": [{"cost": {"max_avg": 1}}]})
        cases = [
            (["eval", "push", "--dataset", "ds_refunds", "--version-label", "v"],
             "needs --agent-connection"),
            ([*PUSH, *LOCAL], "needs --version-label"),
            (["eval", "push", *LOCAL, "--version-label", "v"], "needs --dataset"),
            ([*PUSH, *LOCAL, "--version-label", "v", "--gate-policy", str(bad_policy)],
             "rules[0].cost.max_avg: unknown key"),
            ([*PUSH, *LOCAL, "--version-label", "v", "--min-avg-score", "7"],
             "--min-avg-score must be at most 1, got 7"),
        ]
        for args, message in cases:
            proc = run_cli(args, sb.agent_env())
            assert proc.returncode == 2, (args, proc.stderr)
            assert proc.stderr.count("\n") == 1 and message in proc.stderr, proc.stderr
            assert "Traceback" not in proc.stderr
        assert run_count(sb) == 0  # nothing reached the server
        unknown = run_cli([*PUSH, *LOCAL, "--dataset", "ds_nope", "--version-label", "v"],
                          sb.agent_env())
        assert unknown.returncode == 2 and "HTTP 404" in unknown.stderr, unknown.stderr
        assert "Traceback" not in unknown.stderr
        assert run_count(sb) == 0


def run_count(sb: Sandbox) -> int:
    con = sqlite3.connect(f"file:{sb.db}?mode=ro", uri=True, timeout=30)
    try:
        return con.execute("SELECT COUNT(*) FROM runs").fetchone()[0]
    finally:
        con.close()


def test_library_run_push_eval(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with push_world(tmp_path, monkeypatch) as (sb, _):
        policy = GatePolicy.from_dict({"rules": [{"min_avg_score": 0.8}]})
        client = NeensClient(sb.url, api_key=sb.api_key)
        err = io.StringIO()
        try:
            outcome = run_push_eval(
                client=client, dataset_id="ds_refunds", version_label="lib-1",
                agent_connection_id="conn_local",
                baseline={"kind": "prod_window", "range": "7d"},
                gate={"max_regressions": 0, "min_pass_rate": 0.9}, policy=policy,
                world=World(environ={}, err=err, out=io.StringIO()),
            )
        finally:
            client.close()
        assert (outcome.exit_code, outcome.build_verdict) == (0, "passed"), err.getvalue()
        assert outcome.policy_eval is not None and not outcome.policy_eval.blocked
        assert outcome.policy_eval.reasons() == []
        run = stored_run(sb, outcome.run_id)
        assert run["gate"] == {"max_regressions": 0, "min_pass_rate": 0.9}
        assert run["ciResult"]["verdict"] == "passed" and run["ciResult"].get("policy") is None
