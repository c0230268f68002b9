"""The pieces of the report at a glance: answers cut around what the judge checked, failing
items grouped by how they failed, one line per judge beside the baseline's rollup."""

from __future__ import annotations

from neens_action.api.comparison import Comparison, Metrics
from neens_action.report.build.groups import failure_groups
from neens_action.report.build.judges import judge_summaries
from neens_action.report.model import ItemVerdict, JudgeScore
from neens_action.report.render.cut import around, focus_of
from neens_action.report.render.md_items import cell

ANSWER = ("I am sorry about the trouble. " * 8 + "We will refund $12.99 to your card. "
          + "Thanks for your patience. " * 6)


def test_an_answer_is_cut_around_the_value_the_judge_quoted() -> None:
    focus = focus_of("correctness: refunded '$12.99' where '$129.99' was due", "$129.99",
                     ANSWER)
    assert focus == ["$12.99"]
    cut = around(ANSWER, 120, focus)
    assert "$12.99" in cut and cut.startswith("…") and cut.endswith("…")
    assert len(cut) <= 122


def test_without_a_focus_an_answer_ends_at_a_sentence() -> None:
    cut = around(ANSWER, 100)
    assert cut.endswith(". …") and "$12.99" not in cut
    assert around("short answer", 100) == "short answer"


def test_a_cell_shows_a_url_as_code_and_breaks_long_words() -> None:
    text = cell("see https://example.com/" + "a" * 80 + " and " + "x_" * 30, 400)
    assert "`https://example.com/" in text and "[" not in text  # code, never a link
    assert "\u200b" not in text.split("`")[1]  # nothing invisible inside the URL
    assert "\u200b" in text.split("`")[-1]  # the long word can wrap


def _item(key: str, status: str, *judges: tuple[str, bool], reason: str = "") -> ItemVerdict:
    return ItemVerdict(key, "", "fail" if status else "pass", status=status, reason=reason,
                       judges=[JudgeScore(n, 1.0 if ok else 0.0, ok) for n, ok in judges])


def test_items_failing_the_same_judges_the_same_way_are_one_group() -> None:
    items = [*(_item(f"r{i}", "regressed", ("a", False), ("b", True)) for i in range(30)),
             _item("f1", "failing", ("a", False), ("b", True)),
             _item("x1", "agent_failed", reason="agent timed out (after 60 s)"),
             _item("x2", "agent_failed", reason="agent timed out (after 90 s)"),
             _item("ok", "", ("a", True), ("b", True))]
    groups = failure_groups(items)
    assert [(g.status, g.failing, g.why, len(g.items)) for g in groups] == [
        ("regressed", ["a"], "", 30), ("agent_failed", [], "agent timed out", 2),
        ("failing", ["a"], "", 1)]


def test_judge_lines_count_and_compare_with_the_baseline_rollup() -> None:
    items = [_item("r1", "regressed", ("a", False), ("b", True)),
             _item("n1", "", ("a", True), ("b", True)),
             _item("p1", "", ("a", True), ("b", True))]
    cmp = Comparison.decode({"regressions": [{"itemId": "r1"}], "newPasses": [{"itemId": "n1"}]})
    base = Metrics.decode({"metrics": [{"metricKey": "a", "avgScore": 0.9, "passRate": 1.0}]})
    a, b = judge_summaries(items, comparison=cmp, baseline=base)
    assert (a.name, a.scored, a.passed, a.regressed, a.improved) == ("a", 3, 2, 1, 1)
    assert a.baseline_pass_rate == 1.0 and a.baseline_average == 0.9
    assert b.baseline_pass_rate is None and b.regressed == 0
    unknown = judge_summaries(items)[0]  # no comparison: nothing said about either
    assert unknown.regressed is None and unknown.improved is None
