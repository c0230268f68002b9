"""A run's records decoded from SQLite, with each item decoded once and reused while its row is
unchanged (``runs_api.load_run`` is called on every poll, ``/start`` and finish).

A run's rows are read on every call (SQLite hands them over quickly); only the JSON columns
of a row that differs from the one decoded last time are decoded again (``json.loads`` was
most of the cost of reading a 10,000-item run). The comparison is the whole row, so nothing
that writes ``run_items`` needs to tell this module: a changed row is simply decoded again.
The decoded dicts are shared between calls, so callers get shallow copies. The OTLP receiver
also hands over each item it scores (:func:`remember`), decoded from the values it holds.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Any

from neens_sandbox.context import Context
from neens_sandbox.db import loads

_LOCK = threading.Lock()
_RUNS_KEPT = 8  # runs whose decoded items are kept (the runs being polled right now)


def decode_run(row: Any) -> dict[str, Any]:
    run = dict(row)
    for key, default in (("request", {}), ("gate", {}), ("gates", []), ("gates_policy", None),
                         ("gate_drift", []), ("baseline_request", None), ("baseline", None),
                         ("resolution", None), ("extra", {}), ("ci_result", None),
                         ("legacy", None)):
        run[key] = loads(run.get(key), default)
    return run


def decode_item(row: Any) -> dict[str, Any]:
    item = dict(row)
    return _item(item, loads(item.get("session"), None), loads(item.get("scores"), {}))


def _item(item: dict[str, Any], session: dict[str, Any] | None,
          scores: dict[str, Any] | None) -> dict[str, Any]:
    """``item`` (a row as a dict) with its session and scores as given, already decoded."""
    item["session"] = session
    item["scores"] = scores or {}
    item["judges"] = loads(item.get("judges"), []) or []
    item["passed"] = None if item["passed"] is None else bool(item["passed"])
    return item


def _cache(ctx: Context) -> OrderedDict[str, dict[str, tuple[tuple, dict]]]:
    """run id -> item id -> (the raw row, its decoded item), the most recent runs last."""
    return ctx.extras.setdefault("run_items_decoded", OrderedDict())


def remember(ctx: Context, run_id: str, row: Any, *, session: dict[str, Any],
             scores: dict[str, Any]) -> None:
    """An item just scored, as its row now reads, decoded from the values the scorer already
    holds: the run's next read (``/start``, a poll, the finish) finds it decoded, so a run's
    items are decoded as they are scored, never all at once. ``session`` and ``scores``
    must be what the row's JSON columns hold (and are not changed afterwards)."""
    item = _item(dict(row), session, scores)
    cache = _cache(ctx)
    with _LOCK:
        known = cache.get(run_id)
        if known is None:
            known = cache[run_id] = {}
            while len(cache) > _RUNS_KEPT:
                cache.popitem(last=False)
        known[item["item_id"]] = (tuple(row), item)


def decoded_items(ctx: Context, run_id: str, rows: list[Any]) -> list[dict[str, Any]]:
    """``rows`` (the run's ``run_items`` rows, in order) decoded, reusing unchanged ones."""
    cache = _cache(ctx)
    with _LOCK:
        old = cache.get(run_id) or {}
    fresh: dict[str, tuple[tuple, dict]] = {}
    out = []
    for row in rows:
        raw = tuple(row)
        key = row["item_id"]
        hit = old.get(key)
        if hit is None or hit[0] != raw:
            hit = (raw, decode_item(row))
        fresh[key] = hit
        out.append(dict(hit[1]))
    with _LOCK:
        cache[run_id] = fresh
        cache.move_to_end(run_id)
        while len(cache) > _RUNS_KEPT:
            cache.popitem(last=False)
    return out
