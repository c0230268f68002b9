"""Outcome -> Report for eval-style flows (``eval run``, ``eval push``, shard finish...).

The facts follow the summary block of ``eval run`` in order (status, scored, regressions,
baseline, the baseline WARNING / note, pass rate, gate); ``reasons`` are the server gate's;
the eval-gates table follows them; ``policy`` holds one line per policy rule result;
``items`` holds every item of ``run["items"]`` as an ItemVerdict (replay order), with the
agent's own failure (timeout, exit code) folded into the reason.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

from neens_action.api.answers import Gate, GateRow, Run, describe_baseline
from neens_action.api.values import real
from neens_action.outcome import Outcome
from neens_action.policy.result import PolicyEval
from neens_action.report.build import headline as hl
from neens_action.report.build.caveats import Caveat, caveats, newcomer_branch, newcomer_text
from neens_action.report.build.evidence import (
    agent_failures,
    failure_hints,
    no_answer_note,
    failure_summary,
    item_verdicts,
    run_rows,
)
from neens_action.report.fmt import number
from neens_action.report.build.judges import attach_glance
from neens_action.report.model import AgentFailure, ItemVerdict, PolicyLine, Report, Table
from neens_action.settings.names import CONNECTION_NAMES, phrase
from neens_action.verdict import (
    decide,
    gate_passed,
    policy_flags,
    policy_results,
)

NOT_COMPARED = "not compared (no baseline)"
GATE_COLUMNS = ["GATE", "ENFORCED", "PASS RATE", "THRESHOLD", "SCORED", "VERDICT"]
_VERDICT_LABELS = {"pass": "PASS", "fail": "FAIL", "no_data": "NO DATA", "pending": "PENDING",
                   "error": "ERROR"}


_num = real


def _int(value: Any) -> int | None:
    n = real(value)
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
    """A policy value as text, never in e-notation (``0.000001``, ``134,983``)."""
    if value is None:
        return "n/a"
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, float):
        return number(value, 6 if abs(value) < 1 else 2)
    if isinstance(value, Mapping):  # a policy's nested threshold
        return ", ".join(f"{k}={fmt_value(v)}" for k, v in value.items())
    return str(value)


pass_rate = hl.pass_rate


def _baseline_facts(outcome: Outcome, gate: Gate, run: Run) -> list[tuple[str, str]]:
    """The baseline and how much of it matched (a baseline that matched nothing is a caveat,
    said once with the other caveats)."""
    baseline = gate.baseline
    if baseline is None:
        return []
    if not run.dataset_id and run.gates:
        return []  # a gates-only run is graded on the gates' thresholds
    newcomer = newcomer_branch(outcome)
    if newcomer:
        return [("baseline", newcomer_text(newcomer))]
    facts = [("baseline", describe_baseline(baseline, baseline.resolution))]
    matched, total = _int(baseline.matched_items), _int(baseline.total_items)
    if baseline.compared is not False and matched is not None and total and 0 < matched < total:
        facts.append(("note", f"the baseline matched {matched} of {total} items; regressions "
                      "and the pass-rate delta cover only the matched items"))
    return facts


def gate_label(row: GateRow) -> str:
    verdict = row.verdict
    label = _VERDICT_LABELS.get(verdict, verdict.upper() or "PENDING")
    if label == "PASS":
        if row.guardrail_outcome == "block":
            label = "BLOCKED (guardrail)"
        elif row.guardrail_outcome == "warn":
            label = "WARN (guardrail)"
    if row.enforced_false and label != "PASS":
        label += " (not enforced)"
    return label


def gates_table(rows: Sequence[GateRow]) -> Table | None:
    if not rows:
        return None
    out = []
    passed = warned = failing = 0
    for r in rows:
        name = r.name
        if len(name) > 44:
            name = name[:43] + "…"
        scored = f"{_int(r.n_scored) or 0}/{_int(r.n_items) or 0}"
        out.append([name, "yes" if r.enforced else "no", pct_int(r.pass_rate),
                    pct_int(r.threshold), scored, gate_label(r)])
        guard = r.guardrail_outcome
        if r.passed is True and guard not in ("block", "warn"):
            passed += 1
        if r.passed is True and guard == "warn":
            warned += 1
        if r.enforced and r.passed is not True:
            failing += 1
    footer = f"{passed}/{len(rows)} passed"
    if warned:
        footer += f", {warned} with guardrail warnings"
    if failing:
        footer += f", {failing} enforced gate(s) failing the build"
    return Table(title="eval gates", columns=list(GATE_COLUMNS), rows=out, footer=footer)


def policy_lines(policy_eval: PolicyEval | None) -> list[PolicyLine]:
    """One line per rule result, its observed value and threshold in the rule's unit."""
    out = []
    for r in policy_results(policy_eval):
        observed, threshold = hl.rule_values(r) or (fmt_value(r.observed),
                                                     fmt_value(r.threshold))
        out.append(PolicyLine(label=r.dimension or "?", severity=r.severity or "block",
                              status=r.status or "?", observed=observed, threshold=threshold,
                              reason=r.reason or ""))
    return out


def headline(outcome: Outcome, exit_code: int, verdict: str) -> str:
    """The headline alone (kept for callers that only want the sentence)."""
    rows, _ = run_rows(outcome)
    failures = agent_failures(outcome, rows)
    text = failure_summary(failures, agent_total(outcome))
    items = item_verdicts(outcome, rows, failures)
    return hl.headline(outcome, exit_code, verdict, failures, text,
                       _net_regressions(outcome, failures, items),
                       caveats(outcome, passed=exit_code == 0))


def agent_total(outcome: Outcome) -> int:
    """Agent invocations in all (a console run keeps only the failed ones, and counts the
    others in ``agents_ok``)."""
    return len(outcome.invocations) + (outcome.agents_ok or 0)


def _net_regressions(outcome: Outcome, failures: list[AgentFailure],
                     items: list[ItemVerdict]) -> int | None:
    """Regressions that are not agent failures (an agent that never answered is counted
    once, as an agent failure); None when nothing was compared."""
    count = hl.regression_count(outcome)
    if count is None or not failures:
        return count
    failed = {i.item_id for i in items if i.status == "agent_failed"}
    listed = outcome.comparison.regressions if outcome.comparison is not None else None
    if listed is not None:
        return max(0, count - sum(1 for r in listed if r.item_id in failed))
    return max(0, count - len(failed))  # no list: assume each was a regression


def _code(field: str) -> str:
    """A setting as a code span, in the words of the front door in force."""
    return phrase(field, CONNECTION_NAMES, "code")  # the others are called by their names


# (needle in the error, short name, "How to fix" bullets); settings are named by the door
ERROR_KINDS: tuple[tuple[str, str, Callable[[], list[str]]], ...] = (
    ("HTTP 401", "Neens rejected the API key",
     lambda: [f"Check the API key ({_code('api_key')} or `NEENS_API_KEY`): it must be a "
              "`nk_live_…` project key of this Neens."]),
    ("HTTP 403", "Neens refused the API key for this project",
     lambda: [f"Check that the API key ({_code('api_key')}) belongs to the project of the "
              "dataset."]),
    ("connection refused", "Neens could not be reached",
     lambda: [f"Check the API origin ({_code('base_url')} or `NEENS_BASE_URL`): it must be "
              "reachable from the runner.",
              "Run `neens doctor` first to check the connection (in CI: `doctor: true`)."]),
    ("HTTP 404", "Neens does not know something this run names",
     lambda: [f"Check the dataset ({_code('dataset')}) or the eval gates ({_code('gates')}) "
              "against the project in Neens."]),
    ("timed out", "Neens did not answer in time",
     lambda: [f"Re-run the job; raise {_code('poll_timeout')} when scoring is slow."]),
)


def error_kind(message: str) -> tuple[str, list[str]]:
    """(a short name for the error, "How to fix" bullets)."""
    for needle, name, hints in ERROR_KINDS:
        if needle in message:
            return name, hints()
    return "Run error", []


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


def build_eval_report(outcome: Outcome, *, graded_alone: bool = False) -> Report:
    """The one Report for an eval-style outcome (exit code / verdict decided if not yet).
    ``graded_alone``: a stress suite (no baseline is expected, so none is a caveat)."""
    if outcome.build_verdict is None:
        outcome.exit_code, outcome.build_verdict = decide(outcome)
    code, verdict = outcome.exit_code, outcome.build_verdict
    run, gate = outcome.run or Run(), outcome.gate or Gate()
    rows, digest = run_rows(outcome)
    failures = agent_failures(outcome, rows)
    failure_text = failure_summary(failures, agent_total(outcome))
    items = item_verdicts(outcome, rows, failures)
    net = _net_regressions(outcome, failures, items)
    found: list[Caveat] = caveats(outcome, passed=code == 0, graded_alone=graded_alone) \
        if outcome.gate is not None else []
    report = Report(kind="eval", title=f"Pre-prod eval {outcome.run_id or '(no run)'}",
                    verdict=verdict, exit_code=code,
                    headline=hl.headline(outcome, code, verdict, failures, failure_text, net,
                                         found),
                    run_id=outcome.run_id, error=outcome.error)
    report.agent_failures = failures
    report.agent_total = agent_total(outcome)
    report.warnings = list(dict.fromkeys(outcome.warnings))
    if outcome.error:
        kind, report.hints = error_kind(outcome.error)
        report.headline = f"{kind}: the run did not finish, so nothing was gated."
        if failures and outcome.invocations:  # our agents failed: say how to fix them
            report.hints = failure_hints(failures, outcome.agent_timeout) + report.hints
    else:
        report.hints = failure_hints(failures, outcome.agent_timeout)
    if outcome.gate is not None:
        completed, total = run.completed, run.total
        regs = NOT_COMPARED if net is None else str(net)
        report.facts = [("status", run.status or "n/a"),
                        ("scored", f"{completed}/{total}"),
                        ("regressions", regs)]
        if failure_text:
            report.facts.append(("agents", failure_text))
        report.facts += _baseline_facts(outcome, gate, run)
        report.gate_passed = gate_passed(outcome) is True
        report.facts += [("pass rate", pct2(pass_rate(outcome))),
                         ("gate", gate_fact(outcome, report.gate_passed))]
        note = no_answer_note(rows, {f.item_id for f in failures})
        if note:
            report.facts.append(("WARNING", note))
        for label, value in report.facts:
            if label == "WARNING" and value not in report.warnings:
                report.warnings.insert(0, value)
        report.reasons = hl.breaches(outcome, net)
        table = gates_table(gate.gates)
        if table:
            report.tables.append(table)
        report.header = hl.header(outcome, failure_text, net, graded_alone=graded_alone)
        report.caveats = [c.text for c in found]
    report.policy = policy_lines(outcome.policy_eval)
    report.items = items
    if digest is not None:
        report.items_total, report.items_not_passing = digest.total, digest.not_passing
    attach_glance(report, outcome)
    if outcome.noise is not None:
        from neens_action.report.build.noise import attach_noise

        attach_noise(report, outcome.noise)
    rate = pass_rate(outcome)
    report.outputs = {
        "exit-code": str(code),
        "verdict": verdict,
        "run-id": outcome.run_id or "",
        "pass-rate": "" if rate is None else f"{rate:.4f}",
        "regressions": "" if outcome.gate is None or net is None else str(net),
    }
    if report.noise is not None:  # with repeats or history: the items held regressed
        report.outputs["regressions"] = str(len(report.noise.regressed))
    return report
