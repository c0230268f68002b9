"""Report cases of the second round of report fixes (honest headlines, one count per fact,
numbers with units, words made once), built like :mod:`tests.unit.report.cases`."""

from __future__ import annotations

import copy
from collections.abc import Callable

from neens_action.api.answers import Gate, Run
from neens_action.api.comparison import Comparison
from neens_action.api.suites import Suite
from neens_action.outcome import Invocation, Outcome
from neens_action.policy.result import PolicyEval, RuleResult
from neens_action.report.build.stress import build_stress_report
from neens_action.report.model import Report
from neens_action.settings.policy_file import fmt
from tests.unit.report.cases import (
    BASE,
    EXPECTED,
    PROMPTS,
    SUITE,
    _eval,
    _gate,
    _invs,
    _outcome,
    _row,
    _run,
    passed,
    policy,
    regressions,
)

FELL_BACK = {"kind": "prod_window", "range": "7d", "compared": True, "matchedItems": 1,
             "totalItems": 11, "passRate": 1.0,
             "resolution": {"requested": "branch:release", "resolved": "prod_window",
                            "resolvedRunId": None,
                            "detail": "no completed run with a passing gate on branch "
                                      "'release' for this dataset version; using the 7d "
                                      "production window"}}


def collapsed() -> Outcome:
    """10 of 11 items fail, only max-regressions is set, the baseline fell back from
    branch:release to the production window and matched the one passing item."""
    rows = [_row(i, i == 0, f"Refunded {EXPECTED[0]}." if i == 0 else "I cannot help.")
            for i in range(11)]
    for i, r in enumerate(rows):
        r["datasetVersionItemId"] = f"it_{i + 1}"
    gate = _gate(True, 1 / 11, 0, ["all gate checks passed"], baseline=FELL_BACK,
                 gate={"max_regressions": 0})
    return _outcome(_run(rows, baseline=FELL_BACK), gate, invocations=_invs(11),
                    comparison={"regressions": [], "baseline": FELL_BACK, "traits": {
                        "candidate": {"avg_cost": 0.0002104, "avg_latency": 0.31, "n": 11},
                        "baseline": {"avg_cost": None, "avg_latency": 0.4, "n": 1}}})


TAIL = "agent: looking up the order\nagent: calling the model (this can take a while)"


def timed_out_partial() -> Outcome:
    """6 of 8 agents time out: 5 had exported a partial trace (scored as failing, so the
    server counts them as regressions), 1 none; 2 answer. Only regressions: agent failures."""
    rows = [_row(i, False, None) for i in range(5)] + [
        _row(5, None, None, error="no trace captured")] + [
        _row(i, True, f"Refunded {EXPECTED[i % 4]}.") for i in (6, 7)]
    for r in rows[:5]:
        r["output"], r["reason"] = None, "correctness: no answer"
    regs = [{"itemId": f"it_{i + 1}", "before": "pass",
             "after": "fail" if i < 5 else "unscored"} for i in range(6)]
    invs = [Invocation(f"it_{i + 1}", PROMPTS[i % 4], returncode=-15, duration_s=60.0,
                       timed_out=True, error="timed out after 60s", output=TAIL)
            for i in range(6)] + [Invocation(f"it_{i + 1}", PROMPTS[i % 4], returncode=0,
                                             duration_s=0.5) for i in (6, 7)]
    gate = _gate(False, 0.25, 6, ["regressions 6 > 0"], gate={"max_regressions": 0})
    o = _outcome(_run(rows, status="completed_with_regressions"), gate, invocations=invs,
                 comparison={"regressions": regs, "baseline": BASE})
    o.agent_timeout = 60
    return o


def tiny_baseline_policy() -> Outcome:
    """Policy rows of a cost that grew from a tiny baseline, and a micro-dollar threshold."""
    o = passed()
    o.policy_eval = PolicyEval(blocked=False, warned=True, results=[
        RuleResult("cost", "warn", "warn", 134983.2, 20,
                   "cost max_delta_pct 134983% > 20%"),
        RuleResult("cost", "warn", "warn", 0.0002104, 0.000001,
                   f"cost max_avg_usd {fmt(0.0002104)} > {fmt(0.000001)}"),
        RuleResult("latency", "warn", "pass", 401.0, 30000.0,
                   "latency max_avg_ms 401 <= 30000")])
    return o


def policy_block_gate_passed() -> Outcome:
    """The server gate passed ("all gate checks passed"); a blocking policy rule failed."""
    o = policy("fail")
    o.gate = Gate.decode(_gate(True, 1.0, 0, ["all gate checks passed"]))
    return o


def prod_window_empty() -> Outcome:
    """Compared with the last hour of production, which matched none of the items."""
    o = passed()
    base = {"kind": "prod_window", "range": "1h", "compared": False, "matchedItems": 0,
            "totalItems": 4, "passRate": None}
    o.gate = Gate.decode(_gate(True, 1.0, None, ["regressions: not compared (no baseline)"],
                               baseline=base))
    o.comparison = None
    return o


def newcomer() -> Outcome:
    """The first run on main: branch:main has no run yet (the server fell back to the
    production window)."""
    o = passed()
    base = {**FELL_BACK, "matchedItems": 1, "totalItems": 4,
            "resolution": {**FELL_BACK["resolution"], "requested": "branch:main"}}
    raw = {**(o.run.raw if o.run else {}), "branch": "main", "baseline": base}
    o.run = Run.decode(raw)
    o.gate = Gate.decode(_gate(True, 1.0, 0, ["all gate checks passed"], baseline=base))
    o.comparison = Comparison.decode({"regressions": [], "baseline": base})
    return o


def stress_not_compared() -> Report:
    """A stress suite blocked by its pass rate, with max-regressions set and no baseline."""
    o = regressions(2)
    o.mode, o.suite = "stress", Suite.decode(copy.deepcopy(SUITE))
    raw = copy.deepcopy(dict(o.run.raw)) if o.run else {}
    for i, row in enumerate(raw["items"]):
        row["datasetVersionItemId"] = f"sc_{i}"
    o.run = Run.decode(raw)
    base = {"kind": "prod_window", "range": "7d", "compared": False, "matchedItems": 0,
            "totalItems": 4, "passRate": None}
    o.gate = Gate.decode(_gate(False, 0.5, None, ["regressions: not compared (no baseline)",
                                                  "pass rate 50.00% < 90.00%"], baseline=base))
    o.comparison = None
    return build_stress_report(o)


HONEST_CASES: dict[str, Callable[[], Report]] = {
    "collapsed_pass_rate": _eval(collapsed),
    "agent_timed_out_partial": _eval(timed_out_partial),
    "policy_tiny_baseline": _eval(tiny_baseline_policy),
    "policy_block_gate_passed": _eval(policy_block_gate_passed),
    "prod_window_not_compared": _eval(prod_window_empty),
    "newcomer_main": _eval(newcomer),
    "stress_not_compared": stress_not_compared,
}
