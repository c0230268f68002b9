"""One line per judge (scorer) over a run: how many items it passed, its mean score, and the
same figures of the baseline run when the baseline's metrics rollup was fetched; with the
comparison, how many items it helped improve and how many regressed items it failed.

Computed once from the report's items (every item of the run: a digested run, which keeps only
the first items that did not pass, gets no summary: its figures would be wrong).
"""

from __future__ import annotations

from neens_action.api.comparison import Comparison, Metrics
from neens_action.outcome import Outcome
from neens_action.report.build.groups import failure_groups
from neens_action.report.fmt import finite
from neens_action.report.model import ItemVerdict, JudgeSummary, Report


def judge_summaries(items: list[ItemVerdict], *, comparison: Comparison | None = None,
                    baseline: Metrics | None = None) -> list[JudgeSummary]:
    """The judges in the order they first appear on an item."""
    order: dict[str, JudgeSummary] = {}
    totals: dict[str, tuple[float, int]] = {}
    new_passes = set(comparison.new_passes) if comparison is not None and \
        comparison.new_passes is not None else None
    compared = comparison is not None and comparison.regressions is not None
    for item in items:
        for judge in item.judges:
            line = order.get(judge.name)
            if line is None:
                line = order[judge.name] = JudgeSummary(judge.name, 0, 0, None)
                line.improved = 0 if new_passes is not None else None
                line.regressed = 0 if compared else None
            if judge.passed is not None:
                line.scored += 1
                line.passed += judge.passed is True
            if judge.score is not None:
                total, n = totals.get(judge.name, (0.0, 0))
                totals[judge.name] = (total + judge.score, n + 1)
            if line.regressed is not None and item.status == "regressed" \
                    and judge.passed is False:
                line.regressed += 1
            if new_passes is not None and line.improved is not None \
                    and item.item_id in new_passes and judge.passed is True:
                line.improved += 1
    for name, line in order.items():
        total, n = totals.get(name, (0.0, 0))
        line.average = total / n if n else None
        if baseline is not None:
            line.baseline_pass_rate = finite(baseline.pass_rates.get(name))
            line.baseline_average = finite(baseline.averages.get(name))
    return list(order.values())


def attach_glance(report: Report, outcome: Outcome) -> None:
    """The per-judge lines and the failure groups of a report holding every item."""
    if report.items_total is not None:
        return  # digested: only the first failing items are here
    report.judges = judge_summaries(report.items, comparison=outcome.comparison,
                                    baseline=outcome.baseline_metrics)
    report.groups = failure_groups(report.items)
