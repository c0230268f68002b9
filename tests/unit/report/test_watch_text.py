"""The watch terminal output (spec 10.5), line by line."""

from __future__ import annotations

from neens_action.report.build.watch_diff import ItemState, diff_items
from neens_action.report.render.watch_text import (
    IterationView,
    banner,
    changed_line,
    gate_line,
    iteration_header,
    metrics_line,
    result_lines,
)


def test_banner_continuous_and_once():
    lines = banner(file_count=12, roots=["."], dataset="ds_refunds", label="local",
                   max_iterations=3, once=False)
    assert lines[0] == "neens eval watch: watching 12 file(s) under ."
    assert lines[1] == "  dataset ds_refunds · label local"
    assert "  at most 3 iteration(s)" in lines
    assert any("costs judge tokens" in line for line in lines)
    assert lines[-1] == "Press Ctrl-C to stop."
    once = banner(file_count=1, roots=["a", "b"], dataset="d", label="l", max_iterations=None,
                  once=True)
    assert "Press Ctrl-C to stop." not in once
    assert not any("at most" in line for line in once)
    assert once[0].endswith("under a, b")


def test_banner_warns_on_big_and_capped_trees():
    big = banner(file_count=6000, roots=["."], dataset="d", label="l", max_iterations=None,
                 once=False)
    assert any("WARNING: 6000 files" in line for line in big)
    capped = banner(file_count=50000, roots=["."], dataset="d", label="l",
                    max_iterations=None, once=False, capped=True)
    assert any("stopped scanning at 50000" in line for line in capped)


def test_iteration_header_pads_to_forty():
    assert iteration_header(3, "abc") == "── iteration 3 · abc " + "─" * 37
    long = "x" * 50
    assert iteration_header(1, long) == f"── iteration 1 · {long} "


def test_changed_line():
    assert changed_line([]) is None
    assert changed_line(["a.py"]) == "  changed: a.py"
    assert changed_line(["a", "b", "c", "d", "e"]) == "  changed: a, b, c (+2 more)"


def test_gate_line():
    assert gate_line("PASSED", 0) == "  gate: PASSED · exit 0"
    assert gate_line("FAILED", 1, ("PASSED", 2)) == "  gate: FAILED (was PASSED at #2) · exit 1"


def test_metrics_line_with_and_without_deltas():
    m = {"passRate": 0.9333, "avgScore": 0.812, "passed": 14, "failed": 1, "errored": 0,
         "regressions": 0}
    d = {"passRate": 0.0667, "avgScore": 0.02, "passed": 1, "failed": -1, "errored": 0,
         "regressions": 0}
    assert metrics_line(m, d) == (
        "  pass rate 93.3% (+6.7 pts) · avg score 0.812 (+0.020) · passed 14 (+1) · "
        "failed 1 (-1) · errored 0 (+0) · regressions 0 (+0)"
    )
    assert metrics_line(m, None) == (
        "  pass rate 93.3% · avg score 0.812 · passed 14 · failed 1 · errored 0 · regressions 0"
    )
    partial = dict(m, regressions=None, avgScore=None)
    line = metrics_line(partial, dict(d, regressions=None))
    assert "regressions n/a" in line and "avg score n/a" in line
    # a tiny negative delta never prints as -0.0
    assert "(+0.0 pts)" in metrics_line(m, dict(d, passRate=-0.0001))


def test_first_scored_iteration_lists_non_passing_items():
    states = {
        "it_1": ItemState("it_1", "pass", "fine"),
        "it_2": ItemState("it_2", "fail", "Refund for\norder 7?"),
        "it_3": ItemState("it_3", "unscored", "q3", "no trace captured"),
    }
    lines = result_lines(IterationView(number=1, exit_code=1, status="FAILED",
                                       metrics={"passRate": 1 / 3}, states=states))
    assert lines[0] == "  gate: FAILED · exit 1"
    assert lines[1].startswith("  pass rate 33.3% · ")
    assert lines[2] == "  3 item(s), 2 not passing — baseline for the next diff"
    assert lines[3] == '    ✗ it_2  fail  "Refund for order 7?"'
    assert lines[4] == '    ✗ it_3  unscored  "q3" — no trace captured'


def test_diff_block_lists_newly_failing_and_passing():
    prev = {"a": ItemState("a", "pass", "A"), "b": ItemState("b", "fail", "B"),
            "c": ItemState("c", "fail", "C"), "d": ItemState("d", "pass", "D"),
            "gone": ItemState("gone", "pass", "G")}
    cur = {"a": ItemState("a", "fail", "A", "judge said no"), "b": ItemState("b", "pass", "B"),
           "c": ItemState("c", "fail", "C"), "d": ItemState("d", "pass", "D"),
           "new": ItemState("new", "pass", "N")}
    view = IterationView(number=3, exit_code=1, status="FAILED", previous=("PASSED", 2),
                         metrics={}, states=cur, diff=diff_items(prev, cur), compared_to=2)
    lines = result_lines(view)
    assert lines[0] == "  gate: FAILED (was PASSED at #2) · exit 1"
    assert lines[2:] == [
        "  vs iteration #2:",
        "    ▼ newly failing: 1",
        '        ▼ a  pass → fail  "A" — judge said no',
        "    ▲ newly passing: 1",
        '        ▲ b  fail → pass  "B"',
        "    ✗ still failing: 1",
        "    = unchanged passing: 1",
        "    + only in this run (not in the previous one): 1",
        "    - missing from this run (present in the previous one): 1",
    ]


def test_diff_block_caps_long_lists():
    prev = {f"i{n}": ItemState(f"i{n}", "pass") for n in range(30)}
    cur = {f"i{n}": ItemState(f"i{n}", "fail") for n in range(30)}
    lines = result_lines(IterationView(number=2, exit_code=1, status="FAILED",
                                       diff=diff_items(prev, cur), compared_to=1, states=cur))
    assert "        … and 5 more" in lines
    assert sum(1 for line in lines if line.startswith("        ▼ ")) == 25


def test_errored_iteration():
    lines = result_lines(IterationView(number=4, exit_code=2, status="ERROR",
                                       error="scoring timed out\nafter 5s"))
    assert lines == [
        "  gate: ERROR · exit 2",
        "  ✗ iteration 4 errored: scoring timed out after 5s",
        "    (the watcher keeps going — save a file to retry)",
    ]
    last = result_lines(IterationView(number=4, exit_code=2, status="ERROR", error="x",
                                      continuing=False))
    assert last[-1] == "  ✗ iteration 4 errored: x"
