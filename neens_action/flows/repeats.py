"""Repeats: every item replayed K times, as K pre-prod runs over the same dataset version,
then the default branch's history (:mod:`neens_action.flows.history`) and the noise-aware
verdict (:mod:`neens_action.noise`) on ``Outcome.noise``.

- Rep 1 is created with the build's body; its dataset version is pinned for the others, which
  are created with the same body (same settings, baseline and provenance) except that they
  carry no ``branch``: only rep 1 can become a later run's ``branch:`` baseline. Every rep's
  server gate has the regression and pass-rate knobs off (the noise-aware verdict judges
  those); cost rules and eval gates stay on every rep and stay authoritative.
- Interleaved: every item's first repetition runs before any second (rep 1 for every item,
  then rep 2, ...), each through the normal driver (``--concurrency`` / ``--workers``,
  ``--timeout``); each rep is then started and scored.
- ``auto``: rep 2 onward replays only the items :func:`needs_another_rep` names; an item not
  replayed is absent from that rep's run (unscored there).
- An interrupt cancels every rep's run this job created (:func:`cancel_reps`).

The main outcome is rep 1's (its run, gate, comparison); the others are summarised as
:class:`RepRun`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from neens_action.api.answers import Run
from neens_action.flows import history as history_flow
from neens_action.flows.interrupt import cancel_created_run
from neens_action.flows.runs import (
    agents_phrase,
    collect_verdict,
    create_run,
    fetch_items,
    note_run,
    replay_items,
    start_and_wait,
    warn_otlp,
)
from neens_action.items import FrozenItem
from neens_action.noise import NoiseRules, NoiseSettings, decide, judge, records_from
from neens_action.noise.evidence import NoiseEvidence, RepRun
from neens_action.noise.model import ItemRecord
from neens_action.outcome import Outcome
from neens_action.world import World

if TYPE_CHECKING:
    from neens_action.api.client import NeensClient
    from neens_action.policy import GatePolicy
    from neens_action.settings.run import EvalRunSettings

NOISE_KNOBS = ("max_regressions", "min_pass_rate")  # judged by the noise-aware verdict


def rep_body(body: Mapping[str, Any], index: int, total: int | str,
             version_id: str = "") -> dict[str, Any]:
    """The create body of rep ``index``: the gate without the noise knobs; reps past the first
    pin rep 1's dataset version, carry no ``branch`` and say which rep they are."""
    out = dict(body)
    gate = {k: v for k, v in dict(out.get("gate") or {}).items() if k not in NOISE_KNOBS}
    if gate:
        out["gate"] = gate
    else:
        out.pop("gate", None)
    if index > 1:
        out.pop("branch", None)
        out["name"] = f"{out.get('name') or out.get('version_label')} (rep {index}/{total})"
        if version_id:
            out["dataset_version_id"] = version_id
    return out


def cancel_reps(client: NeensClient, reps: list[Outcome], world: World) -> None:
    """Cancel every rep's run but rep 1 (the interrupt path cancels that one)."""
    for rep in reps[1:]:
        if rep.run_id:
            cancel_created_run(client, rep, world)


def _replay(items: list[FrozenItem], rep: Outcome, settings: EvalRunSettings, *, world: World,
            label: str, index: int, total: int | str) -> None:
    how = agents_phrase(settings.concurrency, settings.workers)
    world.log(f"Repetition {index}/{total}: running {len(items)} item(s) with {how} for run "
              f"{rep.run_id} (version={label!r})")
    replay_items(items, rep, settings, world=world, label=label, keep_ok=index == 1)


def _score(client: NeensClient, rep: Outcome, settings: EvalRunSettings, *,
           world: World, first: Outcome) -> dict[str, bool]:
    rep.started = True
    rep.run = start_and_wait(client, rep.run_id, world=world, interval=settings.poll_interval,
                             timeout=settings.poll_timeout)
    note_run(rep.run, rep, world)
    if rep.run.status == "failed":
        rep.error = f"run {rep.run_id} ended with status 'failed'" + (
            f": {rep.run.error}" if rep.run.error else "")
    verdicts = history_flow.verdicts_of(rep.run)
    if rep is not first:  # only rep 1's rows go to the report: keep item id -> passed
        rep.run = dataclasses.replace(rep.run, items=None)
    return verdicts


def run_repeats(client: NeensClient, outcome: Outcome, settings: EvalRunSettings,
                body: Mapping[str, Any], reps: list[Outcome], *, world: World,
                policy: GatePolicy | None = None) -> None:
    """Create, replay and score the repetitions; fills ``outcome`` (rep 1) and
    ``outcome.noise``. ``reps`` (empty when called) gets every rep's outcome as its run is
    created (rep 1 is ``outcome``), so the caller can cancel them all on an interrupt. Raises
    NeensError and Interrupted like the single-run lifecycle."""
    plan = settings.noise_plan
    total: int | str = "auto" if plan.adaptive else plan.repeats
    reps.append(outcome)
    replayed: list[int] = []
    label = str(body["version_label"])
    outcome.version_label = label
    outcome.agent_timeout = settings.timeout
    first = create_run(client, rep_body(body, 1, total), world=world, outcome=outcome)
    version = first.dataset_version_id
    maps: list[dict[str, bool]] = []
    with fetch_items(client, outcome.run_id) as items:  # spooled: memory flat in items
        warn_otlp(world, client.base_url, outcome)
        if not plan.adaptive:  # K runs exist before the first replay: interleaved by rep
            for index in range(2, plan.repeats + 1):
                reps.append(_create(client, body, index, total, version, world))
            for index, rep in enumerate(reps, 1):
                _replay(items, rep, settings, world=world, label=label, index=index, total=total)
                replayed.append(len(items))
            for rep in reps:
                maps.append(_score(client, rep, settings, world=world, first=outcome))
        else:
            _replay(items, outcome, settings, world=world, label=label, index=1, total=total)
            replayed.append(len(items))
            maps.append(_score(client, outcome, settings, world=world, first=outcome))
        if outcome.error:
            return
        hist = history_flow.follow(client, first, plan.history,
                                   exclude=frozenset(r.run_id for r in reps))
        world.log(f"History: {len(hist.runs)} run(s) of the default branch"
                  + (f" ({hist.end})" if hist.end else ""))
        if plan.adaptive:
            at = {items[i][0]: i for i in range(len(items))}
            while len(maps) < plan.repeats:
                again = [key for key in _pending(records_from(hist.verdicts, maps), plan.repeats)
                         if key in at]
                if not again:
                    break
                index = len(maps) + 1
                rep = _create(client, body, index, total, version, world)
                reps.append(rep)
                _replay([items[at[key]] for key in again], rep, settings, world=world,
                        label=label, index=index, total=total)
                replayed.append(len(again))
                scored = _score(client, rep, settings, world=world, first=outcome)
                maps.append({key: scored[key] for key in again if key in scored})
        collect_verdict(client, outcome, world=world, policy=policy)
        for rep in reps[1:]:
            if not rep.error:
                rep.gate = client.get_gate(rep.run_id)
        outcome.noise = evidence(settings, total, reps, replayed, hist, maps)
        for rep in reps[1:]:
            if rep.error and not outcome.error:
                outcome.error = rep.error


def evidence(settings: EvalRunSettings, total: int | str, reps: list[Outcome],
             replayed: list[int], hist: history_flow.History,
             maps: list[dict[str, bool]]) -> NoiseEvidence:
    """The records, the verdict and the gate decision over the reps and the history."""
    plan = settings.noise_plan
    records = records_from(hist.verdicts, maps)
    verdict = decide(records, NoiseSettings(adaptive=plan.adaptive, cap=plan.repeats))
    decision = judge(verdict, NoiseRules(
        max_regressions=settings.max_regressions, min_pass_rate=settings.min_pass_rate,
        on_inconclusive="block" if plan.on_inconclusive == "block" else "warn"))
    return NoiseEvidence(
        repeat=total, reps=tuple(_rep_run(i, r, n) for i, (r, n) in
                                 enumerate(zip(reps, replayed, strict=False), 1)),
        history=tuple(hist.runs), history_requested=plan.history, history_end=hist.end,
        records=tuple(records), verdict=verdict, decision=decision)


def history_only(client: NeensClient, outcome: Outcome, settings: EvalRunSettings, *,
                 world: World) -> None:
    """One replay (K = 1) with N >= 2 history runs: the verdict reads the terminal run's
    items against the history (each failing item then carries its history)."""
    run = outcome.run
    if run is None or outcome.error or outcome.gate is None:
        return
    hist = history_flow.follow(client, run, settings.noise_plan.history)
    world.log(f"History: {len(hist.runs)} run(s) of the default branch"
              + (f" ({hist.end})" if hist.end else ""))
    maps = [history_flow.verdicts_of(run)]
    outcome.noise = evidence(settings, 1, [outcome], [run.total or len(maps[0])], hist, maps)


def _pending(records: list[ItemRecord], cap: int) -> list[str]:
    from neens_action.noise import needs_another_rep

    return [r.item_id for r in records if needs_another_rep(r, cap=cap)]


def _create(client: NeensClient, body: Mapping[str, Any], index: int, total: int | str,
            version: str, world: World) -> Outcome:
    rep = Outcome(mode="run", base_url=client.base_url)
    run = client.create_run(rep_body(body, index, total, version))
    rep.run_id, rep.created = run.id, True
    world.log(f"Created run {run.id} (repetition {index}/{total})")
    return rep


def _rep_run(index: int, rep: Outcome, replayed: int) -> RepRun:
    run = rep.run or Run()
    gate = rep.gate
    return RepRun(index=index, run_id=rep.run_id, status=run.status,
                  pass_rate=run.aggregate.pass_rate,
                  gate_passed=None if gate is None else gate.passed,
                  items_replayed=replayed)


def rep_gate_failed(outcome: Outcome) -> bool:
    """A rep's own server gate (cost rules, eval gates) failed."""
    noise = outcome.noise
    return noise is not None and any(r.gate_passed is False for r in noise.reps)

