"""SQLite storage for the sandbox: one connection behind a lock, WAL, and a schema registry.

Every module that owns tables registers its DDL with :func:`register_schema` at import time
(route modules do so next to their routes); :meth:`Database.open` creates every registered
table with ``CREATE TABLE IF NOT EXISTS``, so a restart on the same file keeps all state.

Use ``with db.tx() as con:`` for anything that writes: it holds the lock, commits on success
and rolls back on any exception, so a rejected request writes nothing. Reads may use
:meth:`Database.all` / :meth:`Database.one`. JSON columns are stored as text; use
:func:`dumps` / :func:`loads`.
"""

from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

_SCHEMAS: dict[str, list[str]] = {}

# Seeded project configuration (see seed.py). Runs, traces and the rest live in their own
# route modules' tables.
CORE_SCHEMA = [
    """CREATE TABLE IF NOT EXISTS pricing (
        model TEXT PRIMARY KEY, input REAL NOT NULL, output REAL NOT NULL)""",
    """CREATE TABLE IF NOT EXISTS judges (id TEXT PRIMARY KEY, body TEXT NOT NULL)""",
    """CREATE TABLE IF NOT EXISTS datasets (
        id TEXT PRIMARY KEY, name TEXT NOT NULL, judges TEXT NOT NULL,
        golden_version_id TEXT, origin TEXT NOT NULL DEFAULT 'seed', body TEXT NOT NULL)""",
    """CREATE TABLE IF NOT EXISTS dataset_versions (
        id TEXT PRIMARY KEY, dataset_id TEXT, label TEXT, golden INTEGER NOT NULL DEFAULT 0,
        origin TEXT NOT NULL DEFAULT 'seed', created_at REAL NOT NULL)""",
    """CREATE TABLE IF NOT EXISTS dataset_items (
        version_id TEXT NOT NULL, position INTEGER NOT NULL, item_id TEXT NOT NULL,
        input TEXT NOT NULL, expected_output TEXT, body TEXT NOT NULL DEFAULT '{}',
        PRIMARY KEY (version_id, item_id))""",
    """CREATE TABLE IF NOT EXISTS connections (id TEXT PRIMARY KEY, body TEXT NOT NULL)""",
    """CREATE TABLE IF NOT EXISTS settings (key TEXT PRIMARY KEY, value TEXT NOT NULL)""",
    """CREATE TABLE IF NOT EXISTS failure_modes (
        id TEXT PRIMARY KEY, name TEXT NOT NULL, body TEXT NOT NULL)""",
    """CREATE TABLE IF NOT EXISTS eval_gates (
        id TEXT PRIMARY KEY, name TEXT NOT NULL, status TEXT NOT NULL, threshold REAL NOT NULL,
        judges TEXT NOT NULL, failure_mode_id TEXT, version_id TEXT NOT NULL,
        body TEXT NOT NULL)""",
    """CREATE TABLE IF NOT EXISTS production (
        id INTEGER PRIMARY KEY AUTOINCREMENT, input TEXT NOT NULL, passed INTEGER,
        score REAL, age_s REAL NOT NULL, body TEXT NOT NULL)""",
]


def register_schema(owner: str, statements: list[str]) -> None:
    """Declare ``owner``'s tables/indexes (idempotent DDL; an ``ALTER TABLE ... ADD COLUMN``
    that finds the column there already is skipped). Call at import time."""
    _SCHEMAS[owner] = list(statements)


register_schema("core", CORE_SCHEMA)


# json.dumps with options builds a new encoder on every call; the columns use this one
_ENCODE = json.JSONEncoder(separators=(",", ":"), allow_nan=False).encode


def dumps(value: Any) -> str:
    return _ENCODE(value)


def loads(text: str | None, default: Any = None) -> Any:
    if text is None or text == "":
        return default
    return json.loads(text)


class Database:
    """One SQLite connection shared by every thread, serialised by a re-entrant lock."""

    def __init__(self, path: str | Path) -> None:
        self.path = str(path)
        self.lock = threading.RLock()
        self.con = sqlite3.connect(
            self.path, check_same_thread=False, isolation_level=None, timeout=30
        )
        self.con.row_factory = sqlite3.Row
        self._depth = 0
        self._memo: dict[str, Any] = {}

    @classmethod
    def open(cls, path: str | Path) -> Database:
        db = cls(path)
        with db.lock:
            db.con.execute("PRAGMA journal_mode=WAL")
            db.con.execute("PRAGMA synchronous=NORMAL")
            db.con.execute("PRAGMA foreign_keys=OFF")
        db.ensure_schema()
        return db

    def ensure_schema(self) -> None:
        """Create every registered table (safe to call again after new modules register)."""
        with self.tx() as con:
            for statements in _SCHEMAS.values():
                for sql in statements:
                    try:
                        con.execute(sql)
                    except sqlite3.OperationalError as exc:
                        # ALTER TABLE ... ADD COLUMN on a table that already has it
                        if "duplicate column" not in str(exc):
                            raise

    @contextmanager
    def tx(self) -> Iterator[sqlite3.Connection]:
        """A write transaction (nested calls join the outer one)."""
        with self.lock:
            outer = self._depth == 0
            if outer:
                self.con.execute("BEGIN IMMEDIATE")
            self._depth += 1
            try:
                yield self.con
            except BaseException:
                self._depth -= 1
                if outer:
                    self.con.execute("ROLLBACK")
                raise
            self._depth -= 1
            if outer:
                self.con.execute("COMMIT")

    def all(self, sql: str, args: tuple | list = ()) -> list[sqlite3.Row]:
        with self.lock:
            return self.con.execute(sql, args).fetchall()

    def one(self, sql: str, args: tuple | list = ()) -> sqlite3.Row | None:
        with self.lock:
            return self.con.execute(sql, args).fetchone()

    def memo(self, key: str, load: Callable[[], Any]) -> Any:
        """``load()``, kept until :meth:`forget`. For the seeded configuration (pricing,
        judges, the LLM setting), which only ``seed.apply_seed`` writes (and then calls
        :meth:`forget`); the OTLP receiver would read it on every request otherwise."""
        with self.lock:
            if key not in self._memo:
                self._memo[key] = load()
            return self._memo[key]

    def forget(self) -> None:
        """Drop what :meth:`memo` keeps (call after writing the seeded configuration)."""
        with self.lock:
            self._memo.clear()

    def close(self) -> None:
        with self.lock:
            self.con.close()
