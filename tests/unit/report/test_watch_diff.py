"""Iteration diff, metrics and the --json record of neens eval watch (spec 7.3, 10.7)."""

from __future__ import annotations

import json

from neens_action.api.answers import Gate, ItemRow, Run
from neens_action.report.build.watch_diff import (
    DIFF_KEYS,
    ItemState,
    deltas,
    diff_items,
    item_states,
    iteration_record,
    metrics,
    one_line,
)


def run_with(*items: object) -> Run:
    return Run.decode({"id": "ppr_1", "status": "completed", "items": list(items)})


def states_of(run: dict | None, rows: list | None = None) -> dict:
    return item_states(None if run is None else Run.decode(run),
                       None if rows is None else [ItemRow.decode(r) for r in rows])


def metrics_of(run: dict | None, gate: dict | None) -> dict:
    return metrics(None if run is None else Run.decode(run),
                   None if gate is None else Gate.decode(gate))


def test_item_states_from_run_items_in_order():
    run = run_with(
        {"datasetVersionItemId": "b", "input": "B?", "passed": True},
        {"datasetVersionItemId": "a", "input": "A?", "passed": False, "error": None},
        {"datasetVersionItemId": "c", "input": "C?", "passed": None, "error": "no trace captured"},
    )
    states = item_states(run)
    assert list(states) == ["b", "a", "c"]
    assert [s.state for s in states.values()] == ["pass", "fail", "unscored"]
    assert states["c"].error == "no trace captured"
    assert states["a"].error is None


def test_item_states_fall_back_to_e3_rows_as_unscored():
    rows = [{"item_id": "x", "input": "X"}, {"itemId": "y", "input": "Y"}]
    states = states_of({"id": "ppr_1"}, rows)
    assert {k: v.state for k, v in states.items()} == {"x": "unscored", "y": "unscored"}
    assert states_of(None, None) == {}


def test_item_states_skip_rows_without_id_and_duplicates():
    run = run_with({"input": "no id"}, {"item_id": "a", "passed": True},
                   {"item_id": "a", "passed": False}, "junk")
    assert {k: v.state for k, v in item_states(run).items()} == {"a": "pass"}


def test_metrics_prefer_gate_pass_rate_and_read_null_regressions():
    run = {"aggregate": {"passRate": 0.5, "avgScore": 0.61, "passed": 2, "failed": 1,
                         "errored": 1, "regressions": 3}}
    m = metrics_of(run, {"passed": False, "passRate": 0.75, "regressions": None})
    assert m == {"passRate": 0.75, "avgScore": 0.61, "passed": 2, "failed": 1, "errored": 1,
                 "regressions": None}
    # no regressions key on the gate: the aggregate's count
    assert metrics_of(run, {})["regressions"] == 3
    assert metrics_of(run, {})["passRate"] == 0.5
    # run-level fallback
    assert metrics_of({"regressions": 2}, None)["regressions"] == 2
    assert metrics_of(None, None) == dict.fromkeys(
        ("passRate", "avgScore", "passed", "failed", "errored", "regressions"))


def test_metrics_ignore_non_numbers():
    run = {"aggregate": {"passRate": "high", "passed": True, "avgScore": float("nan")}}
    m = metrics_of(run, {})
    assert m["passRate"] is None and m["passed"] is None and m["avgScore"] is None


def test_deltas():
    before = {"passRate": 0.8, "avgScore": 0.7, "passed": 4, "failed": 1, "errored": 0,
              "regressions": None}
    after = {"passRate": 0.6, "avgScore": 0.75, "passed": 3, "failed": 2, "errored": 0,
             "regressions": 1}
    d = deltas(before, after)
    assert d is not None
    assert round(d["passRate"], 6) == -0.2
    assert round(d["avgScore"], 6) == 0.05
    assert (d["passed"], d["failed"], d["errored"], d["regressions"]) == (-1, 1, 0, None)
    assert deltas(None, after) is None


def test_diff_classifies_every_item():
    prev = {
        "p2p": ItemState("p2p", "pass", "kept"),
        "p2f": ItemState("p2f", "pass", "broke"),
        "p2u": ItemState("p2u", "pass", "lost trace"),
        "f2p": ItemState("f2p", "fail", "fixed"),
        "u2p": ItemState("u2p", "unscored", "captured now"),
        "f2f": ItemState("f2f", "fail", "still"),
        "gone": ItemState("gone", "pass", "removed"),
    }
    cur = {
        "p2p": ItemState("p2p", "pass", "kept"),
        "p2f": ItemState("p2f", "fail", "broke"),
        "p2u": ItemState("p2u", "unscored", "lost trace", "no trace captured"),
        "f2p": ItemState("f2p", "pass", "fixed"),
        "u2p": ItemState("u2p", "pass", "captured now"),
        "f2f": ItemState("f2f", "fail", "still"),
        "new": ItemState("new", "fail", "added"),
    }
    d = diff_items(prev, cur)
    ids = {k: [c.item_id for c in v] for k, v in d.groups().items()}
    assert ids == {
        "newlyFailing": ["p2f", "p2u"],
        "newlyPassing": ["f2p", "u2p"],
        "stillFailing": ["f2f"],
        "unchangedPassing": ["p2p"],
        "onlyInCurrent": ["new"],
        "onlyInPrevious": ["gone"],
    }
    lost = d.newly_failing[1]
    assert (lost.before, lost.after, lost.error) == ("pass", "unscored", "no trace captured")
    assert (d.only_in_current[0].before, d.only_in_previous[0].after) == ("absent", "absent")
    js = d.to_json()
    assert list(js) == list(DIFF_KEYS)
    assert js["newlyFailing"][0] == {"itemId": "p2f", "label": "broke", "before": "pass",
                                     "after": "fail", "error": None}


def test_one_line_strips_control_characters_and_truncates():
    assert one_line("a\nb\tc  \x1b[31mred\x1b[0m", 100) == "a b c [31mred [0m"
    assert one_line("x" * 70, 60) == "x" * 59 + "…"
    assert len(one_line("y" * 61, 60)) == 60
    assert one_line("short", 60) == "short"


def test_iteration_record_is_compact_json_with_documented_keys():
    d = diff_items({"a": ItemState("a", "pass")}, {"a": ItemState("a", "fail", "q")})
    rec = iteration_record(
        iteration=2, run_id="ppr_2", version_label="local-watch.20250101T000000.2",
        exit_code=1, gate_passed=False, policy_blocked=None, error=None, trigger=["app.py"],
        metrics={"passRate": 0.0}, compared_to=1, deltas={"passRate": -1.0}, diff=d,
    )
    assert list(rec) == ["iteration", "runId", "versionLabel", "exitCode", "gatePassed",
                         "policyBlocked", "error", "trigger", "metrics", "comparedTo", "deltas",
                         "diff"]
    assert rec["diff"]["newlyFailing"][0]["itemId"] == "a"
    json.dumps(rec)  # serialisable
    none = iteration_record(
        iteration=1, run_id="", version_label="l", exit_code=2, gate_passed=None,
        policy_blocked=None, error="boom", trigger=[], metrics=None, compared_to=None,
        deltas=None, diff=None,
    )
    assert none["diff"] is None and none["error"] == "boom"
