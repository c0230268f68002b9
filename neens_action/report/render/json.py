"""The ``--json`` document of ``eval run`` / ``eval push`` (stdout, indented).

Shape, version ``"format": 2`` (keys of ``eval run --json``, extras marked *)::

    {
      "format": 2,                      * version of this document; bumped on breaking change
      "mode": "run",                    * run | push | finish ...
      "runId": "ppr_…",                 "" when no run was created
      "exitCode": 0,                    0 passed, 1 gate failed, 2 run error, 130 interrupted
      "verdict": "passed",              * build verdict: passed | warned | blocked | errored
      "gatePassed": true,               the server gate's `passed` (false when absent)
      "enforced": true,                 * false under --no-gate
      "error": null,                    run error sentence, or null
      "interrupted": false,             *
      "run": {…} | null,                terminal run object, as the server sent it
      "gate": {…} | null,               gate response, as the server sent it
      "gates": [ … ],                   gate.gates, [] when none
      "policyEval": {"blocked", "warned", "results": [{dimension, severity, status,
                     observed, threshold, reason}]}     only present when a policy is in play
      "gatesPolicy": {…} | null,        server echo of a declared gates block
      "drift": [ … ],                   run.gateDrift, [] when none
      "buildVerdict": {"verdict", "reported"} | null    null when no run existed
      "summary": {"passRate", "regressions", "agentFailures", "scored", "total"},
                                        * numbers or null; an agent failure (crash,
                                          timeout, no trace) is never a regression
      "warnings": ["…"],                *
      "items": [{"itemId", "returncode", "durationS", "timedOut", "error",
                 "state", "score"}]     eval run only (state/score* from the scored run)
      "noise": {…}                      * only with repeats or history (format 3): the
                                          noise-aware verdict (outcome, gate, line, pass
                                          rate and interval, regressed / improved / flaky
                                          items with k/K now and n/N on main, history
                                          facts, rules, main's trend, each repetition)
      "report": {…}                     * the whole Report (report/serial.py): every
                                          renderer's input, CI context and links included,
                                          so ``neens report`` re-renders it (format 2)
    }

A document with ``noise`` is format 3 (and its ``report`` format 2); without repeats or
history (K = 1, N = 1) the document is format 2, unchanged.

The document never contains the API key or the agents' captured output.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from typing import Any

from neens_action.api.values import number
from neens_action.outcome import Outcome
from neens_action.report import serial
from neens_action.report.model import Report

FORMAT = 2  # 2: adds ``report`` (the rendered surfaces' input)
NOISE_FORMAT = 3  # 3: adds ``noise``; only documents that carry it (repeats or history)


def jsonable(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, Mapping):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    to_json = getattr(value, "to_json", None)
    if callable(to_json):
        return jsonable(to_json())
    return str(value)


def _list(value: Any) -> list[Any]:
    return list(value) if isinstance(value, list) else []


def eval_document(outcome: Outcome, report: Report) -> dict[str, Any]:
    """The ``--json`` document (and ``result_json`` handed to publishers)."""
    # The server's objects are passed through as it sent them (``raw``): this document is
    # the one place that shows them unchanged.
    run, gate = outcome.run, outcome.gate
    rows = {it.item_id: it for it in report.items}
    gate_d = gate.raw if gate is not None else {}
    run_d = run.raw if run is not None else {}
    regs = report.outputs.get("regressions", "")
    run_rate = run.aggregate.pass_rate if run is not None else None
    summary = {
        "passRate": number(gate_d["passRate"]) if "passRate" in gate_d else run_rate,
        "regressions": int(regs) if regs.isdigit() else None,  # never an agent failure
        "agentFailures": len(report.agent_failures),
        "scored": number(run_d.get("completed")),
        "total": number(run_d.get("total")),
    }
    doc: dict[str, Any] = {
        "format": FORMAT,
        "mode": outcome.mode,
        "runId": outcome.run_id or "",
        "exitCode": report.exit_code,
        "verdict": report.verdict,
        "gatePassed": gate is not None and gate.passed is True,
        "enforced": bool(outcome.enforced),
        "error": outcome.error,
        "interrupted": bool(outcome.interrupted),
        "run": None if run is None else run_d,
        "gate": None if gate is None else gate_d,
        "gates": _list(gate_d.get("gates")),
    }
    if outcome.policy_eval is not None:
        doc["policyEval"] = outcome.policy_eval.to_json()
    doc["gatesPolicy"] = run_d.get("gatesPolicy")
    doc["drift"] = _list(run_d.get("gateDrift"))
    doc["buildVerdict"] = ({"verdict": report.verdict, "reported": outcome.ci_result_reported}
                           if outcome.run_id else None)
    doc["summary"] = summary
    doc["warnings"] = list(report.warnings)
    if outcome.mode == "run":
        items = []
        for inv in outcome.invocations:
            verdict = rows.get(inv.item_id)
            items.append({
                "itemId": inv.item_id,
                "returncode": inv.returncode,
                "durationS": round(inv.duration_s, 3),
                "timedOut": inv.timed_out,
                "error": inv.error,
                "state": verdict.state if verdict else None,
                "score": verdict.score if verdict else None,
            })
        doc["items"] = items
    saved = serial.to_json(report)
    if report.noise is not None:
        doc["format"] = NOISE_FORMAT
        doc["noise"] = saved["noise"]
    doc["report"] = saved
    return jsonable(doc)


def dumps(doc: dict[str, Any]) -> str:
    return json.dumps(doc, indent=2, ensure_ascii=False, allow_nan=False)
