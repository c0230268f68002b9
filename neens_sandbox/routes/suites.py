"""Scenario suites (stress tests): ``/scenario-suites`` and everything under it
(docs/stress.md).

Tables and logic live in ``neens_sandbox/suites_store.py`` (importing it registers them).

* ``Idempotency-Key`` on the create and the launch: a repeated key answers what the first
  one made (200); ``GET /scenario-suites?idempotency_key=K`` -> ``{"suites": [...]}`` (a
  launch's run is found by ``GET /preprod-evals?idempotency_key=K``).
* ``POST /scenario-suites`` -> 201, the suite in status ``generating``; generation runs in a
  background thread (``GET`` shows ``progress``), then ``ready`` or ``failed`` (``error``).
* ``GET /scenario-suites/{id}`` -> the suite; ``scenarios`` listed once ``ready``.
* ``POST /scenario-suites/{id}/regenerate`` -> 202, the suite back in ``generating`` (409
  while a generation is in flight); a fresh golden version when it is done.
* ``POST /scenario-suites/{id}/launch`` -> 201, the created run (409 unless ``ready``).
"""

from __future__ import annotations

from typing import Any

from neens_sandbox import idempotency, runs_api, suites_store
from neens_sandbox.http import Request, Response, Route


def create(req: Request) -> Response:
    body = req.json(required=True)
    suite_id, created = idempotency.create_once(
        req, "suites", lambda: suites_store.create_suite(req.ctx, body))
    return Response(201 if created else 200, suites_store.suite_view(req.ctx, suite_id))


def lookup(req: Request) -> dict[str, Any]:
    suite_id = idempotency.created_with(req.ctx, "suites",
                                        idempotency.lookup_key(req, "suites"))
    return {"suites": [suites_store.suite_view(req.ctx, suite_id)] if suite_id else []}


def get(req: Request) -> dict[str, Any]:
    return suites_store.suite_view(req.ctx, req.params["id"])


def regenerate(req: Request) -> Response:
    suites_store.regenerate_suite(req.ctx, req.params["id"], req.json())
    return Response(202, suites_store.suite_view(req.ctx, req.params["id"]))


def launch(req: Request) -> Response:
    body = req.json(required=True)
    run_id, created = idempotency.create_once(  # a run: found by the run-create lookup
        req, "runs", lambda: suites_store.launch_suite(req.ctx, req.params["id"], body))
    return Response(201 if created else 200, runs_api.run_view(req.ctx, run_id))


ROUTES = [
    Route("POST", "/scenario-suites", create),
    Route("GET", "/scenario-suites", lookup),
    Route("GET", "/scenario-suites/{id}", get),
    Route("POST", "/scenario-suites/{id}/regenerate", regenerate),
    Route("POST", "/scenario-suites/{id}/launch", launch),
]


def on_start(ctx: Any) -> None:
    """After a restart: generations that were in flight start again."""
    suites_store.resume(ctx)
