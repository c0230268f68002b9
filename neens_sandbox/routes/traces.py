"""``POST /v1/traces``, ``/v1/logs`` and ``/v1/metrics``: the OTLP/HTTP receiver (protobuf
and JSON, authenticated like every route). Spans and log records are stored by
``neens_sandbox.spans``; log records feed the content reading (GenAI events carry the answer
there when an instrumentation is set to capture content as events). Metrics are checked and
dropped, so an exporter that sends them gets no error.

Correlation: ``neens.eval_run_id`` + ``neens.dataset_item_id`` from the
resource attributes, else from the span's own attributes; values are percent-decoded. A
``neens.version_label`` different from the run's label still links (the run records
``labelMismatch``). Old-brand ``beacon.*`` attributes correlate to nothing and stamp
``legacyCorrelationSeenAt`` on the run they name. An item is scored as soon as a root span
(no parent) of its trace arrives; later spans re-score it while the run is not finished.
Log records correlate the same way (their resource carries the same attributes) and re-score
an item that already has its root span. Spans or records naming an unknown run/item, a push
run or a finished run are rejected (``partial_success``); those without correlation keys are
accepted and ignored.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import unquote

from neens_sandbox import otlp, otlp_signals, run_records, runs_api
from neens_sandbox import spans as spans_table
from neens_sandbox.db import dumps, loads
from neens_sandbox.http import ApiError, Request, Response, Route

RUN_KEY, ITEM_KEY, LABEL_KEY = "neens.eval_run_id", "neens.dataset_item_id", "neens.version_label"
LEGACY_PREFIX = "beacon."


def _attr(span: dict[str, Any], key: str) -> str | None:
    value = span["resource"].get(key)
    if value in (None, ""):
        value = span["attributes"].get(key)
    if value in (None, ""):
        return None
    return unquote(str(value))


def _legacy(span: dict[str, Any]) -> tuple[list[str], str | None]:
    keys = sorted({k for k in (*span["resource"], *span["attributes"])
                   if k.startswith(LEGACY_PREFIX)})
    if not keys:
        return [], None
    run = span["resource"].get("beacon.eval_run_id") or span["attributes"].get(
        "beacon.eval_run_id")
    return keys, unquote(str(run)) if run else None


def ingest(req: Request) -> Response:
    try:
        spans, resp_type = otlp.decode(req.body, req.content_type)
    except otlp.OtlpError as exc:
        raise ApiError(400, str(exc)) from None
    rejected, message = _accept(req, spans, logs=False)
    return Response(200, otlp.encode_response(resp_type, rejected, message),
                    content_type=resp_type)


def ingest_logs(req: Request) -> Response:
    try:
        records, resp_type = otlp_signals.decode_logs(req.body, req.content_type)
    except otlp.OtlpError as exc:
        raise ApiError(400, str(exc)) from None
    rejected, message = _accept(req, records, logs=True)
    return Response(200, otlp_signals.encode_logs_response(resp_type, rejected, message),
                    content_type=resp_type)


def ingest_metrics(req: Request) -> Response:
    try:
        _, resp_type = otlp_signals.check_metrics(req.body, req.content_type)
    except otlp.OtlpError as exc:
        raise ApiError(400, str(exc)) from None
    return Response(200, otlp_signals.encode_metrics_response(resp_type),
                    content_type=resp_type)


def _accept(req: Request, spans: list[dict[str, Any]], *, logs: bool) -> tuple[int, str]:
    """Store correlated spans (or log records) and re-score; returns (rejected, message)."""
    ctx = req.ctx
    groups: dict[tuple[str, str], list[dict[str, Any]]] = {}
    labels: dict[tuple[str, str], set[str]] = {}
    legacy: dict[str, set[str]] = {}
    for span in spans:
        keys, legacy_run = _legacy(span)
        if keys and legacy_run:
            legacy.setdefault(legacy_run, set()).update(keys)
        run_id, item_id = _attr(span, RUN_KEY), _attr(span, ITEM_KEY)
        if not run_id or not item_id:
            continue
        groups.setdefault((run_id, item_id), []).append(span)
        label = _attr(span, LABEL_KEY)
        if label is not None:
            labels.setdefault((run_id, item_id), set()).add(label)
    rejected, reasons = 0, []
    # (run_id, item_id) -> (its row, score it now, its spans when nothing of it was stored)
    accepted: dict[tuple[str, str], tuple[Any, bool, list[dict[str, Any]] | None]] = {}
    status: dict[str, str] = {}
    touched: set[str] = set()
    now = ctx.now()
    with ctx.db.tx() as con:
        for run_id, keys in legacy.items():
            row = con.execute("SELECT legacy FROM runs WHERE id = ?", (run_id,)).fetchone()
            if row is not None:
                prev = loads(row["legacy"], None) or {}
                attrs = sorted(set(prev.get("attrs", [])) | keys)
                con.execute("UPDATE runs SET legacy = ? WHERE id = ?",
                            (dumps({"seenAt": prev.get("seenAt", now), "attrs": attrs}), run_id))
        for (run_id, item_id), group in groups.items():
            # the run, its item (None when it has none) and whether the item has anything
            # stored yet, in one query
            run = con.execute(
                "SELECT r.status, r.runner_mode, r.version_label, i.item_id, i.scored_at,"
                " i.judges, i.input, i.expected_output, i.item_id IS NOT NULL AND ("
                "EXISTS (SELECT 1 FROM spans s WHERE s.run_id = r.id AND s.item_id = i.item_id)"
                " OR EXISTS (SELECT 1 FROM events e WHERE e.run_id = r.id AND"
                " e.item_id = i.item_id)) AS stored FROM runs r LEFT JOIN run_items i"
                " ON i.run_id = r.id AND i.item_id = ? WHERE r.id = ?",
                (item_id, run_id)).fetchone()
            item = run if run is not None and run["item_id"] is not None else None
            problem = None
            if run is None:
                problem = f"unknown run {run_id}"
            elif item is None:
                problem = f"run {run_id} has no item {item_id}"
            elif run["runner_mode"] == "push":
                problem = f"run {run_id} is a push run"
            elif run["status"] in runs_api.TERMINAL:
                problem = f"run {run_id} is already {run['status']}"
            if problem:
                rejected += len(group)
                reasons.append(problem)
                continue
            status[run_id] = run["status"]
            if any(lbl != run["version_label"] for lbl in labels.get((run_id, item_id), ())):
                con.execute("UPDATE runs SET label_mismatch = 1 WHERE id = ?", (run_id,))
            # an item is scored once its root span is in, and re-scored by what comes later
            score = item["scored_at"] is not None
            if logs:
                spans_table.store_logs(con, run_id, item_id, group, now)
                accepted[(run_id, item_id)] = (item, score, None)
            else:
                spans_table.store_spans(con, run_id, item_id, group, now)
                score = score or any(not s["parentSpanId"] for s in group)
                if score and not item["stored"] and not runs_api.needs_network(ctx, item):
                    # the common case, scored in this transaction (one commit per request):
                    # the item's first spans, deterministic judges, the run checked above
                    values, stored, scores = runs_api.scored_record(
                        ctx, item, spans_table.first_session(ctx, group))
                    con.execute(runs_api.SCORE_SQL, (*values, run_id, item_id))
                    # decoded now, from what is in hand: /start and polls need not decode it
                    run_records.remember(ctx, run_id, con.execute(
                        "SELECT * FROM run_items WHERE run_id = ? AND item_id = ?",
                        (run_id, item_id)).fetchone(), session=stored, scores=scores)
                    touched.add(run_id)
                    continue
                accepted[(run_id, item_id)] = (item, score, None if item["stored"] else group)
    for (run_id, item_id), (item, score, first) in accepted.items():
        if not score:
            continue
        session = (spans_table.first_session(ctx, first) if first is not None
                   else spans_table.item_session(ctx, run_id, item_id))
        if session is not None and runs_api.record_session(ctx, run_id, item_id, session,
                                                           item=item):
            touched.add(run_id)
    for run_id in touched:
        if ctx.options.finish_on_ingest:
            runs_api.finish_if_captured(ctx, run_id)
        if status[run_id] != "awaiting_traces":  # a run not started has no timer to advance
            runs_api.advance(ctx, run_id)
    return rejected, "; ".join(sorted(set(reasons)))[:500]


ROUTES = [
    Route("POST", "/v1/traces", ingest, chaos=False),
    Route("POST", "/v1/logs", ingest_logs, chaos=False),
    Route("POST", "/v1/metrics", ingest_metrics, chaos=False),
]
