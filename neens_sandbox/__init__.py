"""The local Neens sandbox: a Neens-compatible HTTP server for tests, demos and trials.

Start it with ``neens sandbox serve`` or ``python -m neens_sandbox serve`` (installed with
``pip install 'neens-action[sandbox]'``). It is its own package: it imports nothing from
``neens_action`` (the client, flows, renderers, policy, verdict), so a bug in one cannot hide
behind a matching bug in the other. See ``runs_api`` for the internal API other route modules
(sweeps, suites) build on.
"""
