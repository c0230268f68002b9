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

A run's per-item lists (``run.items``, ``items``, ``report.items``, ``report.agent_failures``)
may be spilled to disk (``neens_action/spill.py``): the document then holds a
:class:`Streamed` list in their place, and :func:`write` writes the same bytes
:func:`dumps` would, one element at a time (memory flat in the item count).
"""

from __future__ import annotations

import json
import math
import uuid
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import asdict, fields, is_dataclass
from json.encoder import encode_basestring as _string  # the C one
from typing import Any, TextIO

from neens_action.api.values import number
from neens_action.outcome import Outcome
from neens_action.report import serial
from neens_action.report.model import ItemVerdict, Report
from neens_action.spill import Cursor, RunRows, Spill

FORMAT = 2  # 2: adds ``report`` (the rendered surfaces' input)
NOISE_FORMAT = 3  # 3: adds ``noise``; only documents that carry it (repeats or history)


class Streamed(Sequence[Any]):
    """A long list of a document, made one element at a time each time it is read: ``make``
    returns a fresh iterator of JSON values or dataclass records (read as
    ``jsonable(asdict(record))``), ``size`` is their count."""

    def __init__(self, make: Callable[[], Iterable[Any]], size: int) -> None:
        self.make = make
        self.size = size

    def __iter__(self) -> Iterator[Any]:
        return (jsonable(asdict(v) if is_dataclass(v) and not isinstance(v, type) else v)
                for v in self.make())

    def __len__(self) -> int:
        return self.size

    def __getitem__(self, index: Any) -> Any:
        return list(self)[index]


def jsonable(value: Any) -> Any:
    if isinstance(value, Streamed):
        return value
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
    gate_d = gate.raw if gate is not None else {}
    run_d = run.raw if run is not None else {}
    if run is not None and isinstance(run.items, RunRows) and "items" in run_d:
        spilled = run.items
        run_d = {**run_d, "items": Streamed(spilled.raw_rows, len(spilled))}
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
        invocations = outcome.invocations
        make = lambda: _item_rows(invocations, report.items)  # noqa: E731
        doc["items"] = (Streamed(make, len(invocations)) if isinstance(invocations, Spill)
                        else list(make()))
    saved = serial.to_json(report, streamed=_streamed)
    if report.noise is not None:
        doc["format"] = NOISE_FORMAT
        doc["noise"] = saved["noise"]
    doc["report"] = saved
    return jsonable(doc)


def _item_rows(invocations: Iterable[Any], verdicts: Sequence[ItemVerdict]
               ) -> Iterator[dict[str, Any]]:
    """The ``items`` rows: each invocation with its item's scored state."""
    rows: Cursor[ItemVerdict] = Cursor(verdicts, lambda it: it.item_id)
    for inv in invocations:
        verdict = rows.get(inv.item_id)
        yield {
            "itemId": inv.item_id,
            "returncode": inv.returncode,
            "durationS": round(inv.duration_s, 3),
            "timedOut": inv.timed_out,
            "error": inv.error,
            "state": verdict.state if verdict else None,
            "score": verdict.score if verdict else None,
        }


def _streamed(values: Sequence[Any], convert: Callable[[Any], Any]) -> Any:
    """A report list for :func:`serial.to_json` (``convert`` is ``asdict``): streamed when
    it is spilled."""
    if isinstance(values, Spill):
        return Streamed(lambda: iter(values), len(values))
    return [convert(v) for v in values]


_INFINITIES = (math.inf, -math.inf)


def _text(value: Any, indent: str) -> str:
    """``json.dumps(jsonable(value), indent=2)`` with every line after the first indented by
    ``indent``, where ``value`` may hold dataclass records (as ``asdict``): the same text,
    made without the pure-Python encoder's generators (several times faster)."""
    if isinstance(value, str):
        return _string(value)
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, int):
        return int.__repr__(value)
    if isinstance(value, float):
        return "null" if value != value or value in _INFINITIES else float.__repr__(value)
    inner = indent + "  "
    if isinstance(value, (list, tuple)):
        if not value:
            return "[]"
        return ("[\n" + inner + (",\n" + inner).join(_text(v, inner) for v in value)
                + "\n" + indent + "]")
    if isinstance(value, Mapping):
        pairs = value.items()
    elif is_dataclass(value) and not isinstance(value, type):
        pairs = ((f.name, getattr(value, f.name)) for f in fields(value))
    else:
        return _text(jsonable(value), indent)
    body = (",\n" + inner).join(
        _string(k if isinstance(k, str) else str(k)) + ": " + _text(v, inner) for k, v in pairs)
    return "{\n" + inner + body + "\n" + indent + "}" if body else "{}"


def _dumps(value: Any, allow_nan: bool = False) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False, allow_nan=allow_nan)


def chunks(doc: Any, *, allow_nan: bool = False) -> Iterator[str]:
    """The text of :func:`dumps`, in pieces: every :class:`Streamed` list one element a piece
    (``allow_nan``: as ``json.dumps`` with it)."""
    streamed: list[Streamed] = []
    token = uuid.uuid4().hex  # no server text can guess the placeholders

    def mark(value: Any) -> Any:
        if isinstance(value, Streamed):
            streamed.append(value)
            return f"\x00{token}-{len(streamed) - 1}\x00"
        if isinstance(value, dict):
            return {k: mark(v) for k, v in value.items()}
        if isinstance(value, list):
            return [mark(v) for v in value]
        return value

    text = _dumps(mark(doc), allow_nan)
    pos = 0
    for index, rows in enumerate(streamed):
        placeholder = f'"\\u0000{token}-{index}\\u0000"'
        at = text.index(placeholder, pos)
        line = text.rfind("\n", 0, at) + 1
        indent = " " * (len(text[line:at]) - len(text[line:at].lstrip(" ")))
        yield text[pos:at]
        pos = at + len(placeholder)
        inner = "\n" + indent + "  "
        first = True
        for row in rows.make():
            yield ("[" if first else ",") + inner + _text(row, indent + "  ")
            first = False
        yield "[]" if first else "\n" + indent + "]"
    yield text[pos:]


def dumps(doc: dict[str, Any]) -> str:
    return "".join(chunks(doc))


def write(doc: dict[str, Any], out: TextIO) -> None:
    """``dumps(doc)`` and a newline, written to ``out`` piece by piece."""
    for piece in chunks(doc):
        out.write(piece)
    out.write("\n")
