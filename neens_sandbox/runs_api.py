"""The sandbox's internal run API: what the HTTP routes call, and what other route modules
(model sweeps, scenario suites) reuse. Every function takes the request's
:class:`~neens_sandbox.context.Context` (``req.ctx``) and raises
:class:`~neens_sandbox.http.ApiError` for client errors.

Creating and reading
  create_run(ctx, body, *, extra=None) -> str      POST /preprod-evals (snake_case); returns id.
      ``extra`` (a JSON dict) is stored and echoed as ``run["extra"]`` (e.g. sweep/arm/rep).
  run_view(ctx, run_id, *, items=True) -> dict     the run object + items, aggregate...
  load_run(ctx, run_id) -> (run, items)            decoded records (404 if unknown)
  items_view(ctx, run_id) -> list[dict]            item rows {item_id, input, expected_output}
  create_dataset_version(db, version_id=, dataset_id=, items=, label=, golden=)  (seed.py)

Lifecycle
  start_run(ctx, run_id) -> dict                   POST .../start (409 when terminal or push)
  cancel_run(ctx, run_id) -> dict                  POST .../cancel (409 when terminal)
  advance(ctx, run_id) -> None                     time-based transitions; call freely
  finish_if_captured(ctx, run_id)                  (--finish-on-ingest) start a captured run
  finish_run(ctx, run_id) -> None                  score leftovers, set the terminal status
  record_session(ctx, run_id, item_id, session)    score a captured session (push or OTLP)
  record_error(ctx, run_id, item_id, error)        an item that could not be captured
      (these two, and the scoring helpers the OTLP receiver uses, live in item_scores.py)

Figures (pure functions in ``evaluate.py`` over ``load_run`` records)
  figures(ctx, run_id) -> (run, {aggregate, comparison, rows, gate, metrics, items})
      (cached once the run is terminal: call this rather than recomputing)
  gate_view(ctx, run_id), comparison_view(ctx, run_id, spec=None), metrics_view(ctx, run_id)
  pricing: ``scoring.load_pricing(db)``, ``scoring.price(pricing, model, in, out)``

Statuses: awaiting_traces -> running -> completed | completed_with_regressions | failed, and
cancelled from any non-terminal status.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Any

from neens_sandbox import baselines, evaluate, spans
from neens_sandbox.context import Context
from neens_sandbox.create import create_run
from neens_sandbox.http import ApiError
from neens_sandbox.item_scores import (
    SCORE_SQL,
    needs_network,
    record_error,
    record_session,
    scored_record,
    scored_values,
)
from neens_sandbox.run_records import decode_run, decoded_items
from neens_sandbox.seed import create_dataset_version

__all__ = [
    "SCORE_SQL", "TERMINAL", "advance", "cancel_run", "comparison_view",
    "create_dataset_version", "create_run", "figures", "finish_if_captured", "finish_run",
    "gate_view", "items_view", "load_run", "metrics_view", "needs_network", "record_error",
    "record_session", "run_view", "scored_record", "scored_values", "start_run",
]

TERMINAL = evaluate.TERMINAL
NO_TRACE = "no trace captured"
VIEW_OUTPUT_CAP = 1000


def load_run(ctx: Context, run_id: str) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    with ctx.db.lock:
        row = ctx.db.one("SELECT * FROM runs WHERE id = ?", (run_id,))
        if row is None:
            raise ApiError(404, f"run {run_id} not found")
        items = ctx.db.all("SELECT * FROM run_items WHERE run_id = ? ORDER BY position",
                           (run_id,))
    return decode_run(row), decoded_items(ctx, run_id, items)


def _comparison(ctx: Context, run: dict, items: list[dict],
                baseline: dict | None = None, override: bool = False) -> dict[str, Any]:
    base = baseline if override else run["baseline"]
    cohort = baselines.cohort(ctx.db, base, evaluate.compared_items(run, items))
    return evaluate.comparison(run, items, cohort, base)


def _item_view(item: dict[str, Any]) -> dict[str, Any]:
    s = item["session"] or {}
    out = s.get("output")
    if isinstance(out, str) and len(out) > VIEW_OUTPUT_CAP:
        out = out[: VIEW_OUTPUT_CAP - 1] + "…"
    return {
        "datasetVersionItemId": item["item_id"], "input": item["input"],
        "expectedOutput": item["expected_output"], "passed": item["passed"],
        "score": item["score"], "scores": item["scores"], "reason": item["reason"],
        "error": item["error"], "output": out, "latencyMs": s.get("latencyMs"),
        "costUsd": s.get("costUsd"), "model": s.get("model"), "steps": s.get("steps"),
        "inputTokens": s.get("inputTokens"), "outputTokens": s.get("outputTokens"),
        "gateId": item["gate_id"],
        "captured": item["session"] is not None,  # a complete trace (or push answer) is held
    }


def _iso(ts: float | None) -> str | None:
    if ts is None:
        return None
    from datetime import datetime, timezone

    return datetime.fromtimestamp(ts, timezone.utc).isoformat().replace("+00:00", "Z")


_CACHE_LOCK = threading.Lock()
_CACHE_SIZE = 16


def figures(ctx: Context, run_id: str, *, item_views: bool = True,
            settle: bool = True) -> tuple[dict[str, Any], dict[str, Any]]:
    """(run record, computed figures) after advancing the run. A terminal run's figures
    never change, so they are cached in memory (a restart recomputes them).

    Figures: ``aggregate``, ``comparison``, ``rows`` (eval gates), ``gate`` (gate answer),
    ``metrics`` (rollup), ``items`` (the run object's item views, made only when asked for:
    a terminal run's cached figures gain them on the first read with items). A running run's
    figures without ``item_views`` (a poll, ``/start``) hold only the first three.
    ``settle=False``: the figures as they are, without first finishing a run whose time
    has come.
    """
    if settle:
        advance(ctx, run_id)
    row = ctx.db.one("SELECT * FROM runs WHERE id = ?", (run_id,))
    if row is None:
        raise ApiError(404, f"run {run_id} not found")
    run = decode_run(row)
    terminal = run["status"] in TERMINAL
    if terminal:
        with _CACHE_LOCK:
            figs = _figures_cache(ctx).get(run_id)
        if figs is not None:
            if item_views and "items" not in figs:  # first read with items: made once
                _, items = load_run(ctx, run_id)
                figs["items"] = [_item_view(i) for i in items]
            return run, figs
    _, items = load_run(ctx, run_id)
    figs = _figures_of(run, items, _comparison(ctx, run, items), full=terminal or item_views)
    if item_views:  # the item views only when asked: a poll with ?items=false never is
        figs["items"] = [_item_view(i) for i in items]
    if terminal:
        _keep_figures(ctx, run_id, figs)
    return run, figs


def _figures_of(run: dict[str, Any], items: list[dict[str, Any]], cmp: dict[str, Any], *,
                full: bool, gate: dict[str, Any] | None = None) -> dict[str, Any]:
    """The figures of ``run`` from its decoded items and comparison (``full``: with the
    gate answer and the metrics, which a poll of a running run without items never reads)."""
    agg = evaluate.aggregate(items)
    compared = cmp["baseline"]["compared"]
    agg.update(regressions=len(cmp["regressions"]) if compared else 0,
               baselineCompared=compared)
    figs = {"aggregate": agg, "comparison": cmp, "rows": evaluate.gate_rows(run, items)}
    if full:
        figs.update(gate=gate or evaluate.gate_verdict(run, items, cmp),
                    metrics=evaluate.metrics(run, items))
    return figs


def _figures_cache(ctx: Context) -> OrderedDict[str, dict[str, Any]]:
    return ctx.extras.setdefault("run_figures", OrderedDict())


def _keep_figures(ctx: Context, run_id: str, figs: dict[str, Any]) -> None:
    """A terminal run's figures, kept (they never change)."""
    cache = _figures_cache(ctx)
    with _CACHE_LOCK:
        cache[run_id] = figs
        while len(cache) > _CACHE_SIZE:
            cache.popitem(last=False)


def run_view(ctx: Context, run_id: str, *, items: bool = True,
             settle: bool = True) -> dict[str, Any]:
    run, figs = figures(ctx, run_id, item_views=items, settle=settle)
    agg = figs["aggregate"]
    req = run["request"]
    legacy = run["legacy"] or {}
    view = {
        "id": run["id"], "name": run["name"], "status": run["status"],
        "versionLabel": run["version_label"], "datasetId": run["dataset_id"],
        "datasetVersionId": run["dataset_version_id"], "runnerMode": run["runner_mode"],
        "agentConnectionId": run["connection_id"],
        "completed": agg["scored"], "total": agg["total"],
        "createdAt": _iso(run["created_at"]), "startedAt": _iso(run["started_at"]),
        "finishedAt": _iso(run["finished_at"]),
        "baseline": run["baseline"], "baselineResolution": run["resolution"],
        "gate": run["gate"], "gates": figs["rows"],
        "gatesPolicy": run["gates_policy"], "gateDrift": run["gate_drift"],
        "aggregate": agg, "regressions": agg["regressions"],
        "labelMismatch": bool(run["label_mismatch"]),
        "legacyCorrelationSeenAt": _iso(legacy.get("seenAt")),
        "legacyCorrelationAttrs": legacy.get("attrs", []),
        "ciResult": run["ci_result"],
        "buildVerdict": (run["ci_result"] or {}).get("verdict") or "unknown",
        "gitSha": req.get("git_sha"), "branch": req.get("branch"),
        "prNumber": req.get("pr_number"), "prUrl": req.get("pr_url"),
        "repo": req.get("repo"), "source": req.get("source"),
        "error": run["error"], "extra": run["extra"],
    }
    if items:
        view["items"] = figs["items"]
    return view


def items_view(ctx: Context, run_id: str) -> list[dict[str, Any]]:
    with ctx.db.lock:  # only the frozen columns: nothing to decode
        if ctx.db.one("SELECT 1 FROM runs WHERE id = ?", (run_id,)) is None:
            raise ApiError(404, f"run {run_id} not found")
        rows = ctx.db.all("SELECT item_id, input, expected_output, gate_id FROM run_items"
                          " WHERE run_id = ? ORDER BY position", (run_id,))
    return [dict(r) for r in rows]


def _run_record(ctx: Context, run_id: str) -> dict[str, Any]:
    row = ctx.db.one("SELECT * FROM runs WHERE id = ?", (run_id,))
    if row is None:
        raise ApiError(404, f"run {run_id} not found")
    return decode_run(row)


# -- lifecycle ------------------------------------------------------------------------------
def start_run(ctx: Context, run_id: str, *, items: bool = False) -> dict[str, Any]:
    """Start. Answers the run object; its ``items`` only when asked (``items``): the client does
    not read the answer, and a 50,000-item run's item views are megabytes."""
    run = _run_record(ctx, run_id)
    if run["status"] in TERMINAL:
        raise ApiError(409, f"run {run_id} is already {run['status']}")
    if run["runner_mode"] == "push":
        raise ApiError(409, f"run {run_id} is a push run: trigger it with POST /run")
    if run["status"] == "awaiting_traces":
        now = ctx.now()
        with ctx.db.tx() as con:
            con.execute("UPDATE runs SET status = 'running', started_at = ? WHERE id = ? AND"
                        " status = 'awaiting_traces'", (now, run_id))
        opts = ctx.options
        ctx.later(opts.score_delay + 0.01, lambda: advance(ctx, run_id))
        ctx.later(opts.score_delay + opts.grace + 0.05, lambda: advance(ctx, run_id))
        ctx.log(f"run {run_id} started")
        # Finishing is left to the timers: a 50,000-item run takes seconds to finish, and
        # the client waits for this answer with a read timeout (it polls for the rest).
        return run_view(ctx, run_id, items=items, settle=False)
    advance(ctx, run_id)
    return run_view(ctx, run_id, items=items)


def cancel_run(ctx: Context, run_id: str) -> dict[str, Any]:
    with ctx.db.tx() as con:
        run, _ = load_run(ctx, run_id)
        if run["status"] in TERMINAL:
            raise ApiError(409, f"run {run_id} is already {run['status']}")
        con.execute("UPDATE runs SET status = 'cancelled', finished_at = ?, gate_passed = 0"
                    " WHERE id = ?", (ctx.now(), run_id))
    ctx.log(f"run {run_id} cancelled")
    return run_view(ctx, run_id)


def advance(ctx: Context, run_id: str) -> None:
    """Finish a running run when its time has come (safe to call from any thread)."""
    row = ctx.db.one("SELECT status, started_at, runner_mode FROM runs WHERE id = ?", (run_id,))
    if row is None or row["status"] != "running" or row["started_at"] is None:
        return
    now = ctx.now()
    ready_at = row["started_at"] + ctx.options.score_delay
    if now < ready_at:
        return
    pending = ctx.db.one("SELECT COUNT(*) AS n FROM run_items WHERE run_id = ? AND passed IS"
                         " NULL AND error IS NULL", (run_id,))["n"]
    if row["runner_mode"] == "push":
        if pending == 0:
            finish_run(ctx, run_id)
        return
    if pending == 0 or now >= ready_at + ctx.options.grace:
        finish_run(ctx, run_id)


def finish_if_captured(ctx: Context, run_id: str) -> None:
    """``--finish-on-ingest``: an awaiting pull run whose every item is done finishes now."""
    with ctx.db.tx() as con:
        pending = con.execute(
            "SELECT COUNT(*) FROM run_items WHERE run_id = ? AND passed IS NULL AND error IS"
            " NULL", (run_id,)).fetchone()[0]
        cur = con.execute(
            "UPDATE runs SET status = 'running', started_at = ? WHERE id = ? AND status ="
            " 'awaiting_traces' AND runner_mode = 'runner' AND ? = 0", (ctx.now(), run_id,
                                                                         pending))
        if cur.rowcount != 1:
            return
    ctx.log(f"run {run_id} fully captured: finishing on ingest")
    ctx.later(ctx.options.score_delay + 0.01, lambda: advance(ctx, run_id))


def finish_run(ctx: Context, run_id: str) -> None:
    with ctx.db.lock:  # the ids left to close: nothing to decode yet (decoded once, below)
        row = ctx.db.one("SELECT status FROM runs WHERE id = ?", (run_id,))
        if row is None:
            raise ApiError(404, f"run {run_id} not found")
        if row["status"] in TERMINAL:
            return
        pending = [r["item_id"] for r in ctx.db.all(
            "SELECT item_id FROM run_items WHERE run_id = ? AND passed IS NULL AND error IS"
            " NULL ORDER BY position", (run_id,))]
    traced = spans.traced_items(ctx, run_id) if pending else set()
    missing = []
    for item_id in pending:
        session = spans.item_session(ctx, run_id, item_id) if item_id in traced else None
        if session is not None:
            record_session(ctx, run_id, item_id, session, allow_terminal=True)
        else:
            missing.append(item_id)
    if missing:  # one transaction, not one per item (a 10,000-item run finishes in ms)
        now = ctx.now()
        with ctx.db.tx() as con:
            con.executemany(
                "UPDATE run_items SET error = ?, passed = NULL, score = NULL, session = NULL,"
                " scored_at = ? WHERE run_id = ? AND item_id = ? AND passed IS NULL AND error"
                " IS NULL AND session IS NULL", [(NO_TRACE, now, run_id, i) for i in missing])
    with ctx.db.tx() as con:
        run, items = load_run(ctx, run_id)
        if run["status"] in TERMINAL:
            return
        scored = sum(1 for i in items if i["passed"] is not None)
        hard = [i["error"] for i in items if i["error"] and i["error"] != NO_TRACE]
        status, error = "completed", None
        if items and scored == 0 and hard and len(hard) == len(items):
            status, error = "failed", f"no item could be scored: {hard[0]}"
        run["status"] = status
        run["error"] = error
        cmp = _comparison(ctx, run, items)
        if status == "completed" and cmp["baseline"]["compared"] and cmp["regressions"]:
            status = run["status"] = "completed_with_regressions"
        gate = evaluate.gate_verdict(run, items, cmp)
        con.execute("UPDATE runs SET status = ?, error = ?, finished_at = ?, gate_passed = ?"
                    " WHERE id = ?", (status, error, ctx.now(), int(gate["passed"]), run_id))
    # the terminal figures from what is in hand (the next read need not compute them again):
    # they read only the run's id, status, error, gate settings, gates and dataset
    _keep_figures(ctx, run_id, _figures_of(run, items, cmp, full=True, gate=gate))
    ctx.log(f"run {run_id} finished: {status} (gate {'passed' if gate['passed'] else 'failed'})")


# -- figures --------------------------------------------------------------------------------
def gate_view(ctx: Context, run_id: str) -> dict[str, Any]:
    return figures(ctx, run_id)[1]["gate"]


def comparison_view(ctx: Context, run_id: str, spec: str | None = None) -> dict[str, Any]:
    if not spec:
        return figures(ctx, run_id)[1]["comparison"]
    advance(ctx, run_id)
    run, items = load_run(ctx, run_id)
    req = baselines.validate(baselines.parse_spec(spec))
    base, resolution = baselines.resolve(ctx.db, req, dataset_version_id=run[
        "dataset_version_id"], exclude_run_id=run_id)
    return _comparison(ctx, {**run, "resolution": resolution}, items, base, override=True)


def metrics_view(ctx: Context, run_id: str) -> dict[str, Any]:
    return figures(ctx, run_id)[1]["metrics"]
