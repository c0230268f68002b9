"""NoiseEvidence -> NoiseView: the noise-aware verdict as every surface shows it.

The verdict line says which of the four outcomes and why, in the reviewer's units (percent
and percentage points); regressed, improved and flaky items carry their evidence (k/K now,
n/N on main); every failing item carries its history fact, even at K = 1; the default
branch's trend is oldest first, with a warning when it slid over the window
(:data:`TREND_SLIDE_PP`, written up in docs/noise.md).
"""

from __future__ import annotations

import math
from collections.abc import Iterable

from neens_action.noise.evidence import NoiseEvidence
from neens_action.noise.model import ItemRecord, history_fact
from neens_action.noise.verdict import RunOutcome, RunVerdict
from neens_action.report.fmt import p_value
from neens_action.report.model import (
    NoiseItem,
    NoiseView,
    PolicyLine,
    RepLine,
    Report,
    TrendPoint,
)

TREND_SLIDE_PP = 5.0  # warn when main's newest run passes this many points below its oldest
TREND_MIN_RUNS = 3  # ...over a window of at least this many runs (two points are no trend)
ALPHA = 0.05  # the noise verdict's level (neens_action/noise/verdict.py NoiseSettings)


def pct(value: float | None) -> str:
    return "n/a" if value is None else f"{100 * value:.1f} %"


def _runs(n: int) -> str:
    return f"{n} run{'s' if n != 1 else ''}"


def _core(v: RunVerdict, *, sees: bool = True) -> str:
    rate = v.pass_rate
    spread = 100 * (rate.high - rate.low) / 2
    text = (f"pass rate {pct(rate.now)} ± {spread:.1f} pp vs main {pct(rate.main)} "
            f"over {_runs(v.history_runs)}")
    if not sees:
        return text
    if v.detectable_drop is None:
        return text + "; this run cannot detect a drop"
    return text + f"; this run detects a drop of {v.detectable_drop:.0f} pp or more"


def _why_inconclusive(v: RunVerdict) -> str:
    if not v.pass_rate.reps_scored:
        return "no item was scored in this run"
    if v.pass_rate.main is None:
        return "no item has a history on main to compare with"
    if v.p_drop <= ALPHA * (1 + 1e-9):
        return (f"the run passes less than main ({p_value(v.p_drop)}) but no item stable on "
                "main is held")
    if v.detectable_drop is None:
        return "too few history runs and repetitions to detect a drop"
    return (f"too few items, repetitions or history runs: a drop under "
            f"{v.detectable_drop:.0f} pp could go unseen")


def verdict_line(v: RunVerdict) -> str:
    """``no change: pass rate 92.1 % ± 1.9 pp vs main 92.4 % over 5 runs; this run detects
    a drop of 4 pp or more`` (the outcome first, then why)."""
    if v.outcome is RunOutcome.INCONCLUSIVE:
        why = _why_inconclusive(v)
        if not v.pass_rate.reps_scored or v.pass_rate.main is None:
            return f"inconclusive: {why}"
        return f"inconclusive: {why}; {_core(v, sees=False)}"
    if v.outcome is RunOutcome.REGRESSED:
        return (f"regressed: {len(v.regressed)} item(s) held regressed "
                f"({p_value(v.p_drop)}); {_core(v)}")
    if v.outcome is RunOutcome.IMPROVED:
        return (f"improved: {len(v.improved)} item(s) held improved "
                f"({p_value(v.p_rise)}); {_core(v)}")
    return f"{v.outcome.value}: {_core(v)}"


def _item(record: ItemRecord) -> NoiseItem:
    return NoiseItem(record.item_id, record.now_passed, record.now_scored, record.main_passed,
                     record.main_runs, record.item_class.value, history_fact(record))


def _items(ids: Iterable[str], by_id: dict[str, ItemRecord]) -> list[NoiseItem]:
    return [_item(by_id[i]) for i in ids if i in by_id]


def trend_warning(points: list[TrendPoint]) -> str:
    """A warning when main's pass rate slid over the window (newest vs oldest run)."""
    rates = [p.pass_rate for p in points if p.pass_rate is not None]
    if len(rates) < TREND_MIN_RUNS:
        return ""
    slide = 100 * (rates[0] - rates[-1])
    if slide < TREND_SLIDE_PP:
        return ""
    return (f"main's pass rate slid {slide:.1f} pp over its last {len(rates)} runs "
            f"({pct(rates[0])} to {pct(rates[-1])}): the baseline itself is getting worse")


def noise_view(evidence: NoiseEvidence, failing: Iterable[str] = ()) -> NoiseView:
    """The view of ``evidence``; ``failing`` names the items that did not pass in the report
    (each gets its history fact, with or without repeats)."""
    v, by_id = evidence.verdict, {r.item_id: r for r in evidence.records}
    trend = [TrendPoint(h.run_id, h.version_label, h.pass_rate)
             for h in reversed(evidence.history)]
    held = {*v.regressed, *v.improved}
    fail_ids = [*v.regressed, *(i for i in failing if i not in held)]
    facts = {i: history_fact(by_id[i]) for i in dict.fromkeys(fail_ids) if i in by_id}
    rules = [PolicyLine(label=r.rule, severity="block", status=r.outcome, observed=r.observed,
                        threshold=r.threshold, reason="")
             for r in evidence.decision.rules]
    reps = [RepLine(r.index, r.run_id, r.status, r.pass_rate, r.gate_passed, r.items_replayed)
            for r in evidence.reps]
    rate = v.pass_rate
    return NoiseView(
        outcome=v.outcome.value, gate=evidence.decision.outcome, line=verdict_line(v),
        repeat=str(evidence.repeat), history_found=len(evidence.history),
        history_requested=evidence.history_requested, history_end=evidence.history_end,
        pass_rate=rate.now, low=rate.low, high=rate.high, main=rate.main,
        detectable_drop=v.detectable_drop,
        regressed=_items(v.regressed, by_id), improved=_items(v.improved, by_id),
        flaky=_items(v.flaky, by_id), facts=facts, rules=rules, trend=trend,
        trend_warning=trend_warning(trend), reps=reps)


HEADLINE = {  # (build verdict, noise gate) -> the headline, when the two agree
    ("passed", "pass"): "Passed: {what} beyond the noise of {evidence}.",
    ("warned", "warn"): "Passed with a warning: the noise-aware verdict is inconclusive.",
    ("blocked", "block"): "Blocked: {what} beyond the noise of {evidence}.",
}


def _what(view: NoiseView) -> str:
    if view.regressed:
        return f"{len(view.regressed)} item(s) regressed"
    if view.improved:
        return f"{len(view.improved)} item(s) improved, no regression"
    return "no regression"


def _regressions(view: NoiseView, raw: str) -> str:
    held = f"{len(view.regressed)} beyond noise"
    if view.repeat == "1" or not raw.isdigit() or raw == str(len(view.regressed)):
        return held
    return f"{held} ({raw} raw in repetition 1)"


def attach_noise(report: Report, evidence: NoiseEvidence) -> None:
    """Put the view on ``report`` and say the run in its terms: the pass rate with its
    interval vs main, the regressions the method holds (the first repetition's raw count
    beside it), a headline that agrees with it; an inconclusive verdict is a caveat (a pass
    never reads as a plain pass), main's slide a warning. The server's reasons about raw
    regressions give way to the noise-aware rule; its other reasons stay."""
    view = noise_view(evidence, (i.item_id for i in report.failed_items))
    report.noise = view
    spread = 100 * (view.high - view.low) / 2
    rate = (f"{pct(view.pass_rate)} ± {spread:.1f} pp vs main {pct(view.main)} "
            f"({_runs(view.history_found)})")
    report.header = [(label, rate if label == "pass rate" else
                      _regressions(view, value) if label == "regressions" else value)
                     for label, value in report.header]
    report.facts = [(label, _regressions(view, value) if label == "regressions" else
                     f"{value}  (noise-aware gate: {view.gate})" if label == "gate" else value)
                    for label, value in report.facts]
    report.reasons = [r for r in report.reasons if "regression" not in r.lower()]
    headline = HEADLINE.get((report.verdict, view.gate))
    if headline and not report.error:
        evidence = ("main's history" if view.repeat == "1" else
                    "repeats and main's history")
        report.headline = headline.format(what=_what(view), evidence=evidence)
    if view.outcome == RunOutcome.INCONCLUSIVE.value:  # the why is in the verdict line
        report.caveats.append("Inconclusive is not a pass: this run could not tell a "
                              "regression from noise. More repetitions or history runs "
                              "would.")
    if view.trend_warning:
        report.warnings.append(view.trend_warning)
