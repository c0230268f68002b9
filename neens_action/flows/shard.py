"""Sharding one run across CI jobs: create once, replay in shares, finish once (docs/sharding.md).

The CI engine is the cluster. Three steps, each a separate process (a GitHub matrix leg, a
GitLab ``parallel:`` job):

1. ``neens eval run --create --only-create ...`` creates the run and prints its id
   (:func:`run_create_only`; nothing is replayed, nothing started).
2. ``neens eval run --run-id ID --shard I/N -- CMD`` replays only this job's share of the
   frozen items and does NOT start the run (:func:`run_shard`; ``--shard`` implies
   ``--no-start``; ``--no-start`` alone replays every item without starting).
3. ``neens eval run --run-id ID --finish`` checks that every item has a trace, then starts,
   polls, gates and reports like ``eval run`` (:func:`run_finish`). When traces for some
   items never arrived it refuses (exit 2), naming them, and leaves the run waiting so the
   missing shard can be re-run.

Assignment (:func:`shard_items`) is stable and balanced: the run's items are ordered by the
SHA-256 of their item id and dealt round-robin, so shard ``I`` of ``N`` gets the items at
positions ``I-1, I-1+N, ...`` of that order. Every job sees the same frozen item set, so
the shares are disjoint and cover every item whatever order the server lists them in, and
they differ in size by at most one.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import TYPE_CHECKING

from neens_action.api.answers import TERMINAL_RUN, Run
from neens_action.errors import Interrupted, NeensError, RunError
from neens_action.flows.polling import PollTimeout, poll_until
from neens_action.flows.pull import create_body
from neens_action.flows.runs import (
    agents_phrase,
    collect_verdict,
    create_run,
    fetch_items,
    note_run,
    poll_run,
    replay_items,
    warn_otlp,
)
from neens_action.items import FrozenItem, ItemDigest
from neens_action.outcome import Outcome, ShardInfo
from neens_action.settings.shard import resume_command
from neens_action.world import World

if TYPE_CHECKING:
    from neens_action.api.client import NeensClient
    from neens_action.policy import GatePolicy
    from neens_action.settings.run import EvalRunSettings

MAX_NAMED = 10  # missing items named in the refusal line
CAPTURE_WAIT = 10.0  # seconds --finish re-checks for traces still being ingested
CAPTURE_INTERVAL = 2.0  # the longest gap between those re-checks


# -- assignment ----------------------------------------------------------------------------------


def _rank(item_id: str) -> bytes:
    return hashlib.sha256(item_id.encode("utf-8", errors="surrogatepass")).digest()


def shard_items(items: Sequence[FrozenItem], index: int, total: int) -> list[FrozenItem]:
    """Shard ``index`` of ``total`` (1-based) of ``items``, in the server's replay order.
    See the module docstring for the assignment rule."""
    if total <= 1:
        return list(items)
    order = sorted(range(len(items)),
                   key=lambda k: (_rank(items[k].item_id), items[k].item_id, k))
    mine = set(order[index - 1::total])
    return [row for k, row in enumerate(items) if k in mine]


def _cancel_ours(client: NeensClient, outcome: Outcome, world: World) -> None:
    if outcome.run_id and outcome.created:
        try:
            client.cancel_run(outcome.run_id, quick=True)
            world.log(f"neens: cancelled run {outcome.run_id}")
        except (NeensError, KeyboardInterrupt) as exc:
            world.log(f"neens: warning: could not cancel run {outcome.run_id} ({exc})")


def _interrupted(outcome: Outcome, world: World) -> None:
    outcome.interrupted = True
    outcome.error = "interrupted (SIGINT/SIGTERM): agent processes were killed"
    world.log("neens: interrupted: agent processes killed")


# -- create --------------------------------------------------------------------------------------


def run_create_only(settings: EvalRunSettings, *, client: NeensClient, world: World,
                    policy: GatePolicy | None = None) -> Outcome:
    """``--create --only-create``: the create and nothing else. The run waits for its shards."""
    outcome = Outcome(mode="create", base_url=client.base_url, enforced=not settings.no_gate)
    prov = settings.resolve_provenance(world.environ)
    body = create_body(settings, prov, policy)  # UsageError propagates: nothing sent yet
    try:
        outcome.run = create_run(client, body, world=world, outcome=outcome)
        outcome.version_label = body["version_label"]
        world.log(f"Run {outcome.run_id} waits for its traces: replay it with "
                  f"--run-id {outcome.run_id} --shard I/N, then finish it with "
                  f"{resume_command(outcome.run_id)}")
    except (Interrupted, KeyboardInterrupt):
        _interrupted(outcome, world)
        _cancel_ours(client, outcome, world)
    except NeensError as exc:
        outcome.error = outcome.error or str(exc)
    return outcome


# -- shard ---------------------------------------------------------------------------------------


def run_shard(settings: EvalRunSettings, *, client: NeensClient, world: World,
              policy: GatePolicy | None = None) -> Outcome:
    """``--shard I/N`` (or ``--no-start``): replay this job's share; never start the run."""
    index = int(getattr(settings, "shard_index", 1) or 1)
    total = int(getattr(settings, "shard_total", 1) or 1)
    outcome = Outcome(mode="shard", base_url=client.base_url, enforced=not settings.no_gate)
    info = outcome.shard = ShardInfo(index=index, total=total)
    try:
        run: Run
        label = (settings.version_label or "").strip() or None
        if settings.creates_run:  # --create --no-start: all items, one job
            prov = settings.resolve_provenance(world.environ)
            body = create_body(settings, prov, policy)  # its gate is baked into the run
            label = body["version_label"]
            run = create_run(client, body, world=world, outcome=outcome)
        else:
            outcome.run_id = settings.run_id
            run = client.get_run(outcome.run_id)
            _check_replayable(run, outcome, world)
        if label is None:
            label = run.version_label
            if not label:
                msg = (f"run {outcome.run_id} has no version label: traces are tagged with an "
                       "empty neens.version_label (pass --version-label)")
                world.log(f"neens: warning: {msg}")
                outcome.warnings.append(msg)
        outcome.version_label = label
        with fetch_items(client, outcome.run_id) as items:
            mine, count = shard_items(items, index, total), len(items)
        info.items, info.total_items = len(mine), count
        what = f"shard {index}/{total}" if total > 1 else "all items"
        if not mine:
            world.log(f"Nothing to replay in {what}: run {outcome.run_id} has {count} "
                      f"item(s) for {total} shards")
            return outcome
        warn_otlp(world, client.base_url, outcome)
        how = agents_phrase(settings.concurrency, settings.workers)
        world.log(f"Replaying {what}: {len(mine)} of {count} item(s) of run "
                  f"{outcome.run_id} with {how} "
                  f"(version={label!r}); the run is not started")
        replay_items(mine, outcome, settings, world=world, label=label)
        ok = sum(1 for inv in outcome.invocations if inv.ok)
        world.log(f"Command finished for {ok}/{len(outcome.invocations)} item(s) with rc=0")
        if ok == 0:
            first = next((inv.error or f"rc={inv.returncode}" for inv in outcome.invocations),
                         "")
            outcome.error = (f"every agent invocation of {what} failed (first: {first}); "
                             "fix the command, then re-run this job")
        else:
            world.log(f"When every shard is done, finish the run with: "
                      f"{resume_command(outcome.run_id)}")
    except (Interrupted, KeyboardInterrupt):
        _interrupted(outcome, world)
        if outcome.created:
            _cancel_ours(client, outcome, world)
        elif outcome.run_id:
            world.log(f"neens: run {outcome.run_id} was left as is; re-run this share with: "
                      + resume_command(outcome.run_id, shard=(index, total),
                                       command=settings.command))
    except NeensError as exc:
        outcome.error = outcome.error or str(exc)
    failed = any(not inv.ok for inv in outcome.invocations)
    if outcome.run_id and not outcome.created and (
            failed or outcome.interrupted or (outcome.error and outcome.invocations)):
        # which leg to re-run, and how (the shard report names it); an error before the
        # replay (a cancelled run, say) already says what to do instead
        outcome.rerun = resume_command(outcome.run_id, shard=(index, total),
                                                command=settings.command)
    return outcome


def _check_replayable(run: Run, outcome: Outcome, world: World) -> None:
    status = run.status
    if status in TERMINAL_RUN:
        raise RunError(f"run {outcome.run_id} is already {status}: it takes no more traces "
                       "(create a new run)")
    if status == "running":
        msg = (f"run {outcome.run_id} was already started: items whose traces arrive after "
               "scoring ends count as unscored")
        world.log(f"neens: warning: {msg}")
        outcome.warnings.append(msg)


# -- finish --------------------------------------------------------------------------------------


def missing_items(run: Run) -> list[str] | None:
    """Ids of items without a trace; None when the run object lists no items."""
    if run.items is None:
        return None
    return [row.key for row in run.items if not row.captured]


def _describe_missing(run_id: str, missing: Sequence[str], total: int) -> str:
    named = ", ".join(missing[:MAX_NAMED])
    more = f" and {len(missing) - MAX_NAMED} more" if len(missing) > MAX_NAMED else ""
    return (f"{len(missing)} of {total} item(s) of run {run_id} have no trace, so the run was "
            f"not started: {named}{more}. Did every shard job run and export its traces? "
            f"Re-run the shard(s) that own them, then {resume_command(run_id)}")


def wait_for_capture(client: NeensClient, run_id: str, run: Run, *, world: World,
                     budget: float, outage_budget: float | None = None,
                     ) -> tuple[Run, list[str] | None]:
    """Re-read the run for up to ``budget`` s while items still lack a trace (ingestion may
    lag the shard jobs): the last run object and its missing items. A server outage is polled
    through (the one poll loop) for up to ``outage_budget`` s (default ``budget``)."""
    last = [run]

    def fetch() -> Run:
        last[0] = client.get_run(run_id)
        return last[0]

    try:
        run = poll_until(fetch, world=world, interval=CAPTURE_INTERVAL, timeout=budget,
                         is_done=lambda r: not missing_items(r)
                         or r.status != "awaiting_traces",
                         first=last[0], what="trace capture", outage_budget=outage_budget)
    except PollTimeout as exc:
        run = exc.last
    return run, missing_items(run)


def run_finish(settings: EvalRunSettings, *, client: NeensClient, world: World,
               policy: GatePolicy | None = None) -> Outcome:
    """``--run-id ID --finish``: check every item has a trace, start, poll, gate."""
    outcome = Outcome(mode="finish", base_url=client.base_url, enforced=not settings.no_gate)
    outcome.run_id = settings.run_id
    if policy is not None:
        outcome.policy_identity = policy.identity()
    try:
        run = client.get_run(outcome.run_id)
        if run.empty:
            raise RunError(f"run {outcome.run_id}: the server returned no run object")
        status = run.status
        total = run.total or None
        if status == "awaiting_traces":
            run, missing = wait_for_capture(client, outcome.run_id, run, world=world,
                                            budget=min(CAPTURE_WAIT, settings.poll_timeout),
                                            outage_budget=settings.poll_timeout)
            if missing is None:
                msg = ("the server does not list the run's items, so traces could not be "
                       "checked before starting")
                world.log(f"neens: warning: {msg}")
                outcome.warnings.append(msg)
            elif missing and run.status == "awaiting_traces":
                outcome.missing_items = list(missing)
                rows = run.items
                raise RunError(_describe_missing(outcome.run_id, missing,
                                                 len(rows) if rows is not None
                                                 else total or len(missing)))
            else:
                world.log(f"Every item of run {outcome.run_id} has a trace")
        elif status in TERMINAL_RUN:
            world.log(f"Run {outcome.run_id} is already {status}: fetching its verdict")
        elif status != "running":
            raise RunError(f"run {outcome.run_id} has status {str(status)[:40]!r}: "
                           "only a run awaiting traces can be finished")
        outcome.started = True
        if status not in TERMINAL_RUN:
            if status == "awaiting_traces":
                world.log("Starting run (POST /start) ...")
                client.start_run(outcome.run_id)
            world.log("Waiting for scoring to complete ...")
            full = settings.keeps_every_item
            outcome.item_digest = None if full else ItemDigest()
            run = poll_run(client, outcome.run_id, world=world,
                           interval=settings.poll_interval, timeout=settings.poll_timeout,
                           digest=outcome.item_digest)
        outcome.run = run
        note_run(outcome.run, outcome, world)
        if outcome.run.status == "failed":
            detail = outcome.run.error
            outcome.error = f"run {outcome.run_id} ended with status 'failed'" + (
                f": {detail}" if detail else "")
        collect_verdict(client, outcome, world=world, policy=policy)
    except (Interrupted, KeyboardInterrupt):
        outcome.interrupted = True
        outcome.error = "interrupted (SIGINT/SIGTERM)"
        world.log(f"neens: interrupted: run {outcome.run_id} was left as is; finish it later "
                  f"with: {resume_command(outcome.run_id)}")
    except NeensError as exc:
        outcome.error = outcome.error or str(exc)
    return outcome


__all__ = ["missing_items", "run_create_only", "run_finish", "run_shard",
           "shard_items"]
