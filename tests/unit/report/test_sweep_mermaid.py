"""``chart_to_mermaid``: an xychart-beta bar chart, golden tested, safe against hostile labels."""

from __future__ import annotations

from neens_action.api.sweep_comparison import SweepComparison
from neens_action.report.build.sweep import arm_charts
from neens_action.report.model import Chart
from neens_action.report.render.mermaid import chart_to_mermaid, mermaid_text
from tests.unit.report.golden_util import check_golden
from tests.unit.report.test_sweep_report import SPEC_COMPARISON


def test_sweep_charts_golden():
    rate, cost = arm_charts(SweepComparison.decode(SPEC_COMPARISON).arms)
    text = chart_to_mermaid(rate) + "\n" + chart_to_mermaid(cost)
    check_golden("sweep_charts.mmd", text)
    assert chart_to_mermaid(rate).splitlines() == [
        "xychart-beta",
        '    title "Pass rate per arm"',
        '    x-axis ["big", "small"]',  # no data: left out, never drawn as 0
        '    y-axis "%" 0 --> 100',
        "    bar [96, 90]",
    ]
    assert chart_to_mermaid(cost).splitlines()[3:] == [
        '    y-axis "USD" 0 --> 0.00462',
        "    bar [0.0042, 0.0009]",
    ]


def test_hostile_labels_cannot_leave_the_string_or_the_fence():
    chart = Chart(title='t"```\n%%{init}', labels=['a"b', "c`d", "e]f[g", "x\ny", "<b>"],
                  series={"s": [1.0, None, float("nan"), 2, 3]}, unit="USD")
    text = chart_to_mermaid(chart)
    body = text.split('x-axis [', 1)[1].split("]\n", 1)[0]
    assert body == '"a_b", "e_f_g", "x y", "_b_"'  # c`d has no value: not drawn
    assert "`" not in text and "%%" not in text and "{" not in text
    assert "bar [1, 0, 2, 3]" in text


def test_long_labels_are_cut_and_missing_series_values_padded():
    assert mermaid_text("x" * 100) == "x" * 37 + "..."
    chart = Chart(title="t", labels=["a", "b"], series={"one": [1.0], "two": [2.0, 3.0]})
    lines = chart_to_mermaid(chart).splitlines()
    assert lines[-2:] == ["    bar [1, 0]", "    bar [2, 3]"]
    assert lines[3] == '    y-axis "value" 0 --> 3.3'
