"""Route modules of the sandbox, one per resource. Each declares ``ROUTES`` (a list of
:class:`~neens_sandbox.http.Route`) and registers its own tables with
:func:`~neens_sandbox.db.register_schema` at import time; it may define
``on_start(ctx)``. To add a resource, add one line here."""

from __future__ import annotations

ROUTE_MODULES: list[str] = [
    "neens_sandbox.routes.runs",
    "neens_sandbox.routes.traces",
    "neens_sandbox.routes.gates",
    "neens_sandbox.routes.suites",
    "neens_sandbox.routes.sweeps",
]
