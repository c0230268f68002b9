"""Stress tests (docs/stress.md): scenario suites generated from failure modes, launched as pre-prod
runs and gated like ``eval run`` / ``eval push``.

- :class:`~neens_action.settings.stress.StressSettings` holds the suite knobs.
- :func:`suite_body`, :func:`regenerate_body`, :func:`launch_body`: the request bodies.
- :func:`wait_ready`: poll the suite (fast start, backing off to ``--poll-interval``) until the
  suite is ``ready``; ``failed`` is a RunError carrying the server's reason.
- :func:`launch`: the launch; a suite that is not ready (409) is a RunError with one clear line.
- :func:`run_stress`: ``neens stress run``. Generate (or ``--suite-id``), wait, launch, then
  drive the run exactly like ``eval run`` (pull: the agent command per scenario) or
  ``eval push`` (``--agent-connection``: Neens calls the agent), gate. Usage problems raise
  before any request; everything later lands in ``outcome.error`` / ``outcome.interrupted``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from neens_action.api.answers import Run, describe_baseline
from neens_action.api.suites import Suite
from neens_action.errors import Interrupted, NeensApiError, NeensError, RunError
from neens_action.flows import pull
from neens_action.flows.interrupt import cancel_created_run, handle_interrupt
from neens_action.flows.polling import PollTimeout, poll_until
from neens_action.flows.runs import collect_verdict, drive_run, is_terminal, poll_run
from neens_action.outcome import Outcome
from neens_action.settings import provenance
from neens_action.settings.stress import StressSettings
from neens_action.world import World

if TYPE_CHECKING:
    from neens_action.api.client import NeensClient
    from neens_action.policy import GatePolicy

SUITE_DONE = frozenset({"ready", "failed"})


def suite_body(name: str, failure_modes: list[str], *, per_mode: int | None = None,
               strategies: list[str] | None = None, replay: bool = True,
               connection: str | None = None) -> dict[str, Any]:
    """Suite-create body (null fields omitted; ``include_replay`` sent only when turned off)."""
    body: dict[str, Any] = {"name": name, "failure_mode_ids": list(failure_modes)}
    if per_mode is not None:
        body["per_mode"] = int(per_mode)
    if strategies:
        body["strategies"] = list(strategies)
    if not replay:
        body["include_replay"] = False
    if connection:
        body["connection_id"] = connection
    return body


def regenerate_body(*, per_mode: int | None = None, strategies: list[str] | None = None,
                    replay: bool | None = None, connection: str | None = None) -> dict[str, Any]:
    """Regenerate overrides: only what was given."""
    body: dict[str, Any] = {}
    if per_mode is not None:
        body["per_mode"] = int(per_mode)
    if strategies:
        body["strategies"] = list(strategies)
    if replay is not None:
        body["include_replay"] = bool(replay)
    if connection:
        body["connection_id"] = connection
    return body


def launch_body(settings: StressSettings, prov: provenance.Provenance,
                policy: GatePolicy | None = None) -> dict[str, Any]:
    """Launch body: the pre-prod knobs (label, runner mode, connection, judges, baseline, gate) plus
    provenance, like ``eval run --create`` (the CI default baseline included)."""
    body: dict[str, Any] = {"version_label": settings.version_label}
    if settings.name and settings.name.strip():
        body["name"] = settings.name.strip()
    if settings.runner_mode:
        body["runner_mode"] = settings.runner_mode
    elif settings.agent_connection:
        body["runner_mode"] = "push"
    if settings.agent_connection:
        body["agent_connection_id"] = settings.agent_connection
    if settings.judges:
        body["judge_deployment_ids"] = list(settings.judges)
    baseline = settings.baseline_wire
    if baseline is None and not settings.baseline:
        baseline = provenance.default_baseline(prov, has_dataset=True)
    if baseline:
        body["baseline"] = baseline
    gate = pull.server_gate(settings, policy)
    if gate:
        body["gate"] = gate
    body.update(prov.wire())
    return body


# -- the suite ----------------------------------------------------------------------------------


def suite_progress(suite: Suite) -> str:
    """``generating (3/8)`` / ``ready (12 scenarios)`` / ``failed: <reason>``."""
    status = suite.status or "unknown"
    if status == "ready":
        n = suite.scenario_count
        n = n if n is not None else len(suite.scenarios)
        return f"ready ({n} scenario{'s' if n != 1 else ''})"
    if status == "failed":
        return f"failed: {suite.error or 'no reason given'}"
    done, total = suite.progress_done, suite.progress_total
    if done is not None and total:
        return f"{status} ({done}/{total})"
    return status


def failed_reason(suite: Suite) -> str:
    return (f"scenario generation failed for suite {suite.id}: "
            f"{suite.error or 'the server gave no reason'}")


def skipped_lines(suite: Suite) -> list[str]:
    return [row.line() for row in suite.skipped]


def wait_ready(client: NeensClient, suite_id: str, *, world: World, interval: float,
               timeout: float, raise_failed: bool = True,
               on_poll: Callable[[Suite], None] | None = None) -> Suite:
    """Poll the suite until ``ready`` (returned) or ``failed`` (RunError with the server's reason,
    or returned when not ``raise_failed``). Not done within ``timeout``: RunError.
    ``on_poll`` sees every suite object read."""
    try:
        suite = poll_until(lambda: client.get_suite(suite_id), world=world, interval=interval,
                           timeout=timeout, is_done=lambda s: s.status in SUITE_DONE,
                           describe=suite_progress, prefix="  suite status: ",
                           what="scenario generation", on_poll=on_poll)
    except PollTimeout:
        raise RunError(f"scenario suite {suite_id} was not ready within {timeout:g}s; "
                       "raise --ready-timeout or check it with 'neens stress get "
                       f"{suite_id}'") from None
    if suite.status == "failed" and raise_failed:
        raise RunError(failed_reason(suite))
    return suite


def launch(client: NeensClient, suite_id: str, body: Mapping[str, Any], *, world: World,
           outcome: Outcome | None = None) -> Run:
    """Launch; prints the run and baseline lines. 409 (suite not ready) => one clear RunError."""
    try:
        run = client.launch_suite(suite_id, body)
    except NeensApiError as exc:
        if exc.status == 409:
            raise RunError(f"cannot launch scenario suite {suite_id}: "
                           f"{exc.detail or 'it is not ready'}") from None
        raise
    run_id = run.id
    if not run_id:
        raise RunError("the server created no run (the launch response carried no 'id')")
    if outcome is not None:
        outcome.run_id = run_id
        outcome.created = True
    world.log(f"Launched scenario suite {suite_id} as run {run_id} "
              f"(runner mode {run.runner_mode or body.get('runner_mode') or 'default'})")
    world.log(f"Baseline: {describe_baseline(run.baseline, run.baseline_resolution)}")
    return run


def _drive_push(client: NeensClient, outcome: Outcome, settings: StressSettings, *, world: World,
                policy: GatePolicy | None) -> None:
    """Trigger -> (poll) -> gate (+ policy), as ``eval push`` does after its create."""
    from neens_action.flows.push import trigger

    start = world.clock.monotonic()
    answer = trigger(client, outcome.run_id, world=world, timeout=settings.poll_timeout)
    outcome.started = True
    if is_terminal(answer):
        run = answer
        world.log(f"  run status: {run.status} (inline: nothing to poll)")
    else:
        world.log("Waiting for scoring to complete ...")
        left = max(0.0, settings.poll_timeout - (world.clock.monotonic() - start))
        run = poll_run(client, outcome.run_id, world=world, interval=settings.poll_interval,
                       timeout=left)
    outcome.run = run
    if run.status == "failed":
        outcome.error = f"run {outcome.run_id} ended with status 'failed'" + (
            f": {run.error}" if run.error else "")
    collect_verdict(client, outcome, world=world, policy=policy)


def _suite(client: NeensClient, settings: StressSettings, outcome: Outcome, world: World) -> str:
    if settings.suite_id:
        return settings.suite_id
    name = (settings.suite_name or "").strip() or f"stress {settings.version_label}"
    created = client.create_suite(suite_body(
        name, settings.failure_modes, per_mode=settings.per_mode,
        strategies=settings.strategies, replay=not settings.no_replay,
        connection=settings.connection))
    suite_id = created.id
    if not suite_id:
        raise RunError("the server created no scenario suite (the response carried no 'id')")
    outcome.suite = created
    world.log(f"Created scenario suite {suite_id} from {len(settings.failure_modes)} failure "
              f"mode(s): {', '.join(settings.failure_modes)}")
    return suite_id


def drive(client: NeensClient, settings: StressSettings, outcome: Outcome, *, world: World,
          policy: GatePolicy | None) -> None:
    """Suite -> ready -> launch -> drive -> gate. Raises NeensError / Interrupted."""
    suite_id = _suite(client, settings, outcome, world)
    world.log(f"Waiting for scenario suite {suite_id} to be ready ...")
    suite = wait_ready(client, suite_id, world=world, interval=settings.poll_interval,
                       timeout=settings.ready_timeout,
                       on_poll=lambda s: setattr(outcome, "suite", s))
    for line in skipped_lines(suite):
        world.log(f"neens: warning: {line}")
    prov = settings.resolve_provenance(world.environ)
    run = launch(client, suite_id, launch_body(settings, prov, policy), world=world,
                 outcome=outcome)
    outcome.version_label = settings.version_label
    if settings.push:
        outcome.agent_connection = settings.agent_connection
        _drive_push(client, outcome, settings, world=world, policy=policy)
        return
    # the stress report pairs every item with its scenario: every item is kept
    drive_run(client, outcome, settings, world=world, policy=policy, run=run,
              label=settings.version_label, every_item=True)


def run_stress(settings: StressSettings, *, client: NeensClient, world: World,
               policy: GatePolicy | None = None) -> Outcome:
    """``neens stress run`` (settings validated). Everything after the first request lands
    on the returned outcome; the pipeline decides, reports and renders."""
    outcome = Outcome(mode="stress", base_url=client.base_url, enforced=not settings.no_gate)
    if policy is not None:
        outcome.policy_identity = policy.identity()
        if callable(getattr(policy, "gates_block", None)) and policy.gates_block() is not None:
            msg = ("the policy file's gates block is ignored by stress run: a stress test runs "
                   "over the suite's scenarios only")
            world.log(f"neens: warning: {msg}")
            outcome.warnings.append(msg)
    try:
        drive(client, settings, outcome, world=world, policy=policy)
    except (Interrupted, KeyboardInterrupt):
        if settings.push:
            outcome.interrupted = True
            outcome.error = "interrupted (SIGINT/SIGTERM)"
            world.log("neens: interrupted")
            if outcome.run_id:
                cancel_created_run(client, outcome, world)
        else:
            handle_interrupt(client, outcome, world=world, command=settings.command)
    except NeensError as exc:
        outcome.error = outcome.error or str(exc)
        if outcome.run_id and not outcome.started:
            cancel_created_run(client, outcome, world)  # launched but never driven: do not leave it
    return outcome
