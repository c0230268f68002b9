"""An item's scores, stored: a captured session run through the item's judges and written to
its row, or the error that kept it from being scored. :mod:`neens_sandbox.runs_api` re-exports
these for the routes (the OTLP receiver, push runs, the finish)."""

from __future__ import annotations

from typing import Any

from neens_sandbox.context import Context
from neens_sandbox.db import dumps, loads
from neens_sandbox.evaluate import TERMINAL
from neens_sandbox.scoring import load_judges, load_llm, score_session

_NOT_TERMINAL = ("(? OR (SELECT status FROM runs WHERE id = ?) NOT IN ("
                 + ",".join(f"'{status}'" for status in TERMINAL) + "))")


def record_session(ctx: Context, run_id: str, item_id: str, session: dict[str, Any],
                   *, allow_terminal: bool = False, item: Any = None) -> bool:
    """Score ``session`` for one item and store it. False when the run/item cannot take it.
    ``item``: the item's ``judges``, ``input`` and ``expected_output`` columns when the
    caller has them (the OTLP receiver reads them with the run)."""
    if item is None:
        item = ctx.db.one(
            "SELECT r.status, i.judges, i.input, i.expected_output FROM runs r JOIN run_items"
            " i ON i.run_id = r.id WHERE r.id = ? AND i.item_id = ?", (run_id, item_id))
        if item is None or (item["status"] in TERMINAL and not allow_terminal):
            return False
    values = scored_values(ctx, item, session)
    with ctx.db.lock:  # one statement: its own transaction, the run's status checked in it
        cur = ctx.db.con.execute(
            SCORE_SQL + " AND " + _NOT_TERMINAL,
            (*values, run_id, item_id, int(allow_terminal), run_id))
        return cur.rowcount == 1


SCORE_SQL = ("UPDATE run_items SET session = ?, scores = ?, passed = ?, score = ?, reason = ?,"
             " error = ?, scored_at = ? WHERE run_id = ? AND item_id = ?")


def needs_network(ctx: Context, item: Any) -> bool:
    """Whether scoring this item calls out (an LLM judge): never under the database lock."""
    return any(j.get("kind") == "llm" for j in load_judges(ctx.db, loads(item["judges"], [])))


def scored_values(ctx: Context, item: Any, session: dict[str, Any]) -> tuple[Any, ...]:
    """The item's judges run on ``session``: the first seven values of :data:`SCORE_SQL`."""
    return scored_record(ctx, item, session)[0]


def scored_record(ctx: Context, item: Any, session: dict[str, Any]
                  ) -> tuple[tuple[Any, ...], dict[str, Any], dict[str, Any]]:
    """:func:`scored_values`, with the session as stored and the scores (what the values'
    JSON columns hold, for :func:`neens_sandbox.run_records.remember`)."""
    judges = load_judges(ctx.db, loads(item["judges"], []))
    result = score_session(judges, session, item_input=item["input"],
                           expected=item["expected_output"], llm=load_llm(ctx.db))
    cap = ctx.options.output_cap
    stored = dict(session)
    if isinstance(stored.get("output"), str) and len(stored["output"]) > cap:
        stored["output"] = stored["output"][:cap]
    passed = result["passed"]
    values = (dumps(stored), dumps(result["scores"]), None if passed is None else int(passed),
              result["score"], result["reason"], result["error"], ctx.now())
    return values, stored, result["scores"]


def record_error(ctx: Context, run_id: str, item_id: str, error: str,
                 session: dict[str, Any] | None = None, *, if_pending: bool = False) -> None:
    """Mark an item unscored with ``error`` (``if_pending``: only if nothing landed yet)."""
    guard = " AND passed IS NULL AND error IS NULL AND session IS NULL" if if_pending else ""
    with ctx.db.tx() as con:
        con.execute(
            "UPDATE run_items SET error = ?, passed = NULL, score = NULL, session = ?,"
            " scored_at = ? WHERE run_id = ? AND item_id = ?" + guard,
            (error, dumps(session) if session else None, ctx.now(), run_id, item_id),
        )
