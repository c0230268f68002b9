"""The spans table keeps each span's instrumentation scope (two instrumentations of one model
call are told apart by it), in a database made before it was kept too."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from neens_sandbox.db import Database, loads
from neens_sandbox.spans import store_spans

OLD_SPANS = """CREATE TABLE spans (
    run_id TEXT NOT NULL, item_id TEXT NOT NULL, trace_id TEXT NOT NULL,
    span_id TEXT NOT NULL, parent_span_id TEXT NOT NULL, name TEXT NOT NULL,
    start_ns INTEGER NOT NULL, end_ns INTEGER NOT NULL, attributes TEXT NOT NULL,
    resource TEXT NOT NULL, received_at REAL NOT NULL,
    PRIMARY KEY (run_id, item_id, trace_id, span_id))"""


def _span(span_id: str, scope: str) -> dict:
    return {"traceId": "a" * 32, "spanId": span_id, "parentSpanId": "", "name": "chat",
            "startNs": 1, "endNs": 2, "attributes": {"gen_ai.operation.name": "chat"},
            "resource": {}, "scope": scope, "events": []}


def test_an_old_database_gets_the_column_and_new_spans_keep_their_scope(tmp_path: Path):
    path = tmp_path / "old.db"
    con = sqlite3.connect(path)
    con.execute(OLD_SPANS)
    con.execute("INSERT INTO spans VALUES ('r','i','t','s0','','old',1,2,'{}','{}',0)")
    con.commit()
    con.close()
    for _ in range(2):  # opening again finds the column there: no error
        db = Database.open(path)
        with db.tx() as tx:
            store_spans(tx, "r", "i", [_span("1" * 16, "com.anthropic.sdk.python")], 1.0)
        rows = {r["span_id"]: r for r in db.all("SELECT * FROM spans")}
        db.close()
    assert rows["s0"]["scope"] == ""
    assert rows["1" * 16]["scope"] == "com.anthropic.sdk.python"
    assert loads(rows["1" * 16]["attributes"]) == {"gen_ai.operation.name": "chat"}
