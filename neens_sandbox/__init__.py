"""The local Neens sandbox: a Neens-compatible HTTP server for tests, demos and trials.

Start it with ``neens sandbox serve`` or ``python -m neens_sandbox serve``. It never
imports the client, flows, renderers, policy or verdict modules, so a bug in one cannot hide
behind a matching bug in the other. See ``runs_api`` for the internal API other route
modules (sweeps, suites) build on.
"""
