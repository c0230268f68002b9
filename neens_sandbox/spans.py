"""The ``spans`` and ``events`` tables: every OTLP span, span event and log record correlated to
a run item, and what is read back from them.

The receivers (``routes/traces.py``) write with :func:`store_spans` and :func:`store_logs`;
the run logic (``runs_api``) reads back with :func:`traced_items` and :func:`item_session` when
a run finishes. Both depend on this module, never on each other's internals. An event is a
span event (``source`` "span") or a log record (``source`` "log"); GenAI instrumentations put
the content of model calls in either.
"""

from __future__ import annotations

import sqlite3
from typing import Any

from neens_sandbox.context import Context
from neens_sandbox.db import dumps, loads, register_schema
from neens_sandbox.scoring import load_pricing
from neens_sandbox.sessions import session_from_spans

register_schema("spans", [
    """CREATE TABLE IF NOT EXISTS spans (
        run_id TEXT NOT NULL, item_id TEXT NOT NULL, trace_id TEXT NOT NULL,
        span_id TEXT NOT NULL, parent_span_id TEXT NOT NULL, name TEXT NOT NULL,
        start_ns INTEGER NOT NULL, end_ns INTEGER NOT NULL, attributes TEXT NOT NULL,
        resource TEXT NOT NULL, received_at REAL NOT NULL,
        PRIMARY KEY (run_id, item_id, trace_id, span_id))""",
    # the instrumentation scope: two instrumentations describing one model call
    # (sessions.duplicate_calls); added to databases made before it was kept
    """ALTER TABLE spans ADD COLUMN scope TEXT NOT NULL DEFAULT ''""",
    """CREATE TABLE IF NOT EXISTS events (
        run_id TEXT NOT NULL, item_id TEXT NOT NULL, source TEXT NOT NULL,
        trace_id TEXT NOT NULL, span_id TEXT NOT NULL, time_ns INTEGER NOT NULL,
        name TEXT NOT NULL, body TEXT NOT NULL, attributes TEXT NOT NULL,
        received_at REAL NOT NULL)""",
    """CREATE INDEX IF NOT EXISTS events_item ON events (run_id, item_id)""",
])


def store_spans(con: sqlite3.Connection, run_id: str, item_id: str,
                spans: list[dict[str, Any]], now: float) -> None:
    """Insert (or replace, on a re-sent span) decoded OTLP spans of one item."""
    resources: dict[int, str] = {}  # the spans of one resource share its dict: encoded once
    rows = []
    for s in spans:
        resource = resources.get(id(s["resource"]))
        if resource is None:
            resource = resources[id(s["resource"])] = dumps(s["resource"])
        rows.append((run_id, item_id, s["traceId"], s["spanId"], s["parentSpanId"], s["name"],
                     s["startNs"], s["endNs"], dumps(s["attributes"]), resource, now,
                     str(s.get("scope") or "")))
    con.executemany(
        "INSERT OR REPLACE INTO spans (run_id, item_id, trace_id, span_id, parent_span_id, name, "
        "start_ns, end_ns, attributes, resource, received_at, scope) "
        "VALUES (?,?,?,?,?,?,?,?,?,?,?,?)", rows)
    with_events = [s for s in spans if s.get("events")]
    if not with_events:
        return
    # A re-sent span replaces its events too.
    con.executemany(
        "DELETE FROM events WHERE run_id = ? AND item_id = ? AND source = 'span' "
        "AND trace_id = ? AND span_id = ?",
        [(run_id, item_id, s["traceId"], s["spanId"]) for s in with_events])
    con.executemany(
        "INSERT INTO events VALUES (?,?,'span',?,?,?,?,'null',?,?)",
        [(run_id, item_id, s["traceId"], s["spanId"], e["timeNs"], e["name"],
          dumps(e["attributes"]), now) for s in with_events for e in s["events"]],
    )


def store_logs(con: sqlite3.Connection, run_id: str, item_id: str,
               records: list[dict[str, Any]], now: float) -> None:
    """Insert decoded OTLP log records of one item."""
    con.executemany(
        "INSERT INTO events VALUES (?,?,'log',?,?,?,?,?,?,?)",
        [(run_id, item_id, r["traceId"], r["spanId"], r["timeNs"], r["name"],
          dumps(r["body"]), dumps(r["attributes"]), now) for r in records],
    )


def traced_items(ctx: Context, run_id: str) -> set[str]:
    """Ids of the run's items that received at least one span or log record."""
    return {r["item_id"] for r in ctx.db.all(
        "SELECT item_id FROM spans WHERE run_id = ? UNION "
        "SELECT item_id FROM events WHERE run_id = ?", (run_id, run_id))}


def item_session(ctx: Context, run_id: str, item_id: str) -> dict[str, Any] | None:
    """The session of one item from every stored span and event (None when none arrived)."""
    rows = ctx.db.all("SELECT * FROM spans WHERE run_id = ? AND item_id = ? "
                      "ORDER BY trace_id, span_id", (run_id, item_id))
    events = [{
        "spanId": r["span_id"], "timeNs": r["time_ns"], "name": r["name"],
        "body": loads(r["body"]), "attributes": loads(r["attributes"], {}),
    } for r in ctx.db.all("SELECT * FROM events WHERE run_id = ? AND item_id = ? "
                          "ORDER BY time_ns, rowid", (run_id, item_id))]
    if not rows and not events:
        return None
    spans = [{
        "traceId": r["trace_id"], "spanId": r["span_id"], "parentSpanId": r["parent_span_id"],
        "name": r["name"], "startNs": r["start_ns"], "endNs": r["end_ns"],
        "attributes": loads(r["attributes"], {}), "resource": loads(r["resource"], {}),
        "scope": r["scope"],
    } for r in rows]
    return session_from_spans(spans, load_pricing(ctx.db), events)


def first_session(ctx: Context, spans: list[dict[str, Any]]) -> dict[str, Any]:
    """The session of an item whose only stored spans are ``spans``, just stored by
    :func:`store_spans` (nothing of the item was stored before): what :func:`item_session` would
    read back, from the decoded spans instead of the database. Same rows (a span sent twice
    is the last copy), same order, same events (every copy's, by time, as inserted)."""
    latest: dict[tuple[str, str], dict[str, Any]] = {}
    for s in spans:
        latest[(s["traceId"], s["spanId"])] = s
    rows = [{
        "traceId": s["traceId"], "spanId": s["spanId"], "parentSpanId": s["parentSpanId"],
        "name": s["name"], "startNs": s["startNs"], "endNs": s["endNs"],
        "attributes": s["attributes"], "resource": s["resource"],
        "scope": str(s.get("scope") or ""),
    } for _, s in sorted(latest.items(), key=lambda kv: kv[0])]
    events = sorted(({"spanId": s["spanId"], "timeNs": e["timeNs"], "name": e["name"],
                      "body": None, "attributes": e["attributes"]}
                     for s in spans for e in s.get("events") or ()),
                    key=lambda e: e["timeNs"])
    return session_from_spans(rows, load_pricing(ctx.db), events)
