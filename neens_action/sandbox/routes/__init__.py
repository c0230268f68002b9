"""Route modules of the sandbox, one per resource. Each declares ``ROUTES`` (a list of
:class:`~neens_action.sandbox.http.Route`) and registers its own tables with
:func:`~neens_action.sandbox.db.register_schema` at import time; it may define
``on_start(ctx)``. To add a resource, add one line here."""

from __future__ import annotations

ROUTE_MODULES: list[str] = [
    "neens_action.sandbox.routes.runs",
    "neens_action.sandbox.routes.traces",
    "neens_action.sandbox.routes.gates",
    "neens_action.sandbox.routes.suites",
    "neens_action.sandbox.routes.sweeps",
]
