"""``Idempotency-Key`` for the sandbox's creates: a run (``POST /preprod-evals``), a sweep
(``POST /model-sweeps``), a scenario suite (``POST /scenario-suites``) and a suite launch
(``POST /scenario-suites/{id}/launch``, which creates a run). A repeated key answers what the first
create made instead of making another, and ``GET <collection>?idempotency_key=K`` lists it,
so a client whose create timed out can find what it made (table ``create_keys``)."""

from __future__ import annotations

import threading
from collections.abc import Callable

from neens_sandbox.context import Context
from neens_sandbox.db import register_schema
from neens_sandbox.http import ApiError, Request

register_schema("idempotency", [
    """CREATE TABLE IF NOT EXISTS create_keys (
        collection TEXT NOT NULL, key TEXT NOT NULL, object_id TEXT NOT NULL,
        created_at REAL NOT NULL, PRIMARY KEY (collection, key))""",
])

_LOCK = threading.Lock()  # one create per key, even when concurrent


def _checked(value: str | None) -> str | None:
    if value is None:
        return None
    key = value.strip()
    if not key or len(key) > 255 or any(ord(c) < 33 or ord(c) > 126 for c in key):
        raise ApiError(400, "Idempotency-Key must be 1-255 printable ASCII characters")
    return key


def lookup_key(req: Request, what: str) -> str:
    """The ``?idempotency_key=`` of a lookup (a bare listing is refused: 422)."""
    key = _checked(req.query.get("idempotency_key"))
    if key is None:
        raise ApiError(422, f"listing {what} needs ?idempotency_key=<key>")
    return key


def created_with(ctx: Context, collection: str, key: str) -> str | None:
    row = ctx.db.one("SELECT object_id FROM create_keys WHERE collection = ? AND key = ?",
                     (collection, key))
    return row["object_id"] if row is not None else None


def create_once(req: Request, collection: str, make: Callable[[], str]) -> tuple[str, bool]:
    """(id, created): ``make()`` runs unless the request's key already made an object."""
    key = _checked(req.headers.get("idempotency-key"))
    if key is None:
        return make(), True
    with _LOCK:
        existing = created_with(req.ctx, collection, key)
        if existing is not None:
            return existing, False
        object_id = make()
        with req.ctx.db.tx() as con:
            con.execute("INSERT INTO create_keys (collection, key, object_id, created_at) "
                        "VALUES (?,?,?,?)", (collection, key, object_id, req.ctx.now()))
    return object_id, True
