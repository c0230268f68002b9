"""Outcome -> Report -> terminal summary (spec 10.1 / 10.2), and the --json document."""

from __future__ import annotations

import json

from neens_action.api.answers import Gate, GateRow, Run
from neens_action.api.comparison import Comparison
from neens_action.outcome import Invocation, Outcome
from neens_action.report.build.eval import build_eval_report, gate_label, pct_int
from neens_action.report.render.json import dumps, eval_document
from neens_action.report.render.text import clean, render

RUN = {
    "id": "ppr_1", "status": "completed_with_regressions", "completed": 3, "total": 3,
    "versionLabel": "v2",
    "aggregate": {"passRate": 2 / 3, "avgScore": 0.7, "passed": 2, "failed": 1, "errored": 0,
                  "regressions": 1, "baselineCompared": True},
    "items": [
        {"datasetVersionItemId": "it_1", "input": "Refund for order 42 ($42.00)?",
         "passed": True, "score": 1.0},
        {"datasetVersionItemId": "it_2", "input": "Wrong\x1b[31m\nprompt", "passed": False,
         "score": 0.25, "reasons": ["correctness 0.00: expected '$50.00'"]},
        {"datasetVersionItemId": "it_3", "input": "Never traced", "passed": None,
         "error": "no trace captured"},
    ],
}
GATE = {
    "passed": False, "reasons": ["regressions 1 > 0"], "regressions": 1, "passRate": 2 / 3,
    "baseline": {"kind": "preprod_run", "runId": "ppr_0", "compared": True, "matchedItems": 2,
                 "totalItems": 3, "resolution": {"requested": "branch:main",
                                                 "resolved": "preprod_run",
                                                 "resolvedRunId": "ppr_0",
                                                 "detail": "newest passing run on 'main'"}},
    "gates": [
        {"gateId": "gate-a", "name": "FM: Wrong refund amount", "enforced": True,
         "passed": False, "passRate": 1 / 3, "threshold": 0.7, "nScored": 3, "nItems": 3,
         "verdict": "fail"},
        {"gateId": "gate-b", "name": "FM: Leaks internal notes" + " and more" * 6,
         "enforced": False, "passed": False, "passRate": None, "threshold": 0.7,
         "nScored": 0, "nItems": 4, "verdict": "no_data"},
    ],
}

EXPECTED = """
============================================================
Pre-prod eval ppr_1
  status:      completed_with_regressions
  scored:      3/3
  regressions: 0
  agents:      1 of 3 agents crashed (exit code 3), 1 agent exported no trace
  baseline:    run ppr_0 — branch:main: newest passing run on 'main'
  note:        the baseline matched 2 of 3 items; regressions and the pass-rate delta cover only the matched items
  pass rate:   66.67%
  gate:        FAILED
  eval gates:
    GATE                                          ENFORCED  PASS RATE  THRESHOLD  SCORED  VERDICT
    FM: Wrong refund amount                       yes       33%        70%        3/3     FAIL
    FM: Leaks internal notes and more and more …  no        n/a        70%        0/4     NO DATA (not enforced)
  eval gates:  0/2 passed, 1 enforced gate(s) failing the build
  items not passing (2 of 3):
    ✗ it_2  agent failed  score 0.25  "Wrong [31m prompt" — agent crashed (exit code 3); correctness 0.00: expected '$50.00'
    ✗ it_3  agent failed  "Never traced" — no trace captured
  how to fix:
    - Run the `command` locally with one item's prompt on stdin to see why it exits non-zero (its last output lines are shown with the failure).
    - Check that the agent exports OpenTelemetry traces to the Neens OTLP endpoint (`OTEL_EXPORTER_OTLP_ENDPOINT`) and flushes them before it exits; set `doctor: true` to check the set-up before the run.
  verdict:     blocked (exit 1)
============================================================"""  # noqa: E501


def failing_outcome() -> Outcome:
    return Outcome(
        mode="run", run_id="ppr_1", base_url="http://127.0.0.1:1", run=Run.decode(RUN),
        gate=Gate.decode(GATE),
        comparison=Comparison.decode({"regressions": [{"itemId": "it_2"}]}),
        invocations=[Invocation("it_1", "q", returncode=0, duration_s=0.5),
                     Invocation("it_2", "q", returncode=3, duration_s=0.25),
                     Invocation("it_3", "q", returncode=0, duration_s=0.1)],
    )


def test_summary_golden():
    report = build_eval_report(failing_outcome())
    assert render(report) == EXPECTED
    assert report.verdict == "blocked" and report.exit_code == 1
    # the one regression was an item whose agent crashed: an agent failure, said once
    assert report.headline == ("Blocked: 1 of 3 agents crashed (exit code 3), 1 agent exported"
                               " no trace.")
    assert report.outputs == {"exit-code": "1", "verdict": "blocked", "run-id": "ppr_1",
                              "pass-rate": "0.6667", "regressions": "0"}
    assert [i.state for i in report.items] == ["pass", "fail", "unscored"]
    assert report.items[1].duration_s == 0.25


def test_not_compared_warning_and_no_gate():
    gate = {"passed": False, "reasons": ["regressions: not compared (no baseline)",
                                         "pass rate 50.00% < 90.00%"],
            "regressions": None, "passRate": 0.5,
            "baseline": {"kind": "prod_window", "range": "7d", "compared": False,
                         "matchedItems": 0, "totalItems": 2}}
    run = {"status": "completed", "completed": 2, "total": 2}
    o = Outcome(mode="run", run_id="ppr_2", run=Run.decode(run), gate=Gate.decode(gate),
                enforced=False)
    report = build_eval_report(o)
    text = render(report)
    assert "  regressions: not compared (no baseline)\n" in text
    assert "  baseline:    production window (7d)\n" in text
    assert "  CAVEAT: Regressions were not compared: no production session of the last 7d " \
        "matched these items." in text
    assert text.count("not compared") == 2  # the fact and the one caveat, no second warning
    assert "  gate:        FAILED  (--no-gate: not enforced)\n" in text
    assert report.verdict == "warned" and report.exit_code == 0
    assert report.warnings == []
    assert report.outputs["regressions"] == ""


def test_policy_lines():
    from neens_action.policy.result import PolicyEval as E
    from neens_action.policy.result import RuleResult as R

    pe = E(True, True, [R("cost", "warn", "warn", 0.0123, 0.01, "avg cost over budget"),
                        R("abs_failures", "block", "fail", 4, 3, "4 > 3")])
    run = {"status": "completed", "completed": 1, "total": 1}
    gate = {"passed": True, "passRate": 1.0, "regressions": 0}
    o = Outcome(mode="run", run_id="r", run=Run.decode(run), gate=Gate.decode(gate),
                policy_eval=pe)
    report = build_eval_report(o)
    text = render(report)
    assert "  policy rules:\n    [WARN] cost (obs=$0.0123 vs $0.01) — warn: avg cost over " \
        "budget" in text
    assert "    [BLOCK] abs_failures (obs=4 vs 3) — fail: 4 > 3" in text
    assert "  policy:      1 blocking failure(s), 1 warning(s)" in text
    assert report.exit_code == 1
    assert report.headline == "Blocked by policy: abs failures 4 (max 3)."
    doc = eval_document(o, report)
    assert doc["policyEval"]["blocked"] is True


def test_error_only_prints_one_line():
    o = Outcome(mode="run", error="POST /preprod-evals failed: HTTP 404: no such dataset")
    report = build_eval_report(o)
    assert render(report) == "neens: error: POST /preprod-evals failed: HTTP 404: no such dataset"
    doc = eval_document(o, report)
    assert doc["runId"] == "" and doc["exitCode"] == 2 and doc["buildVerdict"] is None
    assert doc["run"] is None and doc["items"] == []


def test_json_document_shape():
    o = failing_outcome()
    o.ci_result_reported = True
    report = build_eval_report(o)
    doc = json.loads(dumps(eval_document(o, report)))
    assert doc["format"] == 2 and doc["runId"] == "ppr_1" and doc["exitCode"] == 1
    assert doc["gatePassed"] is False and doc["error"] is None
    assert doc["gates"] == GATE["gates"] and doc["drift"] == [] and doc["gatesPolicy"] is None
    assert "policyEval" not in doc
    assert doc["buildVerdict"] == {"verdict": "blocked", "reported": True}
    assert doc["summary"] == {"passRate": 2 / 3, "regressions": 0, "agentFailures": 2,
                              "scored": 3, "total": 3}
    assert doc["items"][1] == {"itemId": "it_2", "returncode": 3, "durationS": 0.25,
                               "timedOut": False, "error": None, "state": "fail",
                               "score": 0.25}


def test_helpers():
    assert pct_int(0.125) == "13%" and pct_int(1 / 3) == "33%" and pct_int(None) == "n/a"
    blocked = GateRow.decode({"verdict": "pass", "guardrailOutcome": "block"})
    assert gate_label(blocked) == "BLOCKED (guardrail)"
    assert gate_label(GateRow.decode({"verdict": "weird", "enforced": False})) == \
        "WEIRD (not enforced)"
    assert clean("a\nb\x07c", 4) == "a b…"
