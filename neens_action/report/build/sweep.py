"""The sweep report: one :class:`Report` built from a :class:`SweepOutcome`.

Three shapes, picked by what the outcome holds (docs/sweep.md):

* an **estimate** (``sweep preview``): table ``Estimate``;
* a **verdict** (``sweep decide`` / ``sweep run``): table ``Arm verdicts`` (+ ``Per agent``),
  the server's verdict sentence as the headline, notes in ``reasons``, two charts;
* a **sweep state** (``sweep start`` / ``sweep get``, or ``run`` before any comparison):
  table ``Arms``.

Every cell is pre-formatted here (``95.0% (n=40, CI 83.0-99.0%)``, ``3/3 PASS``,
``$0.000600``, ``unpriced``), so the text, Markdown and JSON renderers agree to the character.
The verdict is the server's: nothing here ranks arms or picks a winner. A void sweep shows no
per-arm number at all.
"""

from __future__ import annotations

from typing import Any

from neens_action.api.sweep_comparison import (
    ComparedArm,
    Cost,
    Quality,
    SweepComparison,
    SweepWarning,
)
from neens_action.api.sweeps import Estimate, Sweep
from neens_action.api.values import real as _num  # a finite number as a float, or None
from neens_action.errors import EXIT_FAILED
from neens_action.outcome import SweepOutcome
from neens_action.report.build.sweep_saving import saving
from neens_action.report.model import Chart, Report, Table
from neens_action.settings.names import phrase
from neens_action.settings.sweep import SWEEP_NAMES
from neens_action.verdict import SWEEP_TERMINAL as TERMINAL
from neens_action.verdict import sweep_verdict

ESTIMATE_TABLE = "Estimate"
ARMS_TABLE = "Arms"
VERDICT_TABLE = "Arm verdicts"
AGENTS_TABLE = "Per agent"
VOID_PREFIX = "VOID: "
NOT_COMPARABLE = (
    "not comparable: the arms did not run under identical conditions, "
    "so no per-arm number is shown and no verdict is read"
)
NO_VERDICT = "no verdict available"
PRICING_HINT = "Set a rate under Settings → Model pricing for a complete figure."
NO_MODEL = "(no model declared)"
DASH = "—"

VERDICT_COLUMNS = ["Arm", "Model", "Pass rate", "Pass^k", "Cost/case", "Regressions"]
ARMS_COLUMNS = ["Arm", "Model", "Status", "Pass^k", "Runs terminal", "Error"]
ESTIMATE_COLUMNS = ["Arm", "Model", "Runs", "Calls", "Cost"]
AGENTS_COLUMNS = ["Agent", "Items", "Verdict"]


# ---------------------------------------------------------------- small formatters (pure)


def _str(value: Any, default: str = "") -> str:
    return default if value is None else str(value)


def _int_text(value: Any, default: str = "?") -> str:
    number = _num(value)
    if number is None:
        return default
    return str(int(number)) if number == int(number) else f"{number:g}"


def pct(rate: Any, digits: int = 1) -> str:
    number = _num(rate)
    return DASH if number is None else f"{number * 100:.{digits}f}%"


def pass_rate_cell(quality: Quality) -> str:
    """``96.0% (n=50, CI 86.3-99.5%)`` or ``no data``."""
    rate = _num(quality.rate)
    if rate is None:
        return "no data"
    parts = []
    if quality.n is not None:
        parts.append(f"n={_int_text(quality.n)}")
    low, high = _num(quality.ci_low), _num(quality.ci_high)
    if low is not None and high is not None:
        parts.append(f"CI {low * 100:.1f}-{high * 100:.1f}%")
    return f"{rate * 100:.1f}%" + (f" ({', '.join(parts)})" if parts else "")


def pass_k_cell(greens: Any, k: Any, passed: Any) -> str:
    """``3/3 PASS``, ``2/3 FAIL``, ``0/3 —``; ``—`` when both numbers are missing."""
    if _num(greens) is None and _num(k) is None:
        return DASH
    mark = "PASS" if passed is True else "FAIL" if passed is False else DASH
    return f"{_int_text(greens)}/{_int_text(k)} {mark}"


def cost_cell(cost: Cost) -> str:
    """``$0.000600``, ``$0.000600 (partial)`` or ``unpriced`` (never ``$0`` for no rate)."""
    value = _num(cost.per_case_usd)
    if cost.priced is False or value is None:
        return "unpriced"
    return f"${value:.6f}" + (" (partial)" if cost.partial else "")


def regressions_cell(count: int | float | None) -> str:
    return DASH if count is None else _int_text(count)


def warning_text(warning: SweepWarning) -> str:
    """A server warning as one string: ``[code]: message (arms: a, b)`` or the plain text."""
    if warning.plain is not None:
        return warning.plain
    message = warning.message or warning.code
    suffix = f" (arms: {', '.join(warning.arms)})" if warning.arms else ""
    return (f"[{warning.code}]: {message}" if warning.code else message) + suffix


def winner_label(comparison: SweepComparison | None) -> str:
    """The label the server named as winner ("" unless ``verdict.outcome == "winner"``)."""
    return "" if comparison is None else comparison.verdict.winner


def is_void(sweep: Sweep | None, comparison: SweepComparison | None) -> bool:
    if comparison is not None and comparison.void:
        return True
    return sweep is not None and sweep.status == "void"


def void_reason(sweep: Sweep | None, comparison: SweepComparison | None) -> str:
    for source in (comparison, sweep):
        if source is not None and source.void_reason:
            return source.void_reason
    return "the arms did not run under identical conditions"


# ---------------------------------------------------------------- the three shapes


def estimate_parts(estimate: Estimate, refusals: list[str]) -> tuple[str, Table, list[str]]:
    """Headline, per-arm table and the lines after it (total / partial / basis / refusals)."""
    headline = (
        f"Estimate: {_int_text(estimate.total_runs)} runs "
        f"({_int_text(estimate.pass_k)} x {_int_text(estimate.item_count)} items per arm), "
        f"{_int_text(estimate.total_calls)} agent calls"
    )
    rows = []
    for arm in estimate.per_arm:
        usd = _num(arm.usd)
        rows.append([
            _str(arm.label), arm.model or NO_MODEL,
            _int_text(arm.runs), _int_text(arm.calls),
            f"${usd:.4f}" if usd is not None else "unpriced",
        ])
    total = _num(estimate.total_usd)
    total_text = f"${total:.4f}" if total is not None else "$0.0000 (no arm is priced)"
    lines = []
    if estimate.partial:
        models = ", ".join(estimate.unpriced_models) or "?"
        arms = ", ".join(estimate.unpriced_arms)
        lines.append(
            f"PARTIAL estimate: {total_text} covers only the priced arms. No rate for: {models}"
            + (f" (arms: {arms})" if arms else "")
        )
        lines.append(f"The total is a floor, never the cost. {PRICING_HINT}")
    else:
        lines.append(f"Total: {total_text}")
    if estimate.basis:
        lines.append("Basis: " + ", ".join(f"{key}={value}"
                                           for key, value in estimate.basis.items()))
    lines.extend(f"WOULD REFUSE: {reason}" for reason in refusals)
    return headline, Table(ESTIMATE_TABLE, list(ESTIMATE_COLUMNS), rows), lines


def arms_table(sweep: Sweep) -> Table:
    rows = []
    for arm in sweep.arms:
        k = arm.k if arm.k is not None else sweep.pass_k
        runs = f"{_int_text(arm.runs_terminal, '0')}/{_int_text(arm.runs_total, '0')}"
        rows.append([
            _str(arm.label), arm.model or NO_MODEL, _str(arm.status, "?"),
            pass_k_cell(arm.greens, k, arm.passed), runs, arm.error,
        ])
    return Table(ARMS_TABLE, list(ARMS_COLUMNS), rows)


def bar_origin(source: str) -> str:
    """Where the bar came from, in words: ``set with --bar``, ``the gate's min pass
    rate``, ``the default bar``; any other source as the server named it."""
    if source == "query":
        return f"set with {phrase('bar', SWEEP_NAMES)}"
    if source == "gate":
        return "the gate's min pass rate"
    if source == "default":
        return "the default bar"
    return f"source: {source}"


def verdict_parts(comparison: SweepComparison) -> dict[str, Any]:
    """Facts, tables, note lines, warnings and charts of a (comparable) comparison."""
    arms, baseline = comparison.arms, comparison.baseline
    bar_text = pct(comparison.bar) + (f" ({bar_origin(comparison.bar_source)})"
                                      if comparison.bar_source else "")
    facts = [
        ("bar", bar_text),
        ("baseline", _str(baseline.label or baseline.arm_id, DASH)),
        ("items", f"{_int_text(comparison.item_count)} items x "
                  f"k={_int_text(comparison.pass_k)}"),
    ]
    rows = []
    for arm in arms:
        rows.append([
            arm.name, arm.model or NO_MODEL, pass_rate_cell(arm.quality),
            pass_k_cell(arm.pass_k.greens, arm.pass_k.k, arm.pass_k.passed),
            cost_cell(arm.cost), regressions_cell(arm.regressions),
        ])
    tables = [Table(VERDICT_TABLE, list(VERDICT_COLUMNS), rows)]
    notes = _verdict_notes(comparison)
    if comparison.agents:
        agent_rows = []
        for agent in comparison.agents:
            agent_rows.append([
                agent.agent or "(unattributed)", _int_text(agent.item_count),
                agent.reason or NO_VERDICT,
            ])
        tables.append(Table(AGENTS_TABLE, list(AGENTS_COLUMNS), agent_rows))
    warnings = [warning_text(w) for w in comparison.warnings]
    return {"facts": facts, "tables": tables, "notes": notes, "warnings": warnings,
            "charts": arm_charts(arms, _num(comparison.bar))}


def _verdict_notes(comparison: SweepComparison) -> list[str]:
    notes = []
    verdict = comparison.verdict
    base_id, base_label = comparison.baseline.arm_id, comparison.baseline.label
    for arm in comparison.arms:
        is_base = (base_id is not None and arm.ref.arm_id == base_id) or (
            base_id is None and base_label is not None and arm.ref.label == base_label)
        if arm.distinguishable is False and not is_base:
            notes.append(
                f"note: {arm.name} is NOT statistically "
                f"distinguishable from the baseline at n={_int_text(arm.quality.n)} "
                "(the confidence intervals overlap; more items would tell them apart)"
            )
    if verdict.excluded:
        notes.append("excluded from the cost ranking: " + ", ".join(
            f"{e.name} ({_str(e.reason_code, '?')})" for e in verdict.excluded))
    if verdict.tied_with:
        notes.append("tied with the winner (indistinguishable at this sample size): "
                     + ", ".join(verdict.tied_with))
    pricing = comparison.pricing
    if pricing.unpriced_models:
        notes.append(f"no rate for: {', '.join(pricing.unpriced_models)} — unpriced, never $0. "
                     f"{PRICING_HINT}")
    if pricing.no_usage_cases:
        notes.append(f"{_int_text(pricing.no_usage_cases)} case(s) recorded no token usage — "
                     "unpriced, not free; their cost is left out of the cost per case")
    if pricing.unknown_model_cases:
        notes.append(f"{_int_text(pricing.unknown_model_cases)} case(s) recorded no model — "
                     "unpriced, not free; their cost is left out of the cost per case")
    return notes


def arm_charts(arms: tuple[ComparedArm, ...], bar: float | None = None) -> list[Chart]:
    """Pass rate (%) and cost per case (USD) per arm: two charts, two honest scales."""
    if not arms:
        return []
    rate_labels, rates, cost_labels, costs = [], [], [], []
    for arm in arms:
        label = arm.name
        rate = _num(arm.quality.rate)
        rate_labels.append(label if rate is not None else f"{label} (no data)")
        rates.append(None if rate is None else round(rate * 100, 1))
        usd = None if arm.cost.priced is False else _num(arm.cost.per_case_usd)
        cost_labels.append(label if usd is not None else f"{label} (unpriced)")
        costs.append(usd)
    return [
        Chart("Pass rate per arm", rate_labels, {"pass rate": rates}, unit="%",
              bar=None if bar is None else round(bar * 100, 1)),
        Chart("Cost per case per arm", cost_labels, {"cost per case": costs}, unit="USD"),
    ]


# ---------------------------------------------------------------- the report


def _require_winner_warning(outcome: SweepOutcome) -> list[str]:
    """A sweep failed by require-winner says why (no arm clears the bar, or none yet)."""
    if outcome.exit_code != EXIT_FAILED or not outcome.require_winner:
        return []
    status = outcome.comparison.status if outcome.comparison is not None else None
    if status in TERMINAL:
        return ["require-winner: no arm clears the bar"]
    return [f"require-winner: the sweep is still {status}, so there is no winner yet"]


def build_sweep_report(outcome: SweepOutcome) -> Report:
    """The one Report every renderer reads for a sweep command."""
    sweep, comparison = outcome.sweep, outcome.comparison
    status = _str((sweep.status if sweep is not None else None)
                  or (comparison.status if comparison is not None else None), "unknown")
    report = Report(
        kind="sweep",
        title=(f"Sweep {outcome.sweep_id}" + (f" ({status.replace('_', ' ')})"
                                                if status != "unknown" else "")
               if outcome.sweep_id else "Sweep"),
        verdict=outcome.build_verdict or sweep_verdict(outcome.exit_code),
        exit_code=outcome.exit_code,
        headline="",
        run_id=outcome.sweep_id,
        error="interrupted" if outcome.interrupted and not outcome.error else outcome.error,
        warnings=list(outcome.warnings) + _require_winner_warning(outcome),
    )
    winner = winner_label(comparison) if not is_void(sweep, comparison) else ""
    report.outputs = {
        "sweep-id": outcome.sweep_id,
        "run-id": "",  # a sweep has child runs, not one run: see sweep-id
        "winner": winner,
        "exit-code": str(outcome.exit_code),
        "verdict": report.verdict,
    }
    if outcome.command == "preview" or (outcome.estimate is not None and sweep is None):
        if outcome.estimate is not None:
            report.title = "Sweep estimate"
            headline, table, lines = estimate_parts(outcome.estimate, outcome.refusals)
            report.headline, report.tables, report.reasons = headline, [table], lines
        else:
            report.title, report.headline = "Sweep estimate", outcome.error or "no estimate"
        return report
    if is_void(sweep, comparison):
        report.headline = VOID_PREFIX + void_reason(sweep, comparison)
        report.reasons = [NOT_COMPARABLE]
        return report
    if comparison is not None:
        parts = verdict_parts(comparison)
        report.headline = _str(comparison.verdict.reason) or NO_VERDICT
        report.facts = parts["facts"]
        report.tables = parts["tables"]
        report.reasons = parts["notes"]
        report.warnings = parts["warnings"] + report.warnings
        report.charts = parts["charts"]
        if winner:
            report.facts.append(("winner", winner))
            cheaper = saving(comparison, winner)
            if cheaper:
                report.facts.append(("saving", cheaper))
                if "cheaper" not in report.headline:  # unless the server said it already
                    report.headline = (report.headline.rstrip(". ") +
                                       f" — {winner} is {cheaper.split(' (')[0]}")
        return report
    if sweep is not None:
        report.tables = [arms_table(sweep)]
        arms = report.tables[0].rows
        done = sum(1 for row in arms if row[3].endswith("PASS"))
        report.headline = (f"{done}/{len(arms)} arm(s) hit pass^k" if status in TERMINAL
                           else f"the sweep is {status}: the verdict is not in yet")
        if sweep.error:
            report.reasons = [f"sweep error: {sweep.error}"]
        return report
    report.headline = outcome.error or NO_VERDICT
    return report
