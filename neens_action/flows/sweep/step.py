"""The sweep of a CI step (``mode: sweep``): create it, drive or wait for it, read the verdict.

- Runner sweep: :func:`neens_action.flows.sweep.runner.run_flow` (create, every arm x rep x item
  through ``command``, start, poll, comparison).
- Push sweep: :func:`~neens_action.flows.sweep.shared.start_flow` with ``wait``, then
  :func:`~neens_action.flows.sweep.shared.decide_flow` on the finished sweep. An interrupt
  cancels the sweep we created (push arms would otherwise keep calling the connections).

The flow records what happened; ``verdict.decide_sweep`` applies the ``sweep decide`` rule with
``require-winner`` (``settings.require_winner`` is never None here).
"""

from __future__ import annotations

import contextlib

from neens_action.api.client import NeensClient
from neens_action.errors import NeensError
from neens_action.flows.sweep import shared as flows
from neens_action.outcome import SweepOutcome
from neens_action.settings.sweep import SweepSettings
from neens_action.world import World


def _cancel(client: NeensClient, outcome: SweepOutcome, world: World) -> None:
    if not outcome.sweep_id:
        return
    try:
        client.cancel_sweep(outcome.sweep_id, quick=True)
        world.log(f"neens: cancelled sweep {outcome.sweep_id}")
    except (NeensError, KeyboardInterrupt) as exc:
        world.log(f"neens: warning: could not cancel sweep {outcome.sweep_id} ({exc})")


def push_sweep(client: NeensClient, settings: SweepSettings, *, world: World) -> SweepOutcome:
    """Create the push sweep, wait for it, then read the server's verdict."""
    body = settings.body or {}
    out = flows.start_flow(client, body, wait=True, require_all_arms=False,
                           poll=settings.poll, world=world)
    out.command = "run"
    out.require_winner = bool(settings.require_winner)
    if out.interrupted:
        with contextlib.suppress(NeensError, KeyboardInterrupt):
            _cancel(client, out, world)
        return out
    if out.error:
        return out
    status = out.sweep.status if out.sweep is not None else None
    if status not in flows.TERMINAL:
        out.warnings = [w for w in out.warnings if "poll timeout" not in w]
        out.error = (f"sweep {out.sweep_id} did not finish within poll-timeout "
                     f"{settings.poll.timeout:g}s (status={status}); it keeps running on Neens: "
                     f"neens sweep decide --sweep-id {out.sweep_id} --wait reads it later")
        return out
    decided = flows.decide_flow(client, out.sweep_id, bar=settings.bar,
                                baseline_arm=settings.baseline_arm, wait=False,
                                require_winner=bool(settings.require_winner),
                                poll=settings.poll, world=world)
    out.comparison = decided.comparison
    out.error, out.interrupted = decided.error, decided.interrupted
    out.warnings.extend(decided.warnings)
    return out


def sweep_step(settings: SweepSettings, *, client: NeensClient, world: World) -> SweepOutcome:
    """The whole ``mode: sweep`` flow; never raises for API or agent errors."""
    if settings.push:
        return push_sweep(client, settings, world=world)
    from neens_action.flows.sweep.runner import SweepRunParams, run_flow

    params = SweepRunParams(command=list(settings.command), create_body=settings.body,
                            concurrency=settings.concurrency, workers=settings.workers,
                            timeout=settings.timeout,
                            bar=settings.bar, baseline_arm=settings.baseline_arm,
                            poll=settings.poll)
    out = run_flow(client, params, world=world)
    out.require_winner = bool(settings.require_winner)
    return out
