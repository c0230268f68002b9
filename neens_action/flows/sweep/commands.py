"""The sweep commands as flows of one shape, ``(settings, client, world) -> SweepOutcome``, so
each is a job of the registry (``neens_action.jobs``) and runs through the one pipeline."""

from __future__ import annotations

from neens_action.api.client import NeensClient
from neens_action.flows.sweep import shared
from neens_action.flows.sweep.runner import SweepRunParams, run_flow
from neens_action.outcome import SweepOutcome
from neens_action.settings.sweep import SweepSettings
from neens_action.world import World


def preview(settings: SweepSettings, *, client: NeensClient, world: World) -> SweepOutcome:
    return shared.preview_flow(client, settings.body or {}, world=world)


def start(settings: SweepSettings, *, client: NeensClient, world: World) -> SweepOutcome:
    return shared.start_flow(client, settings.body or {}, wait=settings.wait,
                             require_all_arms=settings.require_all_arms, poll=settings.poll,
                             world=world)


def get(settings: SweepSettings, *, client: NeensClient, world: World) -> SweepOutcome:
    return shared.get_flow(client, settings.sweep_id or "", wait=settings.wait,
                           require_all_arms=settings.require_all_arms, poll=settings.poll,
                           world=world)


def decide(settings: SweepSettings, *, client: NeensClient, world: World) -> SweepOutcome:
    return shared.decide_flow(client, settings.sweep_id or "", bar=settings.bar,
                              baseline_arm=settings.baseline_arm, wait=settings.wait,
                              require_winner=bool(settings.require_winner), poll=settings.poll,
                              world=world)


def run(settings: SweepSettings, *, client: NeensClient, world: World) -> SweepOutcome:
    params = SweepRunParams(command=list(settings.command), sweep_id=settings.sweep_id,
                            create_body=settings.body, concurrency=settings.concurrency,
                            workers=settings.workers,
                            timeout=settings.timeout, bar=settings.bar,
                            baseline_arm=settings.baseline_arm, poll=settings.poll)
    return run_flow(client, params, world=world)
