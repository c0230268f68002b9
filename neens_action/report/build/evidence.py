"""Why each item failed: the evidence a reviewer needs, taken from the run's own rows.

For every item of ``run.items`` (or of the streamed digest): the expected output, the agent's
answer, each judge's score, the baseline's result for that item, and a state (``regressed``,
``failing`` as before, ``new`` without a baseline verdict, ``fail`` when the comparison
cannot tell, ``agent_failed``, ``unscored``). Agent
invocations that crashed, timed out or exported no trace become :class:`AgentFailure` rows,
counted apart from regressions.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Sequence

from neens_action.agents.correlation import HTTP_PROTOBUF, otlp_protocol
from neens_action.api.answers import Baseline, ItemRow
from neens_action.api.comparison import Comparison, Regression
from neens_action.api.values import whole
from neens_action.items import ItemDigest
from neens_action.outcome import Invocation, Outcome
from neens_action.report.fmt import finite, number
from neens_action.report.model import AgentFailure, ItemVerdict, JudgeScore
from neens_action.spill import Cursor, Records, RunRows, Spill

JUDGE_PASS_MARK = 0.7  # spec: an item passes when the mean of its judge scores is >= 0.7
NO_TRACE = "no trace captured"
NO_ANSWER = "the trace carried no answer text"
# how to turn content capture on, per instrumentation family (docs/trace-conventions.md)
CAPTURE_SETTINGS = (
    "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=span_only (OpenTelemetry GenAI "
    "instrumentations), ANTHROPIC_OPEN_TELEMETRY_TRACES_CONTENT_MODE=content (the Anthropic "
    "SDK's own tracing), TRACELOOP_TRACE_CONTENT=true (OpenLLMetry), "
    "OTEL_LOG_ASSISTANT_RESPONSES=1 with OTEL_LOGS_EXPORTER=otlp (Claude Code)")
STDERR_LINES = 20
_AFTER = re.compile(r"after (\d+(?:\.\d+)?) ?s\b")  # the runner's "timed out after 60s"
STDERR_CHARS = 2000


def _baseline_results(outcome: Outcome) -> tuple[dict[str, Regression], bool]:
    """Item id -> the comparison's regression entry, and whether a baseline was compared."""
    cmp = outcome.comparison or Comparison()
    entries = {r.item_id: r for r in cmp.regressions or ()}
    base = (outcome.gate.baseline if outcome.gate is not None else None) or cmp.baseline
    compared = (base is not None and base.compared is True) or bool(entries)
    return entries, compared


def _inv_key(inv: Invocation) -> str:
    return inv.item_id


def _failure_key(failure: AgentFailure) -> str:
    return failure.item_id


def _as_before(outcome: Outcome, rows: Sequence[ItemRow], regressed: set[str]) -> bool | None:
    """Whether the failing items that did not regress were failing in the baseline too:
    True (all of them), False (none had a baseline verdict), None (cannot tell per item).

    The comparison names only the regressed items; the rest follows from the match: a full
    match means every item had a baseline verdict; otherwise the matrix's fail->fail count
    tells."""
    cmp = outcome.comparison
    if cmp is None:
        return None
    base = cmp.baseline or Baseline()
    if base.compared is False:
        return False
    matched, total = whole(base.matched_items), whole(base.total_items)
    if matched is not None and total is not None and matched >= total > 0:
        return True
    before_failed = sum(v for k, v in cmp.matrix.items()
                        if k.startswith("fail") and k != "failPass")
    failing = sum(1 for r in rows if r.passed is not True and r.key not in regressed)
    if not cmp.matrix_said or not failing:
        return None
    if before_failed == 0:
        return False
    return True if before_failed == failing else None


def _judges(row: ItemRow) -> list[JudgeScore]:
    out = []
    for judge in row.judges:
        n = finite(judge.score)
        passed = judge.passed if judge.passed is not None else (
            None if n is None else n >= JUDGE_PASS_MARK)
        out.append(JudgeScore(judge.name, n, passed))
    return out


def agent_failure(inv: Invocation) -> AgentFailure | None:
    """The class of an invocation that did not succeed (None when it did)."""
    if inv.ok:
        return None
    tail = "\n".join(inv.output.splitlines()[-STDERR_LINES:])[-STDERR_CHARS:]
    if inv.timed_out:
        limit = _AFTER.search(inv.error or "")
        detail = (f"after {number(float(limit.group(1)), 1)} s" if limit
                  else (inv.error or "timed out").replace("timed out ", ""))
        return AgentFailure(inv.item_id, "timed_out", detail, inv.returncode, tail)
    if inv.returncode is None:
        return AgentFailure(inv.item_id, "launch_failed", inv.error or "did not start",
                            None, tail)
    if inv.error and inv.error.startswith("not run"):
        return AgentFailure(inv.item_id, "not_run", inv.error, inv.returncode, tail)
    return AgentFailure(inv.item_id, "crashed", f"exit code {inv.returncode}",
                        inv.returncode, tail)


def agent_failures(outcome: Outcome, rows: Sequence[ItemRow]) -> Sequence[AgentFailure]:
    """Crashed / timed-out agents, then items whose agent exited 0 but left no trace
    (spilled to disk when the rows are: there may be one per item)."""
    failures: list[AgentFailure] | Spill[AgentFailure] = (
        Records(AgentFailure) if isinstance(rows, RunRows) else [])
    failures.extend(f for f in (agent_failure(inv) for inv in outcome.invocations) if f)
    failed_ids = {f.item_id for f in failures}
    invs = Cursor(outcome.invocations, _inv_key)
    for row in rows:
        key = row.key
        if key in failed_ids or row.passed is not None:
            continue
        if row.captured_said is False or row.error == NO_TRACE:
            # the exporter's own error, if any, is in the agent's output: shown like a crash
            inv = invs.get(key)
            tail = "\n".join(inv.output.splitlines()[-STDERR_LINES:])[-STDERR_CHARS:] \
                if inv else ""
            failures.append(AgentFailure(key, "no_trace", NO_TRACE,
                                         inv.returncode if inv else None, tail))
    return failures


def _no_answer(row: ItemRow) -> bool:
    """A scored item whose captured trace carried no answer text (``output`` null)."""
    return row.answer_missing and row.passed is False and row.captured_said is not False


def no_answer_note(rows: Sequence[ItemRow], agent_failed: set[str] | frozenset[str] = frozenset(),
                   ) -> str:
    """The warning for items whose trace carried no answer text ("" when none); an item
    whose agent failed (a timeout cut its trace short) is an agent failure instead."""
    n = sum(1 for r in rows if _no_answer(r) and r.key not in agent_failed)
    if not n:
        return ""
    return (f"{n} item(s) failed because {NO_ANSWER}, so nothing could match the expected "
            f"answer: turn on content capture in the agent's instrumentation: "
            f"{CAPTURE_SETTINGS}.")


def run_rows(outcome: Outcome) -> tuple[Sequence[ItemRow], ItemDigest | None]:
    """The run's item rows (or the digest's kept rows) and the digest when there is one
    (spilled rows are read from disk, never listed in memory)."""
    listed = outcome.run.items if outcome.run is not None else None
    if listed is not None:
        return (listed if isinstance(listed, RunRows) else list(listed)), None
    digest = outcome.item_digest
    if digest is None:
        return [], None
    return list(digest.rows), digest


def _reason(row: ItemRow) -> str:
    reasons = [r for r in (row.error, row.reason) if r]
    reasons.extend(row.reasons)
    return "; ".join(dict.fromkeys(reasons))


def item_verdicts(outcome: Outcome, rows: Sequence[ItemRow],
                  failures: Sequence[AgentFailure]) -> Sequence[ItemVerdict]:
    """Every row as an ItemVerdict with its evidence and state (spilled to disk when the
    rows are)."""
    invs = Cursor(outcome.invocations, _inv_key)
    by_agent = Cursor(failures, _failure_key)
    regressed, compared = _baseline_results(outcome)
    before = _as_before(outcome, rows, set(regressed))
    out: list[ItemVerdict] | Spill[ItemVerdict] = (
        Records(ItemVerdict, nested={"judges": (JudgeScore, list)})
        if isinstance(rows, RunRows) else [])
    for row in rows:
        key = row.key
        passed = row.passed
        state = "pass" if passed is True else ("fail" if passed is False else "unscored")
        reason = _reason(row)
        inv, agent = invs.get(key), by_agent.get(key)
        if _no_answer(row) and agent is None:
            reason = "; ".join(p for p in (f"{NO_ANSWER} (turn on content capture)", reason)
                               if p)
        if agent is not None:
            what = {"crashed": "agent crashed", "timed_out": "agent timed out",
                    "no_trace": "no trace captured"}.get(agent.kind, "agent failed")
            what = what if agent.kind == "no_trace" else f"{what} ({agent.detail})"
            reason = "; ".join(dict.fromkeys(p for p in (what, reason) if p))
        if agent is not None and state != "pass":
            # an agent that crashed, timed out or exported no trace failed the item: an
            # agent failure, never a regression (even when a partial trace was scored)
            status = "agent_failed"
        elif key in regressed:
            status = "regressed"
        elif state == "pass":
            status = ""
        elif state == "unscored":
            status = "unscored"
        elif not compared or before is False:
            status = "new"  # no baseline verdict for this item
        else:
            status = "failing" if before else "fail"  # fail: cannot tell what it was before
        entry = regressed.get(key) or Regression(key)
        baseline = entry.before or ("pass" if key in regressed else
                                    ("fail" if status == "failing" else ""))
        out.append(ItemVerdict(
            item_id=key, input=row.input or (inv.input if inv else ""), state=state,
            score=finite(row.score), reason=reason, suite=row.gate_name,
            duration_s=inv.duration_s if inv else None, status=status,
            expected=row.expected, answer=row.output,
            judges=_judges(row), baseline=baseline, baseline_score=finite(entry.before_score),
        ))
    return out


def failure_summary(failures: Iterable[AgentFailure], total: int) -> str:
    """``6 of 6 agents crashed (exit code 3)`` / ``2 agents timed out (after 60s), ...``."""
    groups: dict[str, tuple[int, set[str]]] = {}  # kind -> (count, details), first seen first
    for f in failures:
        n, kind_details = groups.get(f.kind, (0, set()))
        kind_details.add(f.detail)
        groups[f.kind] = (n + 1, kind_details)
    parts = []
    of = f" of {total}" if total else ""
    for kind, (n, seen) in groups.items():
        noun = "agent" if n == 1 and not of else "agents"
        details = sorted(seen)
        shown = ", ".join(details[:3]) + (", …" if len(details) > 3 else "")
        if kind == "crashed":
            parts.append(f"{n}{of} {noun} crashed ({shown})")
        elif kind == "timed_out":
            parts.append(f"{n}{of} {noun} timed out ({shown})")
        elif kind == "no_trace":
            parts.append(f"{n}{of} {noun} exported no trace")
        elif kind == "not_run":
            parts.append(f"{n}{of} {noun} not run")
        else:
            parts.append(f"{n}{of} {noun} failed to start")
        of = ""
    return ", ".join(parts)


def failure_hints(failures: Iterable[AgentFailure], timeout: object = None) -> list[str]:
    kinds = {f.kind for f in failures}
    hints = []
    if "crashed" in kinds or "launch_failed" in kinds:
        hints.append("Run the `command` locally with one item's prompt on stdin to see why "
                     "it exits non-zero (its last output lines are shown with the failure).")
    if "timed_out" in kinds:
        limit = f" (now {number(timeout, 0)} s)" if finite(timeout) is not None else ""
        hints.append(f"Raise the `timeout` input{limit} or make the agent answer faster.")
    if "no_trace" in kinds:
        protocol = otlp_protocol(os.environ)
        if protocol != HTTP_PROTOBUF:
            hints.append(f"The agent's OTLP exporter protocol is `{protocol}` "
                         "(`OTEL_EXPORTER_OTLP_PROTOCOL` / `OTEL_EXPORTER_OTLP_TRACES_PROTOCOL`)"
                         ": set it to `http/protobuf` (Neens receives OTLP over HTTP: gRPC "
                         "never arrives and the Python SDK refuses `http/json`); the "
                         "exporter's own error is in the agent's output.")
        hints.append("Check that the agent exports OpenTelemetry traces to the Neens OTLP "
                     "endpoint (`OTEL_EXPORTER_OTLP_ENDPOINT`) and flushes them before it "
                     "exits; set `doctor: true` to check the set-up before the run.")
    return hints
