"""Hand-made reports for the renderer and publisher tests (pass, fail, error, no baseline,
hostile text). Built directly from the model so renderers are tested on their own."""

from __future__ import annotations

from neens_action.report.model import Chart, ItemVerdict, PolicyLine, Report, Table

RUN_URL = "https://app.example/runs/ppr_123"

HOSTILE = (
    "| a | b |<script>alert(1)</script> @octocat #12 ::error::pwned `rm -rf` **bold** "
    "[x](https://evil.example) <!-- --> \n::set-output name=x::y & café ☕ 𝔘"
)


def _gates_table(verdict: str = "PASS") -> Table:
    return Table(
        title="Eval gates",
        columns=["GATE", "ENFORCED", "PASS RATE", "THRESHOLD", "SCORED", "VERDICT"],
        rows=[["FM: Wrong refund amount", "yes", "100%" if verdict == "PASS" else "33%", "70%",
               "3/3", verdict]],
        footer="1/1 passed" if verdict == "PASS" else "0/1 passed, 1 enforced gate(s) failing",
    )


def passed() -> Report:
    return Report(
        kind="eval",
        title="Pre-prod eval ppr_123",
        verdict="passed",
        exit_code=0,
        headline="The gate passed: 3/3 items passed, 0 regressions.",
        run_id="ppr_123",
        run_url=RUN_URL,
        facts=[
            ("status", "completed"),
            ("scored", "3/3"),
            ("regressions", "0"),
            ("baseline", "run ppr_100 — branch:main: newest completed run on branch 'main'"),
            ("pass rate", "100.00%"),
            ("gate", "PASSED"),
        ],
        tables=[_gates_table("PASS")],
        items=[
            ItemVerdict("it_1", "Refund for order 42 ($42.00)?", "pass", 1.0, duration_s=0.5),
            ItemVerdict("it_2", "Refund for order 7 ($7.50)?", "pass", 0.9, duration_s=0.25),
            ItemVerdict("g_1", "Refund me for order 9", "pass", 0.8,
                        suite="FM: Wrong refund amount"),
        ],
        outputs={"exit-code": "0", "verdict": "passed", "run-id": "ppr_123",
                 "pass-rate": "1.0", "regressions": "0"},
    )


def failed() -> Report:
    return Report(
        kind="eval",
        title="Pre-prod eval ppr_124",
        verdict="blocked",
        exit_code=1,
        headline="The gate failed: 1 regression, pass rate 33.33% below 90.00%.",
        run_id="ppr_124",
        run_url="https://app.example/runs/ppr_124",
        facts=[
            ("status", "completed_with_regressions"),
            ("scored", "2/3"),
            ("regressions", "1"),
            ("baseline", "run ppr_100 — branch:main"),
            ("pass rate", "33.33%"),
            ("gate", "FAILED"),
        ],
        reasons=["regressions 1 > max_regressions 0", "pass rate 0.3333 < min_pass_rate 0.9"],
        gate_passed=False,
        tables=[_gates_table("FAIL")],
        policy=[
            PolicyLine("max_abs_failures", "block", "fail", "2", "1", "2 failures > 1"),
            PolicyLine("latency", "warn", "warn", "3400 ms", "3000 ms", "avg latency too high"),
            PolicyLine("cost", "warn", "skipped", "n/a", "$0.05", "unpriced: gpt-x"),
        ],
        items=[
            ItemVerdict("it_1", "Refund for order 42 ($42.00)?", "pass", 1.0, duration_s=1.0),
            ItemVerdict("it_2", "Refund for order 7 ($7.50)?", "fail", 0.25,
                        reason="correctness: expected '$7.50' in the output", duration_s=2.0),
            ItemVerdict("it_3", "Cancel my subscription", "unscored", None,
                        reason="no trace captured"),
        ],
        outputs={"exit-code": "1", "verdict": "blocked", "run-id": "ppr_124",
                 "pass-rate": "0.3333", "regressions": "1"},
    )


def errored() -> Report:
    return Report(
        kind="eval",
        title="Pre-prod eval ppr_125",
        verdict="errored",
        exit_code=2,
        headline="Run error: scoring did not finish within the poll timeout (1800 s).",
        run_id="ppr_125",
        run_url="",
        facts=[("status", "running"), ("scored", "1/3")],
        error="scoring did not finish within the poll timeout (1800 s)",
        outputs={"exit-code": "2", "verdict": "errored", "run-id": "ppr_125",
                 "pass-rate": "", "regressions": ""},
    )


def no_baseline() -> Report:
    r = passed()
    r.title = "Pre-prod eval ppr_126"
    r.run_id = "ppr_126"
    r.run_url = "https://app.example/runs/ppr_126"
    r.verdict = "warned"
    r.headline = "The gate passed, but nothing was compared with a baseline."
    r.facts = [
        ("status", "completed"),
        ("scored", "3/3"),
        ("regressions", "not compared (no baseline)"),
        ("pass rate", "100.00%"),
        ("gate", "PASSED"),
    ]
    r.tables = []
    r.warnings = ["the baseline matched 0 of 3 item(s) — regressions were not compared"]
    return r


def hostile(n_items: int = 40, size: int = 5000) -> Report:
    long_text = (HOSTILE + " ") * (size // len(HOSTILE) + 1)
    items = [
        ItemVerdict(f"it_{i}|<b>", long_text if i % 2 else HOSTILE, "fail", 0.1,
                    reason=HOSTILE, suite="FM: <img src=x> | @team")
        for i in range(n_items)
    ]
    return Report(
        kind="eval",
        title="Pre-prod eval ppr_<b>x</b> @octocat",
        verdict="blocked",
        exit_code=1,
        headline=HOSTILE,
        run_id="ppr_127",
        run_url="javascript:alert(1)",
        facts=[("status", "completed"), ("note", HOSTILE)],
        reasons=[HOSTILE],
        warnings=[HOSTILE],
        tables=[Table("Gates | <x>", ["GATE", "VERDICT"], [[HOSTILE, "FAIL"]], footer=HOSTILE)],
        policy=[PolicyLine("metric[`x`]", "block", "fail", HOSTILE, "0.9", HOSTILE)],
        items=items,
        charts=[Chart("Pass rate <x>", ["arm \"a\"", "arm `b`"], {"rate": [0.5, None]}, "%")],
    )
