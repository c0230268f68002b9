"""The ``spans`` table: every OTLP span correlated to a run item, and what is read back from it.

The receiver (``routes/traces.py``) writes spans with :func:`store_spans`; the run logic
(``runs_api``) reads them back with :func:`traced_items` and :func:`item_session` when a run
finishes. Both depend on this module, never on each other's internals.
"""

from __future__ import annotations

import sqlite3
from typing import Any

from neens_sandbox.context import Context
from neens_sandbox.db import dumps, loads, register_schema
from neens_sandbox.scoring import load_pricing, session_from_spans

register_schema("spans", [
    """CREATE TABLE IF NOT EXISTS spans (
        run_id TEXT NOT NULL, item_id TEXT NOT NULL, trace_id TEXT NOT NULL,
        span_id TEXT NOT NULL, parent_span_id TEXT NOT NULL, name TEXT NOT NULL,
        start_ns INTEGER NOT NULL, end_ns INTEGER NOT NULL, attributes TEXT NOT NULL,
        resource TEXT NOT NULL, received_at REAL NOT NULL,
        PRIMARY KEY (run_id, item_id, trace_id, span_id))""",
])


def store_spans(con: sqlite3.Connection, run_id: str, item_id: str,
                spans: list[dict[str, Any]], now: float) -> None:
    """Insert (or replace, on a re-sent span) decoded OTLP spans of one item."""
    con.executemany(
        "INSERT OR REPLACE INTO spans VALUES (?,?,?,?,?,?,?,?,?,?,?)",
        [(run_id, item_id, s["traceId"], s["spanId"], s["parentSpanId"], s["name"],
          s["startNs"], s["endNs"], dumps(s["attributes"]), dumps(s["resource"]), now)
         for s in spans],
    )


def traced_items(ctx: Context, run_id: str) -> set[str]:
    """Ids of the run's items that received at least one span."""
    return {r["item_id"] for r in ctx.db.all(
        "SELECT DISTINCT item_id FROM spans WHERE run_id = ?", (run_id,))}


def item_session(ctx: Context, run_id: str, item_id: str) -> dict[str, Any] | None:
    """The session of one item from every stored span (None when no span arrived)."""
    rows = ctx.db.all("SELECT * FROM spans WHERE run_id = ? AND item_id = ?", (run_id, item_id))
    if not rows:
        return None
    spans = [{
        "traceId": r["trace_id"], "spanId": r["span_id"], "parentSpanId": r["parent_span_id"],
        "name": r["name"], "startNs": r["start_ns"], "endNs": r["end_ns"],
        "attributes": loads(r["attributes"], {}), "resource": loads(r["resource"], {}),
    } for r in rows]
    return session_from_spans(spans, load_pricing(ctx.db))
