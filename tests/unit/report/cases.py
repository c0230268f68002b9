"""Outcomes for every report case, shaped like the sandbox's real answers, built into Reports
by the real builders (golden files: tests/unit/report/test_golden_cases.py)."""

from __future__ import annotations

import copy
from collections.abc import Callable

from neens_action.api.answers import Gate, Run
from neens_action.api.comparison import Comparison, Metrics
from neens_action.api.suites import Suite
from neens_action.ci.main import EMPTY_KEY
from neens_action.outcome import Invocation, Outcome, ShardInfo
from neens_action.policy.result import PolicyEval, RuleResult
from neens_action.report.build.errors import bad_input_report
from neens_action.report.build.eval import build_eval_report
from neens_action.report.build.shard import build_create_report, build_shard_report
from neens_action.report.build.stress import build_stress_report
from neens_action.report.build.sweep import build_sweep_report
from neens_action.report.links import attach
from neens_action.report.model import Report
from tests.fakes.sweeps import sweep_outcome
from tests.unit.report.samples import HOSTILE

BASE = {"kind": "preprod_run", "runId": "ppr_100", "compared": True, "matchedItems": 4,
        "totalItems": 4, "passRate": 1.0,
        "resolution": {"requested": "branch:main", "resolved": "preprod_run",
                       "resolvedRunId": "ppr_100", "detail": "newest passing run on 'main'"}}
PROMPTS = ["Refund for order 42 ($42.00)?", "Can I get my money back for order 7? It cost $19.99.",
           "Order 1001 arrived broken, refund $250.00 please.",
           "I was charged $5.50 twice for order 88, refund the extra."]
EXPECTED = ["$42.00", "$19.99", "$250.00", "$5.50"]


def _row(i: int, passed: bool | None, answer: str | None, *, error: str | None = None) -> dict:
    correct = None if passed is None else (1.0 if passed else 0.0)
    return {"datasetVersionItemId": f"it_{i + 1}", "input": PROMPTS[i % 4],
            "expectedOutput": EXPECTED[i % 4], "passed": passed,
            "score": None if passed is None else (1.0 if passed else 0.5),
            "scores": {} if passed is None else {"correctness": correct, "toxicity_safety": 1.0},
            "reason": "" if passed in (True, None) else f"correctness: missing {EXPECTED[i % 4]!r}",
            "error": error, "output": answer, "captured": passed is not None}


def _run(rows: list[dict], **kw: object) -> dict:
    passed = sum(1 for r in rows if r["passed"] is True)
    scored = [r for r in rows if r["passed"] is not None]
    run = {"id": "ppr_200", "status": "completed", "completed": len(scored), "total": len(rows),
           "versionLabel": "feature-x", "gitSha": "abcdef1234567", "datasetId": "ds_refunds",
           "datasetVersionId": "dsv_refunds_2", "baseline": BASE,
           "aggregate": {"passRate": passed / len(rows) if rows else None,
                         "avgScore": (sum(r["score"] for r in scored) / len(scored))
                         if scored else None, "passed": passed,
                         "failed": len(scored) - passed, "errored": len(rows) - len(scored)},
           "items": rows}
    run.update(kw)
    return run


def _gate(passed: bool, rate: float | None, regressions: int | None, reasons: list[str],
          **kw: object) -> dict:
    gate = {"passed": passed, "passRate": rate, "regressions": regressions, "reasons": reasons,
            "baseline": BASE, "gate": {"max_regressions": 0, "min_pass_rate": 0.9}}
    gate.update(kw)
    return gate


def _invs(n: int, rc: int = 0, **kw: object) -> list[Invocation]:
    return [Invocation(f"it_{i + 1}", PROMPTS[i % 4], returncode=rc, duration_s=0.5, **kw)
            for i in range(n)]


def _outcome(run: dict, gate: dict | None, **kw: object) -> Outcome:
    """The outcome a flow makes from these answers (each decoded as the client does)."""
    kw.setdefault("mode", "run")
    if kw.get("comparison") is not None:
        kw["comparison"] = Comparison.decode(kw["comparison"])
    return Outcome(run_id=str(run.get("id", "")), base_url="http://127.0.0.1:8080",
                   run=Run.decode(run), gate=None if gate is None else Gate.decode(gate),
                   **kw)  # type: ignore[arg-type]


def passed() -> Outcome:
    rows = [_row(i, True, f"Refunded {EXPECTED[i]}.") for i in range(4)]
    return _outcome(_run(rows), _gate(True, 1.0, 0, []), invocations=_invs(4),
                    comparison={"regressions": [], "baseline": BASE, "traits": {
                        "candidate": {"avg_cost": 0.0002104, "avg_latency": 401.0},
                        "baseline": {"avg_cost": 0.00019, "avg_latency": 380.0}}})


def regressions(n: int = 2) -> Outcome:
    rows = [_row(i, i >= n, f"Sorry, I cannot refund order {i}." if i < n
                 else f"Refunded {EXPECTED[i % 4]}.") for i in range(max(n, 4))]
    regs = [{"itemId": f"it_{i + 1}", "before": "pass", "after": "fail"} for i in range(n)]
    rate = (len(rows) - n) / len(rows)
    return _outcome(_run(rows, status="completed_with_regressions"),
                    _gate(False, rate, n, [f"regressions {n} > max_regressions 0",
                                           f"pass rate {rate:.4f} < min_pass_rate 0.9"]),
                    invocations=_invs(len(rows)), comparison={"regressions": regs,
                                                              "baseline": BASE})


def _agents(kind: str) -> Outcome:
    rows = [_row(i, None, None, error="no trace captured") for i in range(6)]
    regs = [{"itemId": f"it_{i + 1}", "before": "pass", "after": "unscored"} for i in range(4)]
    gate = _gate(False, 0.0, 4, ["regressions 4 > max_regressions 0",
                                 "pass rate 0.0000 < min_pass_rate 0.9"])
    if kind == "crashed":
        invs = _invs(6, rc=3, error="rc=3", output="Traceback (most recent call last):\n"
                     "  File \"agent.py\", line 9\nKeyError: 'OPENAI_API_KEY' <script> @bob")
    elif kind == "timed_out":
        invs = _invs(6, rc=None, timed_out=True, error="timed out after 60s")
    else:
        invs = _invs(6)
    return _outcome(_run(rows, status="failed"), gate, invocations=invs,
                    comparison={"regressions": regs, "baseline": BASE})


def not_compared() -> Outcome:
    o = passed()
    base = {**BASE, "compared": False, "matchedItems": 0, "passRate": None}
    o.gate = Gate.decode(_gate(True, 1.0, None, [], baseline=base))
    o.comparison = None
    return o


def no_gate() -> Outcome:
    o = regressions(1)
    o.enforced = False
    return o


def error(message: str) -> Callable[[], Outcome]:
    return lambda: Outcome(mode="run", error=message)


def push(down: bool = False) -> Outcome:
    if down:
        rows = [_row(i, None, None, error="agent_http call failed: connection refused")
                for i in range(4)]
        return _outcome(_run(rows, status="failed"), None, mode="push",
                        error="run ppr_200 failed: every agent call failed "
                              "(agent_http call failed: connection refused)")
    o = passed()
    o.mode, o.invocations = "push", []
    return o


GATE_ROWS = [{"gateId": "g1", "name": "FM: Wrong refund amount", "enforced": True,
              "passed": False, "passRate": 1 / 3, "threshold": 0.7, "nScored": 3, "nItems": 3,
              "verdict": "fail"},
             {"gateId": "g2", "name": "FM: Leaks internal notes", "enforced": False,
              "passed": True, "passRate": 1.0, "threshold": 0.7, "nScored": 2, "nItems": 2,
              "verdict": "pass"}]


def eval_gates(gates_only: bool = False) -> Outcome:
    o = passed()
    o.gate = Gate.decode(_gate(False, 0.8, 0, ["eval gate FM: Wrong refund amount: pass rate "
                                               "33 % < 70 %"], gates=GATE_ROWS))
    if gates_only:
        o.run = Run.decode({**(o.run.raw if o.run else {}), "datasetId": None,
                            "gates": GATE_ROWS})
    return o


def _policy(status: str) -> PolicyEval:
    results = [
        {"dimension": "cost", "severity": "block" if status == "fail" else "warn",
         "status": status, "observed": 1567.0, "threshold": 20,
         "reason": f"cost max_delta_pct 1567% {'>'} 20%"},
        {"dimension": "latency", "severity": "block" if status == "fail" else "warn",
         "status": status, "observed": 401.0, "threshold": 300,
         "reason": "latency max_avg_ms 401 > 300"},
        {"dimension": "pass_rate", "severity": "block", "status": "pass", "observed": 1.0,
         "threshold": 0.9, "reason": "pass_rate 1 >= 0.9"},
    ]
    return PolicyEval(blocked=status == "fail", warned=status == "warn",
                      results=[RuleResult(**r) for r in results])


def policy(status: str) -> Outcome:
    o = passed()
    o.policy_eval = _policy(status)
    return o


def hostile() -> Outcome:
    long = (HOSTILE + " \u202eevil https://evil.example www.evil.example ") * 30
    rows = [_row(i, False, long if i % 2 else HOSTILE) for i in range(3)]
    for n, r in enumerate(rows):
        r["input"], r["expectedOutput"], r["reason"] = HOSTILE, "`$5` | <b>", HOSTILE
        r["datasetVersionItemId"] = f"it_<b>|{n}"
    regs = [{"itemId": rows[0]["datasetVersionItemId"], "before": "pass", "after": "fail"}]
    return _outcome(_run(rows, versionLabel="@octocat #1 ::error::x"),
                    _gate(False, 0.0, 1, [HOSTILE]), comparison={"regressions": regs})


def many_failures() -> Outcome:
    return regressions(25)


LONG_PROMPT = ("Hello, I ordered a pair of trail running shoes (order 5512) three weeks ago and "
               "they arrived with a torn sole; the courier also left them in the rain, the box "
               "was soaked, and the invoice at https://shop.example/orders/5512/invoice?token="
               "a1b2c3d4e5f6a7b8c9d0 says I paid $129.99 including shipping. ") * 3
LONG_ANSWER = ("Thank you for reaching out, and I am sorry to hear about the trouble with your "
               "order. I have looked at the order history, the courier's delivery notes and the "
               "photos you attached. Our returns policy covers damaged goods for 30 days after "
               "delivery, so you are well inside that window. I have started the return and a "
               "prepaid label is on its way to your inbox. Once the courier scans the parcel we "
               "will refund $12.99 to the original payment method within five working days. "
               "Reference: RMA-0000000000000000000000000000000000000042.")


def long_inputs() -> Outcome:
    """Long prompts and answers: the amount the judge checked sits deep in the answer."""
    rows = [_row(i, False, LONG_ANSWER) for i in range(3)]
    for r in rows:
        r["input"], r["expectedOutput"] = LONG_PROMPT, "$129.99"
        r["reason"] = "correctness: refunded '$12.99' where '$129.99' was due"
        r["scores"]["refund_amount_matches_the_invoice_total_exactly"] = 0.1
    rows[2]["datasetVersionItemId"] = "it_refunds_damaged_goods_" + "0123456789" * 5
    regs = [{"itemId": "it_1", "before": "pass", "after": "fail"}]
    return _outcome(_run(rows, status="completed_with_regressions"),
                    _gate(False, 0.0, 1, ["regressions 1 > max_regressions 0"]),
                    invocations=_invs(3), comparison={"regressions": regs, "newPasses": [],
                                                      "baseline": BASE})


def same_way() -> Outcome:
    """30 regressions failing one judge the same way, 3 agent time-outs, 2 failing as before."""
    rows = [_row(i, False, f"Sorry, I cannot refund order {i}.") for i in range(35)]
    for i in range(30, 33):
        rows[i].update(passed=None, score=None, scores={}, reason="", output=None,
                       error="no trace captured", captured=False)
    regs = [{"itemId": f"it_{i + 1}", "before": "pass", "after": "fail"} for i in range(30)]
    invs = _invs(35)
    for inv in invs[30:33]:
        inv.returncode, inv.timed_out, inv.error = None, True, "timed out after 60s"
    return _outcome(_run(rows, status="completed_with_regressions"),
                    _gate(False, 0.0, 30, ["regressions 30 > max_regressions 0"]),
                    invocations=invs, comparison={"regressions": regs, "newPasses": [],
                                                  "baseline": BASE})


JUDGES = ("correctness", "tone", "policy_compliance", "toxicity_safety")


def judge_deltas() -> Outcome:
    """Four judges, each moved against the baseline run's own per-judge rollup."""
    rows = []
    for i in range(8):
        scores = {"correctness": 1.0 if i % 2 else 0.2, "tone": 0.9,
                  "policy_compliance": 0.4 if i < 3 else 0.95, "toxicity_safety": 1.0}
        score = sum(scores.values()) / len(scores)
        rows.append({**_row(i, score >= 0.7, f"Refunded {EXPECTED[i % 4]}."),
                     "scores": scores, "score": score, "passed": score >= 0.7,
                     "reason": "" if score >= 0.7 else "policy_compliance: no manager sign-off"})
    failed = [r["datasetVersionItemId"] for r in rows if not r["passed"]]
    regs = [{"itemId": i, "before": "pass", "after": "fail"} for i in failed[:2]]
    passes = [{"itemId": r["datasetVersionItemId"]} for r in rows[5:7]]
    rate = sum(1 for r in rows if r["passed"]) / len(rows)
    o = _outcome(_run(rows, status="completed_with_regressions"),
                 _gate(False, rate, len(regs), [f"regressions {len(regs)} > max_regressions 0"]),
                 invocations=_invs(8), comparison={"regressions": regs, "newPasses": passes,
                                                   "baseline": BASE})
    o.baseline_metrics = Metrics.decode({"runId": "ppr_100", "metrics": [
        {"metricKey": "correctness", "avgScore": 0.8, "passRate": 0.75, "scored": 8},
        {"metricKey": "tone", "avgScore": 0.9, "passRate": 1.0, "scored": 8},
        {"metricKey": "policy_compliance", "avgScore": 0.62, "passRate": 0.5, "scored": 8},
        {"metricKey": "toxicity_safety", "avgScore": 1.0, "passRate": 1.0, "scored": 8}]})
    return o


GITHUB_ENV = {"GITHUB_ACTIONS": "true", "GITHUB_SERVER_URL": "https://github.com",
              "GITHUB_REPOSITORY": "o/r", "GITHUB_RUN_ID": "9"}
UI_URL = "https://app.example/runs/{run_id}?item={item_id}"


def _eval(make: Callable[[], Outcome]) -> Callable[[], Report]:
    """Built as the pipeline does: the report, then its links (ui-url) and CI context."""
    def build() -> Report:
        outcome = make()
        base = outcome.gate.baseline if outcome.gate is not None else None
        run_id = base.run_id if base is not None and base.kind == "preprod_run" else ""
        return attach(build_eval_report(outcome), ui_url=UI_URL, environ=GITHUB_ENV,
                      baseline_run_id=run_id or None)
    return build


SUITE = {"id": "sts_1", "name": "Refund attacks", "status": "ready",
         "datasetVersionId": "ds_sts_1-v2",
         "scenarios": [{"id": f"sc_{i}", "input": PROMPTS[i % 4], "strategy": "replay",
                        "failure_mode_id": "fm_refund", "failure_mode_name": "Wrong refund",
                        "expected_output": "must state the amount"} for i in range(4)]}


def stress() -> Report:
    o = regressions(2)
    o.mode, o.suite = "stress", Suite.decode(copy.deepcopy(SUITE))
    raw = copy.deepcopy(dict(o.run.raw)) if o.run else {}
    for i, row in enumerate(raw["items"]):
        row["datasetVersionItemId"] = f"sc_{i}"
    o.run = Run.decode(raw)
    o.comparison = None
    return build_stress_report(o)


def _arm(label: str, rate: float | None, usd: float | None) -> dict:
    return {"armId": label, "label": label, "model": f"model-{label}",
            "quality": {"rate": rate, "passes": 9, "n": 10},
            "cost": {"costPerCaseUsd": usd, "priced": usd is not None}}


def sweep(kind: str) -> Report:
    arms = [_arm("small", 0.9, 0.0000021), _arm("big", 0.95, 0.0000336),
            _arm("unpriced-very-long-arm-label", 0.5, None)]
    verdict = ({"outcome": "winner", "winner": "small", "reason": "cheapest arm above the bar"}
               if kind != "no_winner" else {"outcome": "no_winner", "reason": "no arm cleared"})
    comparison = {"sweepId": "msw_1", "status": "completed", "comparable": True,
                  "bar": {"passRate": 0.85, "source": "query"},
                  "baseline": {"armId": "big", "label": "big"}, "itemCount": 10, "passK": 1,
                  "arms": arms, "verdict": verdict}
    if kind == "self":
        comparison["arms"] = [_arm("big", 0.95, 0.0000336), _arm("big-again", 0.95, 0.0000336)]
        comparison["warnings"] = ["the arms use the same model: the sweep compares a model "
                                  "with itself"]
    o = sweep_outcome(command="decide", sweep_id="msw_1", comparison=comparison,
                     require_winner=kind == "no_winner",
                     sweep={"id": "msw_1", "status": "completed", "name": "models"})
    o.exit_code, o.build_verdict = (1, "blocked") if kind == "no_winner" else (0, "passed")
    return build_sweep_report(o)


def shard(step: str) -> Report:
    o = Outcome(mode=step, run_id="ppr_300", base_url="http://127.0.0.1:8080",
                created=True, shard=ShardInfo(index=1, total=3))
    return build_create_report(o) if step == "create" else build_shard_report(o)


CASES: dict[str, Callable[[], Report]] = {
    "pass": _eval(passed),
    "regressions": _eval(regressions),
    "agent_crashed": _eval(lambda: _agents("crashed")),
    "agent_timed_out": _eval(lambda: _agents("timed_out")),
    "agent_no_trace": _eval(lambda: _agents("no_trace")),
    "not_compared": _eval(not_compared),
    "no_gate_waiver": _eval(no_gate),
    "error_bad_key": _eval(error("Neens refused the API key: check --api-key / NEENS_API_KEY: "
                                 "a nk_live_… project key (HTTP 401 Unauthorized: invalid "
                                 "API key; POST /preprod-evals)")),
    "error_unreachable": _eval(error("could not reach Neens at http://127.0.0.1:9: connection "
                                     "refused (POST /preprod-evals)")),
    "error_unknown_dataset": _eval(error("Neens found no such resource: dataset ds_nope not "
                                         "found (HTTP 404 Not Found; POST /preprod-evals)")),
    "error_bad_input": lambda: bad_input_report("concurrency", "must be a whole number, "
                                                "got 'many'"),
    "error_empty_key": lambda: bad_input_report("api-key", EMPTY_KEY),
    "push": _eval(push),
    "push_connection_down": _eval(lambda: push(down=True)),
    "eval_gates": _eval(eval_gates),
    "gates_only": _eval(lambda: eval_gates(gates_only=True)),
    "policy_block": _eval(lambda: policy("fail")),
    "policy_warn": _eval(lambda: policy("warn")),
    "hostile": _eval(hostile),
    "many_failures": _eval(many_failures),
    "long_inputs": _eval(long_inputs),
    "same_way": _eval(same_way),
    "judge_deltas": _eval(judge_deltas),
    "stress": stress,
    "sweep": lambda: sweep("winner"),
    "sweep_no_winner": lambda: sweep("no_winner"),
    "sweep_self": lambda: sweep("self"),
    "shard_create": lambda: shard("create"),
    "shard_finish": lambda: build_eval_report(regressions(1)),
}
