"""The sweep report: cells, the terminal block of spec 10.8 (to the character), JSON 10.9."""

from __future__ import annotations

import copy
import json

from neens_action.api.sweep_comparison import (
    ComparedArm,
    Cost,
    Quality,
    SweepComparison,
    SweepWarning,
)
from neens_action.outcome import Invocation, SweepOutcome
from neens_action.report.build.sweep import (
    AGENTS_TABLE,
    VERDICT_TABLE,
    build_sweep_report,
    cost_cell,
    pass_k_cell,
    pass_rate_cell,
    regressions_cell,
    warning_text,
    winner_label,
)
from neens_action.report.render.markdown import render_summary
from neens_action.report.render.sweep_json import sweep_json_document
from neens_action.report.render.sweep_text import render_sweep_text
from tests.fakes.sweeps import sweep_outcome
from tests.unit.report.golden_util import check_golden

# Spec 10.8's illustrative comparison, as the server would send it (spec 4.12).
SPEC_COMPARISON = {
    "sweepId": "msw-4f2c91ab0d3e",
    "status": "completed",
    "comparable": True,
    "bar": {"passRate": 0.9, "source": "gate"},
    "baseline": {"armId": "arm_big", "label": "big"},
    "itemCount": 50,
    "passK": 3,
    "arms": [
        {"armId": "arm_big", "label": "big", "model": "model-large",
         "quality": {"rate": 0.96, "n": 50, "ciLow": 0.863, "ciHigh": 0.995},
         "passK": {"greens": 3, "k": 3, "passed": True},
         "cost": {"costPerCaseUsd": 0.0042, "priced": True, "partial": False},
         "regressions": {"count": 0}, "distinguishableFromBaseline": True},
        {"armId": "arm_small", "label": "small", "model": "model-small",
         "quality": {"rate": 0.9, "n": 50, "ciLow": 0.782, "ciHigh": 0.967},
         "passK": {"greens": 2, "k": 3, "passed": False},
         "cost": {"costPerCaseUsd": 0.0009, "priced": True, "partial": False},
         "regressions": {"count": 3}, "distinguishableFromBaseline": True},
        {"armId": "arm_local", "label": "local", "model": "model-local",
         "quality": {"rate": None, "n": 0, "ciLow": None, "ciHigh": None},
         "passK": {"greens": 0, "k": 3, "passed": None},
         "cost": {"costPerCaseUsd": None, "priced": False, "partial": False},
         "regressions": {"count": None}, "distinguishableFromBaseline": None},
    ],
    "agents": [],
    "verdict": {"outcome": "winner", "reason": "small clears the 90% bar at $0.000900 per "
                "case — 79% cheaper than big.", "winner": {"armId": "arm_small",
                                                         "label": "small"},
                "excluded": [], "tiedWith": []},
    "pricing": {"partial": False, "unpricedModels": [], "noUsageCases": 0,
                "unknownModelCases": 0},
    "warnings": [],
}

SPEC_BLOCK = """\
Sweep msw-4f2c91ab0d3e (completed)
  VERDICT: small clears the 90% bar at $0.000900 per case — 79% cheaper than big.
  bar 90.0% (the gate's min pass rate) | baseline: big | 50 items x k=3
  ARM    MODEL        PASS RATE                    PASS^K    COST/CASE  REGRESSIONS
  big    model-large  96.0% (n=50, CI 86.3-99.5%)  3/3 PASS  $0.004200  0
  small  model-small  90.0% (n=50, CI 78.2-96.7%)  2/3 FAIL  $0.000900  3
  local  model-local  no data                      0/3 —     unpriced   —"""


def _rich_comparison() -> dict:
    """Everything the verdict block can show: notes, exclusions, ties, pricing, agents."""
    comp = copy.deepcopy(SPEC_COMPARISON)
    comp["arms"][1]["distinguishableFromBaseline"] = False
    comp["arms"][1]["cost"]["partial"] = True
    comp["verdict"]["excluded"] = [{"armId": "arm_local", "label": "local",
                                    "reasonCode": "unpriced"}]
    comp["verdict"]["tiedWith"] = ["big"]
    comp["pricing"] = {"partial": True, "unpricedModels": ["model-local"], "noUsageCases": 2,
                       "unknownModelCases": 1}
    comp["agents"] = [
        {"agent": "refund-bot", "itemCount": 30,
         "verdict": {"reason": "small clears the 90% bar for refund-bot"}},
        {"agent": None, "itemCount": 20, "verdict": {"reason": "no arm clears the 90% bar"}},
    ]
    comp["warnings"] = [
        {"code": "arms_same_observed_model", "arms": ["big", "small"],
         "message": "every arm's traces report model gpt-4o-mini"},
        "a plain warning",
    ]
    return comp


def _decide(comparison: dict, exit_code: int = 0, **kw) -> SweepOutcome:
    return sweep_outcome(command="decide", sweep_id="msw-4f2c91ab0d3e", comparison=comparison,
                         exit_code=exit_code, **kw)


def _arm(**fields: object) -> ComparedArm:
    return ComparedArm.decode(fields)


def _quality(value: object) -> Quality:
    return _arm(quality=value).quality


def _cost(value: object) -> Cost:
    return _arm(cost=value).cost


def _cmp(answer: dict) -> SweepComparison:
    return SweepComparison.decode(answer)


def test_cells_follow_spec_formats():
    assert pass_rate_cell(_quality({"rate": 0.925, "n": 40, "ciLow": 0.8, "ciHigh": 0.98})) == (
        "92.5% (n=40, CI 80.0-98.0%)")
    assert pass_rate_cell(_quality({"rate": 0.5})) == "50.0%"
    assert pass_rate_cell(_quality({"rate": 0.5, "n": 4})) == "50.0% (n=4)"
    assert pass_rate_cell(_quality({"rate": None, "n": 0})) == "no data"
    assert pass_rate_cell(_quality(None)) == "no data"
    assert pass_k_cell(3, 3, True) == "3/3 PASS"
    assert pass_k_cell(2, 3, False) == "2/3 FAIL"
    assert pass_k_cell(0, 3, None) == "0/3 —"
    assert pass_k_cell(None, None, None) == "—"
    assert cost_cell(_cost({"costPerCaseUsd": 0.0006, "priced": True})) == "$0.000600"
    assert cost_cell(_cost({"costPerCaseUsd": 0.0006, "priced": True, "partial": True})) == (
        "$0.000600 (partial)")
    assert cost_cell(_cost({"costPerCaseUsd": 0.0, "priced": False})) == "unpriced"  # never $0
    assert cost_cell(_cost({"costPerCaseUsd": "n/a", "priced": True})) == "unpriced"
    assert regressions_cell(_arm(regressions={"count": 3}).regressions) == "3"
    assert regressions_cell(_arm(regressions={"count": None}).regressions) == "—"
    assert warning_text(SweepWarning.decode({"code": "c", "message": "m", "arms": ["a", "b"]})
                        ) == "[c]: m (arms: a, b)"
    assert warning_text(SweepWarning.decode("plain")) == "plain"


def test_verdict_block_matches_spec_example_exactly():
    report = build_sweep_report(_decide(SPEC_COMPARISON))
    assert render_sweep_text(report) == SPEC_BLOCK
    assert report.outputs["winner"] == "small"
    assert report.outputs["sweep-id"] == "msw-4f2c91ab0d3e"
    assert report.verdict == "passed"


def test_verdict_block_golden_with_every_extra():
    report = build_sweep_report(_decide(_rich_comparison()))
    text = render_sweep_text(report)
    check_golden("sweep_verdict.txt", text + "\n")
    assert "  WARNING [arms_same_observed_model]: every arm's traces report model gpt-4o-mini " \
           "(arms: big, small)" in text
    assert "  WARNING: a plain warning" in text
    assert "    (unattributed) (20 items): no arm clears the 90% bar" in text
    assert "excluded from the cost ranking: local (unpriced)" in text


def test_report_tables_and_charts_carry_everything():
    report = build_sweep_report(_decide(_rich_comparison()))
    table = next(t for t in report.tables if t.title == VERDICT_TABLE)
    assert table.columns == ["Arm", "Model", "Pass rate", "Pass^k", "Cost/case", "Regressions"]
    assert table.rows[1] == ["small", "model-small", "90.0% (n=50, CI 78.2-96.7%)", "2/3 FAIL",
                             "$0.000900 (partial)", "3"]
    agents = next(t for t in report.tables if t.title == AGENTS_TABLE)
    assert agents.rows[0] == ["refund-bot", "30", "small clears the 90% bar for refund-bot"]
    rate, cost = report.charts
    assert rate.labels == ["big", "small", "local (no data)"]
    assert rate.series == {"pass rate": [96.0, 90.0, None]}
    assert cost.labels == ["big", "small", "local (unpriced)"]
    assert cost.series == {"cost per case": [0.0042, 0.0009, None]}
    assert ("winner", "small") in report.facts
    md = render_summary(report).replace("\\$\u2060", "$")  # GitLab's $123 is broken
    assert "small clears the 90% bar" in md and "$0.000900 (partial)" in md


def test_void_comparison_shows_no_number():
    comp = copy.deepcopy(SPEC_COMPARISON)
    comp.update(status="void", comparable=False, voidReason="judges differ between arms",
                verdict={"outcome": "unavailable", "reason": "void"})
    outcome = _decide(comp, exit_code=2, error="sweep msw-4f2c91ab0d3e is void: refused")
    report = build_sweep_report(outcome)
    text = render_sweep_text(report)
    assert text.splitlines()[:2] == [
        "Sweep msw-4f2c91ab0d3e (void)", "  VOID: judges differ between arms"]
    assert "not comparable" in text.splitlines()[2]
    assert text.splitlines()[-1] == "neens: error: sweep msw-4f2c91ab0d3e is void: refused"
    for number in ("96.0%", "$0.004200", "3/3", "PASS RATE"):
        assert number not in text
    assert report.tables == [] and report.charts == []
    assert report.outputs["winner"] == "" and report.verdict == "errored"


def test_no_verdict_and_missing_fields_are_explicit():
    comp = {"sweepId": "msw-1", "status": "running", "arms": [], "verdict": None}
    text = render_sweep_text(build_sweep_report(_decide(comp)))
    assert text.splitlines()[1] == "  VERDICT: no verdict available"
    assert text.splitlines()[2] == "  bar — | baseline: — | ? items x k=?"


def test_estimate_block_partial_and_refusals():
    estimate = {
        "totalRuns": 9, "totalCalls": 90, "itemCount": 10, "passK": 3,
        "perArm": [
            {"label": "sonnet", "model": "claude-sonnet-4-6", "runs": 3, "calls": 30,
             "usd": 0.12345},
            {"label": "local", "model": None, "runs": 3, "calls": 30, "usd": None},
        ],
        "totalUsd": 0.12345, "unpricedModels": ["gpt-oss:20b"], "unpricedArms": ["local"],
        "partial": True, "basis": {"tokensPerCall": 1200, "source": "history"},
    }
    outcome = sweep_outcome(command="preview", estimate=estimate, exit_code=0,
                           refusals=["budget 0.01 USD is below the estimate"])
    text = render_sweep_text(build_sweep_report(outcome))
    check_golden("sweep_estimate.txt", text + "\n")
    lines = text.splitlines()
    assert lines[0] == "Estimate: 9 runs (3 x 10 items per arm), 90 agent calls"
    assert lines[1] == "  sonnet: claude-sonnet-4-6 — 3 runs, 30 calls, $0.1235"
    assert lines[2] == "  local: (no model declared) — 3 runs, 30 calls, unpriced"
    assert lines[3].startswith("  PARTIAL estimate: $0.1235 covers only the priced arms. "
                               "No rate for: gpt-oss:20b (arms: local)")
    assert "  Basis: tokensPerCall=1200, source=history" in lines
    assert lines[-1] == "  WOULD REFUSE: budget 0.01 USD is below the estimate"


def test_estimate_complete_total():
    estimate = {"totalRuns": 2, "totalCalls": 4, "itemCount": 2, "passK": 1,
                "perArm": [{"label": "a", "model": "m", "runs": 1, "calls": 2, "usd": 0.5}],
                "totalUsd": 0.5, "partial": False}
    text = render_sweep_text(build_sweep_report(
        sweep_outcome(command="preview", estimate=estimate, exit_code=0)))
    assert text.splitlines()[-1] == "  Total: $0.5000"


def test_state_block():
    sweep = {"id": "msw-9", "status": "running", "passK": 3, "arms": [
        {"label": "sonnet", "model": "claude-sonnet-4-6", "status": "running", "passed": None,
         "greens": 1, "runsTerminal": 2, "runsTotal": 3},
        {"label": "haiku", "status": "failed", "passed": False, "greens": 0, "k": 3,
         "runsTerminal": 3, "runsTotal": 3, "error": "connection refused"},
    ], "error": "one arm failed"}
    text = render_sweep_text(build_sweep_report(
        sweep_outcome(command="get", sweep_id="msw-9", sweep=sweep, exit_code=0)))
    assert text.splitlines() == [
        "Sweep msw-9 (running)",
        "  sonnet: claude-sonnet-4-6 — running pass^k 1/3 — (2/3 runs terminal)",
        "  haiku: (no model declared) — failed pass^k 0/3 FAIL (3/3 runs terminal) "
        "error: connection refused",
        "  sweep error: one arm failed",
    ]


def test_void_state_block():
    sweep = {"id": "msw-9", "status": "void", "voidReason": "dataset version differs",
             "arms": [{"label": "a", "greens": 3, "k": 3, "passed": True}]}
    text = render_sweep_text(build_sweep_report(sweep_outcome(
        command="get", sweep_id="msw-9", sweep=sweep, exit_code=2, error="void")))
    assert "  VOID: dataset version differs" in text.splitlines()
    assert "3/3" not in text


def test_untrusted_text_cannot_forge_lines():
    comp = copy.deepcopy(SPEC_COMPARISON)
    comp["arms"][0]["label"] = "evil\n::error::x"
    comp["verdict"]["reason"] = "line1\nline2"
    text = render_sweep_text(build_sweep_report(_decide(comp)))
    assert "\n::error::" not in text
    assert "VERDICT: line1 line2" in text


def test_interrupted_and_error_tail():
    out = sweep_outcome(command="run", sweep_id="msw-1", interrupted=True, error="interrupted",
                       exit_code=130)
    assert render_sweep_text(build_sweep_report(out)).splitlines()[-1] == "neens: interrupted"


def test_json_document_run():
    sweep = {"id": "msw-1", "status": "completed", "arms": [
        {"label": "a", "model": "m", "status": "completed", "passed": True, "greens": 1,
         "runsTerminal": 1, "runsTotal": 1, "runs": [{"runId": "ppr_1"}]}]}
    out = sweep_outcome(
        command="run", sweep_id="msw-1", sweep=sweep, comparison=SPEC_COMPARISON, exit_code=0,
        invocations=[Invocation(item_id="it_1", input="secret prompt", returncode=0,
                                duration_s=0.1234, arm="a", model="m", rep=1, run_id="ppr_1",
                                output="agent said things")],
        failed_starts=[{"runId": "ppr_2", "arm": "a", "rep": 2, "error": "HTTP 500"}],
    )
    doc = sweep_json_document(out)
    assert doc["sweepId"] == "msw-1" and doc["exitCode"] == 0 and doc["status"] == "completed"
    assert doc["arms"] == [{"label": "a", "model": "m", "status": "completed", "passed": True,
                            "greens": 1, "runsTerminal": 1, "runsTotal": 1, "error": None}]
    assert doc["verdict"] == SPEC_COMPARISON["verdict"]
    assert doc["invocations"] == [{"arm": "a", "model": "m", "rep": 1, "runId": "ppr_1",
                                   "itemId": "it_1", "returncode": 0, "durationS": 0.123,
                                   "timedOut": False, "error": None}]
    assert doc["failedStarts"][0]["runId"] == "ppr_2"
    assert "agent said things" not in json.dumps(doc)


def test_json_document_decide_without_sweep_and_preview():
    doc = sweep_json_document(_decide(SPEC_COMPARISON))
    assert doc["status"] == "completed" and doc["arms"] == [] and doc["sweep"] is None
    assert "invocations" not in doc
    prev = sweep_json_document(sweep_outcome(command="preview", estimate={"totalRuns": 1},
                                            exit_code=0))
    assert prev["estimate"] == {"totalRuns": 1} and "comparison" not in prev


def test_winner_label_variants():
    assert winner_label(_cmp({"verdict": {"outcome": "none_clear", "winner": "x"}})) == ""
    assert winner_label(_cmp({"verdict": {"outcome": "winner", "winner": "x"}})) == "x"
    assert winner_label(_cmp({"verdict": {"outcome": "winner", "winnerArmId": "a1"},
                              "arms": [{"armId": "a1", "label": "one"}]})) == "one"
