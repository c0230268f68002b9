"""A :class:`Report` as JSON and back, so a saved result re-renders every surface.

The JSON result file (``neens-result.json``) carries ``report`` (this document); ``neens
report RESULT.json`` reads it back and renders the job summary byte for byte as the CI step
wrote it, with no CI environment and no server.

``judges`` (one line per judge: scored, passed, mean score, the baseline's pass rate and mean,
improved and regressed items) and ``groups`` (the failing items by state and failing judges:
``status``, ``failing``, ``why``, ``items``) were added later: a report without them (no item
scored by a judge) has neither key, so its document is what it was before them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import asdict, fields, replace
from typing import Any

from neens_action.report.model import (
    AgentFailure,
    Chart,
    FailureGroup,
    ItemVerdict,
    JudgeScore,
    JudgeSummary,
    NoiseItem,
    NoiseView,
    PolicyLine,
    RepLine,
    Report,
    Table,
    TrendPoint,
)

REPORT_FORMAT = 1
NOISE_FORMAT = 2  # a report that carries ``noise`` (repeats or history); else 1, unchanged


def to_json(report: Report, *,
            streamed: Callable[[Sequence[Any], Callable[[Any], Any]], Any] | None = None
            ) -> dict[str, Any]:
    """The report as JSON values. ``streamed(values, convert)`` makes the per-item lists
    (``items``, ``agent_failures``) instead of a list of ``convert(value)`` (the ``--json``
    writer streams a spilled list; ``neens_action/report/render/json.py``)."""
    if streamed is None:
        doc = asdict(report)
    else:
        doc = asdict(replace(report, items=[], agent_failures=[]))
        doc["items"] = streamed(report.items, asdict)
        doc["agent_failures"] = streamed(report.agent_failures, asdict)
    doc["facts"] = [list(f) for f in report.facts]
    doc["header"] = [list(h) for h in report.header]
    for key in ("judges", "groups"):  # added later: absent when empty, as before them
        if not doc[key]:
            del doc[key]
    if report.noise is None:
        del doc["noise"]  # without repeats or history the document is today's, byte for byte
        return {"format": REPORT_FORMAT, **doc}
    return {"format": NOISE_FORMAT, **doc}


def _noise(data: Any) -> NoiseView | None:
    """The saved noise view (its shape was checked by ``neens_action/cli/report_doc.py``)."""
    if not data:
        return None
    values = _known(NoiseView, data)
    for key in ("regressed", "improved", "flaky"):
        values[key] = [NoiseItem(**_known(NoiseItem, i)) for i in data.get(key) or []]
    values["rules"] = [PolicyLine(**_known(PolicyLine, p)) for p in data.get("rules") or []]
    values["trend"] = [TrendPoint(**_known(TrendPoint, t)) for t in data.get("trend") or []]
    values["reps"] = [RepLine(**_known(RepLine, r)) for r in data.get("reps") or []]
    values["facts"] = {str(k): str(v) for k, v in (data.get("facts") or {}).items()}
    return NoiseView(**values)


def _pairs(value: Any) -> list[tuple[str, str]]:
    return [(str(a), str(b)) for a, b in value or []]


def _known(cls: type, data: dict[str, Any]) -> dict[str, Any]:
    names = {f.name for f in fields(cls)}
    return {k: v for k, v in data.items() if k in names}


def _item(data: dict[str, Any]) -> ItemVerdict:
    values = _known(ItemVerdict, data)
    values["judges"] = [JudgeScore(**_known(JudgeScore, j)) for j in data.get("judges") or []]
    return ItemVerdict(**values)


def from_json(doc: dict[str, Any]) -> Report:
    """The Report saved by :func:`to_json` (unknown keys are ignored). ``doc`` has been
    checked against the shape of :class:`Report` first (an untrusted file is checked by
    :func:`neens_action.cli.report_doc.load`, which is how it reaches here)."""
    values = _known(Report, doc)
    values["facts"] = _pairs(doc.get("facts"))
    values["header"] = _pairs(doc.get("header"))
    values["tables"] = [Table(**_known(Table, t)) for t in doc.get("tables") or []]
    values["policy"] = [PolicyLine(**_known(PolicyLine, p)) for p in doc.get("policy") or []]
    values["items"] = [_item(i) for i in doc.get("items") or []]
    values["charts"] = [Chart(**_known(Chart, c)) for c in doc.get("charts") or []]
    values["agent_failures"] = [AgentFailure(**_known(AgentFailure, a))
                                for a in doc.get("agent_failures") or []]
    values["noise"] = _noise(doc.get("noise"))
    values["judges"] = [JudgeSummary(**_known(JudgeSummary, j)) for j in doc.get("judges") or []]
    values["groups"] = [FailureGroup(**_known(FailureGroup, g)) for g in doc.get("groups") or []]
    return Report(**values)
