"""Model sweeps: ``/model-sweeps`` and everything under it. Tables: ``sweeps``, ``sweep_arms``,
``sweep_runs``. The logic lives in ``neens_sandbox/sweeps_store.py`` (state), ``sweeps_estimate.py``
(validation, pricing) and ``sweeps_stats.py`` (figures and verdict)."""

from __future__ import annotations

from typing import Any

from neens_sandbox import idempotency
from neens_sandbox import sweeps_store as store
from neens_sandbox.context import Context
from neens_sandbox.db import register_schema
from neens_sandbox.http import Request, Response, Route

register_schema("sweeps", [
    """CREATE TABLE IF NOT EXISTS sweeps (
        id TEXT PRIMARY KEY, created_at REAL NOT NULL, name TEXT NOT NULL,
        version_label TEXT NOT NULL, runner_mode TEXT NOT NULL, pass_k INTEGER NOT NULL,
        status TEXT NOT NULL, void_reason TEXT, error TEXT, dataset_id TEXT,
        dataset_version_id TEXT NOT NULL, scenario_suite_id TEXT, judges TEXT NOT NULL,
        gate TEXT NOT NULL, explicit_gate TEXT NOT NULL, conditions TEXT NOT NULL,
        fingerprint TEXT NOT NULL, budget_usd REAL, estimate TEXT, finished_at REAL)""",
    """CREATE TABLE IF NOT EXISTS sweep_arms (
        sweep_id TEXT NOT NULL, position INTEGER NOT NULL, arm_id TEXT NOT NULL,
        label TEXT NOT NULL, model TEXT, connection_id TEXT, runner_mode TEXT NOT NULL,
        PRIMARY KEY (sweep_id, position))""",
    """CREATE TABLE IF NOT EXISTS sweep_runs (
        sweep_id TEXT NOT NULL, arm_id TEXT NOT NULL, rep INTEGER NOT NULL,
        run_id TEXT NOT NULL UNIQUE, fingerprint TEXT, conditions TEXT,
        PRIMARY KEY (sweep_id, arm_id, rep))""",
])


def preview(req: Request) -> dict[str, Any]:
    return store.preview(req.ctx, req.json(required=True))


def create(req: Request) -> Response:
    """``POST /model-sweeps``; with an ``Idempotency-Key`` a repeated create answers the first
    sweep (200)."""
    body = req.json(required=True)
    sweep_id, created = idempotency.create_once(req, "sweeps",
                                                lambda: store.create(req.ctx, body))
    return Response(201 if created else 200, store.view(req.ctx, sweep_id))


def lookup(req: Request) -> dict[str, Any]:
    """``GET /model-sweeps?idempotency_key=K``: ``{"sweeps": [sweep]}`` or ``[]``."""
    sweep_id = idempotency.created_with(req.ctx, "sweeps",
                                        idempotency.lookup_key(req, "sweeps"))
    return {"sweeps": [store.view(req.ctx, sweep_id)] if sweep_id else []}


def get(req: Request) -> dict[str, Any]:
    return store.view(req.ctx, req.params["id"])


def comparison(req: Request) -> dict[str, Any]:
    return store.comparison(req.ctx, req.params["id"], req.query)


def cancel(req: Request) -> dict[str, Any]:
    return store.cancel(req.ctx, req.params["id"])


def on_start(ctx: Context) -> None:
    store.resume(ctx)


ROUTES = [
    Route("POST", "/model-sweeps/preview", preview),
    Route("POST", "/model-sweeps", create),
    Route("GET", "/model-sweeps", lookup),
    Route("GET", "/model-sweeps/{id}", get),
    Route("GET", "/model-sweeps/{id}/comparison", comparison),
    Route("POST", "/model-sweeps/{id}/cancel", cancel),
]
