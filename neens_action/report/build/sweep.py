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

import math
from typing import Any

from neens_action.errors import EXIT_FAILED
from neens_action.outcome import SweepOutcome
from neens_action.report.build.sweep_saving import saving
from neens_action.report.model import Chart, Report, Table
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


def _num(value: Any) -> float | None:
    """A finite number, or None (bools and strings are not numbers here)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value) if math.isfinite(value) else None


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


def pass_rate_cell(quality: Any) -> str:
    """``96.0% (n=50, CI 86.3-99.5%)`` or ``no data``."""
    quality = quality if isinstance(quality, dict) else {}
    rate = _num(quality.get("rate"))
    if rate is None:
        return "no data"
    parts = []
    if _num(quality.get("n")) is not None:
        parts.append(f"n={_int_text(quality['n'])}")
    low, high = _num(quality.get("ciLow")), _num(quality.get("ciHigh"))
    if low is not None and high is not None:
        parts.append(f"CI {low * 100:.1f}-{high * 100:.1f}%")
    return f"{rate * 100:.1f}%" + (f" ({', '.join(parts)})" if parts else "")


def pass_k_cell(greens: Any, k: Any, passed: Any) -> str:
    """``3/3 PASS``, ``2/3 FAIL``, ``0/3 —``; ``—`` when both numbers are missing."""
    if _num(greens) is None and _num(k) is None:
        return DASH
    mark = "PASS" if passed is True else "FAIL" if passed is False else DASH
    return f"{_int_text(greens)}/{_int_text(k)} {mark}"


def cost_cell(cost: Any) -> str:
    """``$0.000600``, ``$0.000600 (partial)`` or ``unpriced`` (never ``$0`` for no rate)."""
    cost = cost if isinstance(cost, dict) else {}
    value = _num(cost.get("costPerCaseUsd"))
    if cost.get("priced") is False or value is None:
        return "unpriced"
    return f"${value:.6f}" + (" (partial)" if cost.get("partial") else "")


def regressions_cell(regressions: Any) -> str:
    count = regressions.get("count") if isinstance(regressions, dict) else regressions
    return DASH if _num(count) is None else _int_text(count)


def warning_text(warning: Any) -> str:
    """A server warning as one string: ``[code]: message (arms: a, b)`` or the plain text."""
    if isinstance(warning, dict):
        code = _str(warning.get("code"))
        message = _str(warning.get("message")) or code
        arms = warning.get("arms") or []
        names = [_str(a.get("label") or a.get("armId")) if isinstance(a, dict) else _str(a)
                 for a in arms]
        suffix = f" (arms: {', '.join(names)})" if names else ""
        return (f"[{code}]: {message}" if code else message) + suffix
    return _str(warning)


def verdict_of(comparison: dict[str, Any] | None) -> dict[str, Any]:
    verdict = (comparison or {}).get("verdict")
    return verdict if isinstance(verdict, dict) else {}


def winner_label(comparison: dict[str, Any] | None) -> str:
    """The label the server named as winner ("" unless ``verdict.outcome == "winner"``)."""
    verdict = verdict_of(comparison)
    if verdict.get("outcome") != "winner":
        return ""
    winner = verdict.get("winner")
    if isinstance(winner, dict):
        return _str(winner.get("label") or winner.get("armId"))
    if isinstance(winner, str):
        return winner
    arm_id = verdict.get("winnerArmId")
    for arm in (comparison or {}).get("arms") or []:
        if isinstance(arm, dict) and arm_id is not None and arm.get("armId") == arm_id:
            return _str(arm.get("label") or arm_id)
    return ""


def is_void(sweep: dict[str, Any] | None, comparison: dict[str, Any] | None) -> bool:
    if comparison is not None and (
        comparison.get("comparable") is False or comparison.get("status") == "void"
    ):
        return True
    return sweep is not None and sweep.get("status") == "void"


def void_reason(sweep: dict[str, Any] | None, comparison: dict[str, Any] | None) -> str:
    for source in (comparison, sweep):
        if source and source.get("voidReason"):
            return _str(source["voidReason"])
    return "the arms did not run under identical conditions"


# ---------------------------------------------------------------- the three shapes


def estimate_parts(estimate: dict[str, Any], refusals: list[str]) -> tuple[str, Table, list[str]]:
    """Headline, per-arm table and the lines after it (total / partial / basis / refusals)."""
    k = estimate.get("passK")
    headline = (
        f"Estimate: {_int_text(estimate.get('totalRuns'))} runs "
        f"({_int_text(k)} x {_int_text(estimate.get('itemCount'))} items per arm), "
        f"{_int_text(estimate.get('totalCalls'))} agent calls"
    )
    rows = []
    for arm in estimate.get("perArm") or []:
        arm = arm if isinstance(arm, dict) else {}
        usd = _num(arm.get("usd"))
        rows.append([
            _str(arm.get("label")), _str(arm.get("model")) or NO_MODEL,
            _int_text(arm.get("runs")), _int_text(arm.get("calls")),
            f"${usd:.4f}" if usd is not None else "unpriced",
        ])
    total = _num(estimate.get("totalUsd"))
    total_text = f"${total:.4f}" if total is not None else "$0.0000 (no arm is priced)"
    lines = []
    if estimate.get("partial"):
        models = ", ".join(_str(m) for m in estimate.get("unpricedModels") or []) or "?"
        arms = ", ".join(_str(a) for a in estimate.get("unpricedArms") or [])
        lines.append(
            f"PARTIAL estimate: {total_text} covers only the priced arms. No rate for: {models}"
            + (f" (arms: {arms})" if arms else "")
        )
        lines.append(f"The total is a floor, never the cost. {PRICING_HINT}")
    else:
        lines.append(f"Total: {total_text}")
    basis = estimate.get("basis")
    if isinstance(basis, dict) and basis:
        lines.append("Basis: " + ", ".join(f"{key}={value}" for key, value in basis.items()))
    lines.extend(f"WOULD REFUSE: {reason}" for reason in refusals)
    return headline, Table(ESTIMATE_TABLE, list(ESTIMATE_COLUMNS), rows), lines


def arms_table(sweep: dict[str, Any]) -> Table:
    rows = []
    for arm in sweep.get("arms") or []:
        arm = arm if isinstance(arm, dict) else {}
        k = arm.get("k") if arm.get("k") is not None else sweep.get("passK")
        runs = f"{_int_text(arm.get('runsTerminal'), '0')}/{_int_text(arm.get('runsTotal'), '0')}"
        rows.append([
            _str(arm.get("label")), _str(arm.get("model")) or NO_MODEL,
            _str(arm.get("status"), "?"),
            pass_k_cell(arm.get("greens"), k, arm.get("passed")), runs, _str(arm.get("error")),
        ])
    return Table(ARMS_TABLE, list(ARMS_COLUMNS), rows)


def verdict_parts(comparison: dict[str, Any]) -> dict[str, Any]:
    """Facts, tables, note lines, warnings and charts of a (comparable) comparison."""
    verdict = verdict_of(comparison)
    arms = [a for a in comparison.get("arms") or [] if isinstance(a, dict)]
    bar = comparison.get("bar") if isinstance(comparison.get("bar"), dict) else {}
    baseline = comparison.get("baseline") if isinstance(comparison.get("baseline"), dict) else {}
    bar_text = pct(bar.get("passRate")) + (f" (source: {bar['source']})" if bar.get("source")
                                          else "")
    facts = [
        ("bar", bar_text),
        ("baseline", _str(baseline.get("label") or baseline.get("armId"), DASH)),
        ("items", f"{_int_text(comparison.get('itemCount'))} items x "
                  f"k={_int_text(comparison.get('passK'))}"),
    ]
    rows = []
    for arm in arms:
        pk = arm.get("passK") if isinstance(arm.get("passK"), dict) else {}
        rows.append([
            _str(arm.get("label") or arm.get("armId")), _str(arm.get("model")) or NO_MODEL,
            pass_rate_cell(arm.get("quality")),
            pass_k_cell(pk.get("greens"), pk.get("k"), pk.get("passed")),
            cost_cell(arm.get("cost")), regressions_cell(arm.get("regressions")),
        ])
    tables = [Table(VERDICT_TABLE, list(VERDICT_COLUMNS), rows)]
    notes = _verdict_notes(comparison, verdict, arms, baseline)
    agents = [a for a in comparison.get("agents") or [] if isinstance(a, dict)]
    if agents:
        agent_rows = []
        for agent in agents:
            agent_verdict = agent.get("verdict") if isinstance(agent.get("verdict"), dict) else {}
            agent_rows.append([
                _str(agent.get("agent"), "(unattributed)") or "(unattributed)",
                _int_text(agent.get("itemCount")),
                _str(agent_verdict.get("reason"), NO_VERDICT) or NO_VERDICT,
            ])
        tables.append(Table(AGENTS_TABLE, list(AGENTS_COLUMNS), agent_rows))
    warnings = [warning_text(w) for w in comparison.get("warnings") or []]
    return {"facts": facts, "tables": tables, "notes": notes, "warnings": warnings,
            "charts": arm_charts(arms, _num(bar.get("passRate")))}


def _verdict_notes(
    comparison: dict[str, Any], verdict: dict[str, Any], arms: list[dict[str, Any]],
    baseline: dict[str, Any],
) -> list[str]:
    notes = []
    base_id, base_label = baseline.get("armId"), baseline.get("label")
    for arm in arms:
        is_base = (base_id is not None and arm.get("armId") == base_id) or (
            base_id is None and base_label is not None and arm.get("label") == base_label)
        if arm.get("distinguishableFromBaseline") is False and not is_base:
            quality = arm.get("quality") if isinstance(arm.get("quality"), dict) else {}
            notes.append(
                f"note: {_str(arm.get('label') or arm.get('armId'))} is NOT statistically "
                f"distinguishable from the baseline at n={_int_text(quality.get('n'))} "
                "(the confidence intervals overlap; more items would tell them apart)"
            )
    excluded = [e for e in verdict.get("excluded") or [] if isinstance(e, dict)]
    if excluded:
        notes.append("excluded from the cost ranking: " + ", ".join(
            f"{_str(e.get('label') or e.get('armId'))} ({_str(e.get('reasonCode'), '?')})"
            for e in excluded))
    tied = [_str(t.get("label") if isinstance(t, dict) else t)
            for t in verdict.get("tiedWith") or []]
    if tied:
        notes.append("tied with the winner (indistinguishable at this sample size): "
                     + ", ".join(tied))
    pricing = comparison.get("pricing") if isinstance(comparison.get("pricing"), dict) else {}
    unpriced = [_str(m) for m in pricing.get("unpricedModels") or []]
    if unpriced:
        notes.append(f"no rate for: {', '.join(unpriced)} — unpriced, never $0. {PRICING_HINT}")
    no_usage = _num(pricing.get("noUsageCases"))
    if no_usage:
        notes.append(f"{_int_text(no_usage)} case(s) recorded no token usage — unpriced, not "
                     "free; their cost is left out of the cost per case")
    no_model = _num(pricing.get("unknownModelCases"))
    if no_model:
        notes.append(f"{_int_text(no_model)} case(s) recorded no model — unpriced, not free; "
                     "their cost is left out of the cost per case")
    return notes


def arm_charts(arms: list[dict[str, Any]], bar: float | None = None) -> list[Chart]:
    """Pass rate (%) and cost per case (USD) per arm: two charts, two honest scales."""
    if not arms:
        return []
    rate_labels, rates, cost_labels, costs = [], [], [], []
    for arm in arms:
        label = _str(arm.get("label") or arm.get("armId"))
        quality = arm.get("quality") if isinstance(arm.get("quality"), dict) else {}
        rate = _num(quality.get("rate"))
        rate_labels.append(label if rate is not None else f"{label} (no data)")
        rates.append(None if rate is None else round(rate * 100, 1))
        cost = arm.get("cost") if isinstance(arm.get("cost"), dict) else {}
        usd = _num(cost.get("costPerCaseUsd"))
        if cost.get("priced") is False:
            usd = None
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
    status = (outcome.comparison or {}).get("status")
    if status in TERMINAL:
        return ["require-winner: no arm clears the bar"]
    return [f"require-winner: the sweep is still {status}, so there is no winner yet"]


def build_sweep_report(outcome: SweepOutcome) -> Report:
    """The one Report every renderer reads for a sweep command."""
    sweep, comparison = outcome.sweep, outcome.comparison
    status = _str((sweep or {}).get("status") or (comparison or {}).get("status"), "unknown")
    report = Report(
        kind="sweep",
        title=f"Sweep {outcome.sweep_id} — status={status}" if outcome.sweep_id else "Sweep",
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
        report.headline = _str(verdict_of(comparison).get("reason")) or NO_VERDICT
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
        if sweep.get("error"):
            report.reasons = [f"sweep error: {sweep['error']}"]
        return report
    report.headline = outcome.error or NO_VERDICT
    return report
