"""Pre-prod runs: ``/preprod-evals`` and everything under it. Tables: ``runs``, ``run_items``."""

from __future__ import annotations

from typing import Any

from neens_sandbox import idempotency, push, runs_api
from neens_sandbox.db import dumps, register_schema
from neens_sandbox.http import ApiError, Request, Response, Route

register_schema("runs", [
    """CREATE TABLE IF NOT EXISTS runs (
        id TEXT PRIMARY KEY, created_at REAL NOT NULL, status TEXT NOT NULL, name TEXT,
        version_label TEXT NOT NULL, dataset_id TEXT, dataset_version_id TEXT,
        runner_mode TEXT NOT NULL, connection_id TEXT, branch TEXT, request TEXT NOT NULL,
        gate TEXT NOT NULL, gates TEXT NOT NULL, gates_policy TEXT, gate_drift TEXT,
        baseline_request TEXT, baseline TEXT, resolution TEXT, extra TEXT,
        started_at REAL, finished_at REAL, gate_passed INTEGER, ci_result TEXT,
        label_mismatch INTEGER NOT NULL DEFAULT 0, legacy TEXT, error TEXT)""",
    "CREATE INDEX IF NOT EXISTS runs_branch ON runs (branch, dataset_version_id, status)",
    """CREATE TABLE IF NOT EXISTS run_items (
        run_id TEXT NOT NULL, position INTEGER NOT NULL, item_id TEXT NOT NULL,
        input TEXT NOT NULL, expected_output TEXT, gate_id TEXT, judges TEXT NOT NULL,
        session TEXT, scores TEXT, passed INTEGER, score REAL, reason TEXT, error TEXT,
        scored_at REAL, PRIMARY KEY (run_id, item_id))""",
    # A run's items are read in order on every poll: without this index SQLite sorted the
    # whole rows each time, spilling to temporary files on a large run (10,000 items: 0.4 s).
    "CREATE INDEX IF NOT EXISTS run_items_order ON run_items (run_id, position)",
])

VERDICTS = ("passed", "warned", "blocked", "errored")


def create(req: Request) -> Response:
    """``POST /preprod-evals``. With an ``Idempotency-Key`` header, a repeated create answers
    the run the first one made (200) instead of creating another (lookup:
    ``GET /preprod-evals?idempotency_key=``)."""
    body = req.json(required=True)
    run_id, created = idempotency.create_once(req, "runs",
                                              lambda: runs_api.create_run(req.ctx, body))
    return Response(201 if created else 200, runs_api.run_view(req.ctx, run_id))


def lookup(req: Request) -> dict[str, Any]:
    """``GET /preprod-evals?idempotency_key=K``: ``{"runs": [run]}`` (``[]`` when no create
    with that key happened), so a client whose create timed out can find what it made."""
    run_id = idempotency.created_with(req.ctx, "runs", idempotency.lookup_key(req, "runs"))
    return {"runs": [runs_api.run_view(req.ctx, run_id, items=False)] if run_id else []}


def _with_items(req: Request, default: str) -> bool:
    return req.query.get("items", default).lower() not in ("0", "false", "no")


def get(req: Request) -> dict[str, Any]:
    return runs_api.run_view(req.ctx, req.params["id"], items=_with_items(req, "true"))


def items(req: Request) -> dict[str, Any]:
    return {"items": runs_api.items_view(req.ctx, req.params["id"])}


def start(req: Request) -> dict[str, Any]:
    """``POST .../start``: the run object without its items (``?items=true`` adds them)."""
    return runs_api.start_run(req.ctx, req.params["id"], items=_with_items(req, "false"))


def trigger(req: Request) -> dict[str, Any]:
    return push.trigger(req.ctx, req.params["id"])


def cancel(req: Request) -> dict[str, Any]:
    return runs_api.cancel_run(req.ctx, req.params["id"])


def gate(req: Request) -> dict[str, Any]:
    return runs_api.gate_view(req.ctx, req.params["id"])


def comparison(req: Request) -> dict[str, Any]:
    return runs_api.comparison_view(req.ctx, req.params["id"], req.query.get("baseline"))


def metrics(req: Request) -> dict[str, Any]:
    return runs_api.metrics_view(req.ctx, req.params["id"])


def ci_result(req: Request) -> dict[str, Any]:
    body = req.json(required=True)
    run_id = req.params["id"]
    runs_api.load_run(req.ctx, run_id)  # 404 first
    verdict = body.get("verdict")
    if verdict is not None and verdict not in VERDICTS:
        raise ApiError(422, f"verdict must be one of {', '.join(VERDICTS)}")
    code = body.get("exit_code")
    if code is not None and (isinstance(code, bool) or not isinstance(code, int)):
        raise ApiError(422, "exit_code must be an integer")
    if body.get("rules") is not None and not isinstance(body["rules"], list):
        raise ApiError(422, "rules must be a list")
    body = {**body, "receivedAt": req.ctx.now()}
    with req.ctx.db.tx() as con:
        con.execute("UPDATE runs SET ci_result = ? WHERE id = ?", (dumps(body), run_id))
    return {"runId": run_id, "stored": True}


ROUTES = [
    Route("POST", "/preprod-evals", create),
    Route("GET", "/preprod-evals", lookup),
    Route("GET", "/preprod-evals/{id}", get),
    Route("GET", "/preprod-evals/{id}/items", items),
    Route("POST", "/preprod-evals/{id}/start", start),
    Route("POST", "/preprod-evals/{id}/run", trigger),
    Route("POST", "/preprod-evals/{id}/cancel", cancel),
    Route("GET", "/preprod-evals/{id}/gate", gate),
    Route("GET", "/preprod-evals/{id}/comparison", comparison),
    Route("GET", "/preprod-evals/{id}/metrics", metrics),
    Route("POST", "/preprod-evals/{id}/ci-result", ci_result),
]


def on_start(ctx: Any) -> None:
    """After a restart: resume push runs that were being driven in the background."""
    push.resume(ctx)
