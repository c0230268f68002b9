"""Outcome -> Report for eval-style flows (``eval run``, ``eval push``, shard finish...).

The facts follow the summary block of spec 10.1 in order (status, scored, regressions,
baseline, the baseline WARNING / note, pass rate, gate); ``reasons`` are the server gate's;
the eval-gates table follows spec 10.2; ``policy`` holds one line per policy rule result;
``items`` holds every item of ``run["items"]`` as an ItemVerdict (replay order), with the
agent's own failure (timeout, exit code) folded into the reason.
"""

from __future__ import annotations

import math
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

from neens_action.report.build.baseline import describe_baseline
from neens_action.items import ItemDigest
from neens_action.outcome import Invocation, Outcome
from neens_action.report.model import ItemVerdict, PolicyLine, Report, Table
from neens_action.verdict import (
    decide,
    gate_passed,
    policy_flags,
    policy_results,
    result_field,
)

NOT_COMPARED = "not compared (no baseline)"
GATE_COLUMNS = ["GATE", "ENFORCED", "PASS RATE", "THRESHOLD", "SCORED", "VERDICT"]
_VERDICT_LABELS = {"pass": "PASS", "fail": "FAIL", "no_data": "NO DATA", "pending": "PENDING",
                   "error": "ERROR"}


def _num(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value) if math.isfinite(value) else None


def _int(value: Any) -> int | None:
    n = _num(value)
    return int(n) if n is not None and n == int(n) else None


def pct2(value: Any) -> str:
    """0.9333 -> '93.33%'; non-number -> 'n/a'."""
    n = _num(value)
    return "n/a" if n is None else f"{n * 100:.2f}%"


def pct_int(value: Any) -> str:
    """0.125 -> '13%' (rounded half up); non-number -> 'n/a'."""
    n = _num(value)
    if n is None:
        return "n/a"
    return f"{Decimal(str(n * 100)).quantize(Decimal(1), rounding=ROUND_HALF_UP)}%"


def fmt_value(value: Any) -> str:
    if value is None:
        return "n/a"
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, float):
        return f"{value:.4g}"
    if isinstance(value, dict):
        return ", ".join(f"{k}={fmt_value(v)}" for k, v in value.items())
    return str(value)


def regressions_text(outcome: Outcome) -> str:
    gate = outcome.gate or {}
    baseline = gate.get("baseline") if isinstance(gate.get("baseline"), dict) else {}
    if baseline.get("compared") is False or ("regressions" in gate and gate["regressions"] is None):
        return NOT_COMPARED
    for value in (gate.get("regressions"), (outcome.run or {}).get("regressions"),
                  ((outcome.run or {}).get("aggregate") or {}).get("regressions")):
        n = _int(value)
        if n is not None:
            return str(n)
    return "0"


def pass_rate(outcome: Outcome) -> float | None:
    gate, run = outcome.gate or {}, outcome.run or {}
    value = _num(gate.get("passRate"))
    if value is None:
        value = _num((run.get("aggregate") or {}).get("passRate"))
    return value


def _baseline_facts(gate: dict[str, Any], run: dict[str, Any]) -> list[tuple[str, str]]:
    baseline = gate.get("baseline")
    if not isinstance(baseline, dict):
        return []
    if not run.get("datasetId") and run.get("gates"):
        return []  # a gates-only run is graded on the gates' thresholds (spec 4.1.4)
    facts = [("baseline", describe_baseline(baseline, baseline.get("resolution")))]
    matched, total = _int(baseline.get("matchedItems")), _int(baseline.get("totalItems"))
    if baseline.get("compared") is False:
        facts.append(("WARNING", f"the baseline matched 0 of {total if total is not None else '?'}"
                      " item(s) — regressions were not compared; run the job on your default "
                      "branch too so pull requests have a run to compare with"))
    elif matched is not None and total and 0 < matched < total:
        facts.append(("note", f"the baseline matched {matched} of {total} items; regressions "
                      "and the pass-rate delta cover only the matched items"))
    return facts


def gate_label(row: dict[str, Any]) -> str:
    verdict = str(row.get("verdict") or "").strip()
    label = _VERDICT_LABELS.get(verdict, verdict.upper() or "PENDING")
    if label == "PASS":
        outcome = row.get("guardrailOutcome")
        if outcome == "block":
            label = "BLOCKED (guardrail)"
        elif outcome == "warn":
            label = "WARN (guardrail)"
    if row.get("enforced") is False and label != "PASS":
        label += " (not enforced)"
    return label


def gates_table(rows: list[Any]) -> Table | None:
    rows = [r for r in rows if isinstance(r, dict)]
    if not rows:
        return None
    out = []
    passed = warned = failing = 0
    for r in rows:
        name = str(r.get("name") or r.get("gateId") or "?")
        if len(name) > 44:
            name = name[:43] + "…"
        threshold = r.get("threshold", r.get("passThreshold"))
        scored = f"{_int(r.get('nScored')) or 0}/{_int(r.get('nItems')) or 0}"
        out.append([name, "yes" if r.get("enforced", True) else "no", pct_int(r.get("passRate")),
                    pct_int(threshold), scored, gate_label(r)])
        guard = r.get("guardrailOutcome")
        if r.get("passed") is True and guard not in ("block", "warn"):
            passed += 1
        if r.get("passed") is True and guard == "warn":
            warned += 1
        if r.get("enforced", True) and r.get("passed") is not True:
            failing += 1
    footer = f"{passed}/{len(rows)} passed"
    if warned:
        footer += f", {warned} with guardrail warnings"
    if failing:
        footer += f", {failing} enforced gate(s) failing the build"
    return Table(title="eval gates", columns=list(GATE_COLUMNS), rows=out, footer=footer)


def policy_lines(policy_eval: Any) -> list[PolicyLine]:
    return [PolicyLine(label=str(result_field(r, "dimension") or "?"),
                       severity=str(result_field(r, "severity") or "block"),
                       status=str(result_field(r, "status") or "?"),
                       observed=fmt_value(result_field(r, "observed")),
                       threshold=fmt_value(result_field(r, "threshold")),
                       reason=str(result_field(r, "reason") or ""))
            for r in policy_results(policy_eval)]


def item_key(row: dict[str, Any]) -> str:
    return str(row.get("datasetVersionItemId") or row.get("item_id") or row.get("itemId")
               or row.get("id") or "?")


def _regressed_ids(outcome: Outcome) -> set[str]:
    regs = (outcome.comparison or {}).get("regressions")
    ids = set()
    for r in regs if isinstance(regs, list) else []:
        if isinstance(r, dict):
            ids.add(item_key(r))
        elif isinstance(r, str):
            ids.add(r)
    return ids


def _agent_problem(inv: Invocation | None) -> str:
    if inv is None or inv.ok:
        return ""
    return f"agent: {inv.error or f'rc={inv.returncode}'}"


def _digest(outcome: Outcome) -> ItemDigest | None:
    """The digest the run's items were folded into, when the run object has none."""
    has_items = isinstance((outcome.run or {}).get("items"), list)
    return None if has_items else outcome.item_digest


def item_verdicts(outcome: Outcome) -> list[ItemVerdict]:
    """Every item of ``run.items`` (or the rows kept by ``outcome.item_digest``)."""
    digest, listed = _digest(outcome), (outcome.run or {}).get("items")
    rows = digest.rows if digest is not None else (listed if isinstance(listed, list) else [])
    invs = {inv.item_id: inv for inv in outcome.invocations}
    regressed = _regressed_ids(outcome)
    out = []
    for row in rows:
        if not isinstance(row, dict):
            continue
        key = item_key(row)
        passed = row.get("passed")
        state = "pass" if passed is True else ("fail" if passed is False else "unscored")
        reasons = []
        for field in ("error", "reason"):
            if isinstance(row.get(field), str) and row[field]:
                reasons.append(row[field])
        if isinstance(row.get("reasons"), list):
            reasons.extend(str(r) for r in row["reasons"] if r)
        if key in regressed:
            reasons.insert(0, "regression: the baseline passed this item")
        inv = invs.get(key)
        if _agent_problem(inv):
            reasons.append(_agent_problem(inv))
        score = _num(row.get("score", row.get("avgScore")))
        out.append(ItemVerdict(
            item_id=key, input=str(row.get("input") or (inv.input if inv else "")), state=state,
            score=score, reason="; ".join(dict.fromkeys(reasons)),
            suite=str(row.get("gateName") or row.get("gateId") or ""),
            duration_s=inv.duration_s if inv else None,
        ))
    return out


def headline(outcome: Outcome, exit_code: int, verdict: str) -> str:
    if outcome.interrupted:
        return "Interrupted: the agents were stopped and the run was not gated."
    if outcome.error:
        return f"Run error: {outcome.error}"
    rate = pct2(pass_rate(outcome))
    regs = regressions_text(outcome)
    regs_part = ("regressions not compared (no baseline)" if regs == NOT_COMPARED
                 else f"{regs} regression(s)")
    gate_ok = gate_passed(outcome) is True
    if exit_code == 0 and verdict == "passed":
        return f"Gate passed: pass rate {rate}, {regs_part}."
    if exit_code == 0:
        why = "the gate failed but --no-gate waived it" if not gate_ok else "with warnings"
        return f"Gate passed ({why}): pass rate {rate}, {regs_part}."
    reasons = [str(r) for r in (outcome.gate or {}).get("reasons") or []]
    if gate_ok:
        return f"Gate failed: a blocking policy rule failed (pass rate {rate}, {regs_part})."
    first = f": {reasons[0]}" if reasons else ""
    return f"Gate failed{first} (pass rate {rate}, {regs_part})."


def gate_fact(outcome: Outcome, server_passed: bool) -> str:
    """The gate as decided, never contradicting the verdict: a run error decides nothing, and
    a blocking policy rule blocks a run whose server gate passed."""
    if outcome.interrupted:
        text = "not decided (interrupted)"
    elif outcome.error:
        text = "not decided (run error)"
    elif server_passed and policy_flags(outcome.policy_eval)[0]:
        text = "BLOCKED by policy (server gate passed)"
    else:
        text = "PASSED" if server_passed else "FAILED"
    if not outcome.enforced:
        text += "  (--no-gate: not enforced)"
    return text


def build_eval_report(outcome: Outcome) -> Report:
    """The one Report for an eval-style outcome (exit code / verdict decided if not yet)."""
    if outcome.build_verdict is None:
        outcome.exit_code, outcome.build_verdict = decide(outcome)
    code, verdict = outcome.exit_code, outcome.build_verdict
    run, gate = outcome.run or {}, outcome.gate or {}
    report = Report(kind="eval", title=f"Pre-prod eval {outcome.run_id or '(no run)'}",
                    verdict=verdict, exit_code=code, headline=headline(outcome, code, verdict),
                    run_id=outcome.run_id, error=outcome.error)
    if outcome.base_url and outcome.run_id:
        report.run_url = f"{outcome.base_url.rstrip('/')}/preprod-evals/{outcome.run_id}"
    report.warnings = list(dict.fromkeys(outcome.warnings))
    if outcome.gate is not None:
        completed, total = _int(run.get("completed")) or 0, _int(run.get("total")) or 0
        report.facts = [("status", str(run.get("status") or "n/a")),
                        ("scored", f"{completed}/{total}"),
                        ("regressions", regressions_text(outcome))]
        report.facts += _baseline_facts(gate, outcome.run or {})
        report.gate_passed = gate_passed(outcome) is True
        report.facts += [("pass rate", pct2(pass_rate(outcome))),
                         ("gate", gate_fact(outcome, report.gate_passed))]
        for label, value in report.facts:
            if label == "WARNING" and value not in report.warnings:
                report.warnings.insert(0, value)
        report.reasons = [str(r) for r in gate.get("reasons") or [] if r is not None]
        table = gates_table(gate.get("gates") if isinstance(gate.get("gates"), list) else [])
        if table:
            report.tables.append(table)
    report.policy = policy_lines(outcome.policy_eval)
    report.items = item_verdicts(outcome)
    digest = _digest(outcome)
    if digest is not None:
        report.items_total, report.items_not_passing = digest.total, digest.not_passing
    rate = pass_rate(outcome)
    regs = regressions_text(outcome) if outcome.gate is not None else ""
    report.outputs = {
        "exit-code": str(code),
        "verdict": verdict,
        "run-id": outcome.run_id or "",
        "pass-rate": "" if rate is None else f"{rate:.4f}",
        "regressions": "" if regs in ("", NOT_COMPARED) else regs,
    }
    return report
