"""The push flow, ``neens eval push`` (docs/cli.md): Neens calls the agent, we gate.

1. Create with ``runner_mode: "push"`` and ``agent_connection_id`` (plus gate, baseline,
   provenance, ``gates`` or the policy's ``gates_policy``); the baseline and drift lines.
2. ``POST .../run``. A terminal answer (inline queue) is used as is; otherwise the run is polled.
3. Gate, with a policy comparison and metrics (shared with pull); the pipeline evaluates it.

:func:`run_push` is the CLI flow: usage problems raise before any request, everything later
lands in ``outcome.error`` / ``outcome.interrupted`` so the pipeline still reports a build
verdict (an errored push run gets its ci-result too). :func:`run_push_eval` is the library
entry point: the same flow, then the verdict, the ci-result report and the text summary on
stderr (no JSON, JUnit or publishers).
"""

from __future__ import annotations

import contextlib
import copy
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from neens_action.api.answers import Run
from neens_action.errors import Interrupted, NeensApiError, NeensError
from neens_action.flows.interrupt import cancel_created_run
from neens_action.flows.pull import create_body
from neens_action.flows.runs import collect_verdict, create_run, is_terminal, poll_run
from neens_action.outcome import Outcome
from neens_action.policy import GatePolicy
from neens_action.settings import provenance
from neens_action.settings.push import EvalPushSettings
from neens_action.text import excerpt
from neens_action.world import World

if TYPE_CHECKING:
    from neens_action.api.client import NeensClient

MAX_LINE = 300  # server-chosen text in log lines


def push_body(settings: EvalPushSettings, prov: provenance.Provenance,
              policy: GatePolicy | None = None) -> dict[str, Any]:
    """The run-create body of a push run: ``eval run``'s body (label, dataset, baseline incl. the CI
    default, merged gate, ``gates`` / ``gates_policy``, provenance) plus ``runner_mode`` and
    ``agent_connection_id``. Raises UsageError when no label can be derived."""
    body = create_body(settings, prov, policy)
    body["runner_mode"] = "push"
    body["agent_connection_id"] = settings.agent_connection
    return body


def trigger(client: NeensClient, run_id: str, *, world: World, timeout: float) -> Run:
    """Trigger. Under an inline queue the answer is the terminal run, so the call may take as
    long as the scoring: its read deadline is the poll budget. If no answer arrives (a
    transport failure after the request may have reached Neens), a GET of the run tells if the
    trigger took effect; if it did, the caller polls on."""
    world.log("Triggering the run (POST /run): Neens calls the agent once per prompt ...")
    patient = copy.copy(client)
    with contextlib.suppress(AttributeError, TypeError):
        patient.timeout = max(float(client.timeout), float(timeout))
    try:
        return patient.trigger_push(run_id)
    except NeensApiError as exc:
        if exc.status is not None:
            raise
        try:
            run = client.get_run(run_id)
        except NeensApiError:
            raise exc from None
        status = run.status
        if status in ("", "awaiting_traces"):
            raise exc from None
        world.log(f"neens: warning: no answer to POST /run ({exc}); the run is {status}, "
                  "so the trigger took effect: polling it")
        return run


def drive_push(client: NeensClient, body: Mapping[str, Any], outcome: Outcome, *, world: World,
               policy: GatePolicy | None, poll_interval: float,
               poll_timeout: float) -> Outcome:
    """Create -> trigger -> (poll) -> gate (+ comparison, metrics for a policy). Raises NeensError /
    Interrupted; a terminal ``failed`` run is recorded in ``outcome.error`` and the gate is
    still fetched."""
    outcome.version_label = body.get("version_label")
    outcome.agent_connection = body.get("agent_connection_id")
    created = create_run(client, body, world=world, outcome=outcome)
    run_id = outcome.run_id
    start = world.clock.monotonic()
    answer = trigger(client, run_id, world=world, timeout=poll_timeout)
    outcome.triggered = True
    if is_terminal(answer):
        run = answer
        world.log(f"  run status: {run.status} (inline: nothing to poll)")
    else:
        world.log("Waiting for scoring to complete ...")
        left = max(0.0, poll_timeout - (world.clock.monotonic() - start))
        run = poll_run(client, run_id, world=world, interval=poll_interval, timeout=left)
    outcome.run = run = run.carrying(created)  # the terminal copy wins
    if run.status == "failed":
        outcome.error = f"run {run_id} ended with status 'failed'" + (
            f": {excerpt(run.error, MAX_LINE)}" if run.error else "")
    collect_verdict(client, outcome, world=world, policy=policy)
    return outcome


def guarded(client: NeensClient, body: Mapping[str, Any], outcome: Outcome, *, world: World,
            policy: GatePolicy | None, poll_interval: float, poll_timeout: float) -> Outcome:
    """:func:`drive_push` with every error recorded on the outcome (never raises
    NeensError). An interrupt (``Interrupted`` from the pipeline's SIGINT/SIGTERM guard, or
    KeyboardInterrupt) cancels the run we created (exit 130)."""
    try:
        drive_push(client, body, outcome, world=world, policy=policy,
                   poll_interval=poll_interval, poll_timeout=poll_timeout)
    except (Interrupted, KeyboardInterrupt):
        outcome.interrupted = True
        outcome.error = "interrupted (SIGINT/SIGTERM)"
        world.log("neens: interrupted")
        if outcome.run_id:
            cancel_created_run(client, outcome, world)
    except NeensError as exc:
        outcome.error = outcome.error or str(exc)
        if outcome.run_id and not outcome.triggered:
            cancel_created_run(client, outcome, world)  # created, never triggered: cancel it
    return outcome


def run_push(settings: EvalPushSettings, *, client: NeensClient, world: World,
             policy: GatePolicy | None = None) -> Outcome:
    """``neens eval push`` (settings already validated). UsageError raises before any
    request; everything after lands on the returned outcome."""
    outcome = Outcome(mode="push", base_url=client.base_url, enforced=not settings.no_gate)
    if policy is not None:
        outcome.policy_identity = policy.identity()
    prov = settings.resolve_provenance(world.environ)
    body = push_body(settings, prov, policy)
    return guarded(client, body, outcome, world=world, policy=policy,
                   poll_interval=settings.poll_interval, poll_timeout=settings.poll_timeout)
