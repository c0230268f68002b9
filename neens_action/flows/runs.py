"""The run lifecycle every eval flow shares (pull, push, shard, finish, stress, watch).

- create: :func:`create_run` (the create answer, its baseline line, the eval-gates
  acknowledgement);
- items: :func:`fetch_items` (spooled), :func:`replay_items` (one agent per item, or the
  warm workers, through the one driver :func:`neens_action.agents.driver.make_runner`);
- drive: :func:`drive_run` (items -> agents -> start -> wait -> verdict answers), taking the
  run settings themselves;
- start and wait: :func:`start_and_wait`, :func:`poll_run` (the one poll loop of
  :mod:`neens_action.flows.polling`);
- verdict answers: :func:`collect_verdict` (gate, comparison, metrics);
- cancel on interrupt: :mod:`neens_action.flows.interrupt`.

Errors raise (NeensError, Interrupted); each flow records them on its outcome.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from neens_action.agents import correlation
from neens_action.agents.driver import make_runner
from neens_action.agents.runner import DEFAULT_OUTPUT_CAP, Job, Runner
from neens_action.api.answers import Gate, Run, describe_baseline
from neens_action.api.values import whole
from neens_action.errors import NeensApiError, RunError
from neens_action.flows.polling import poll_until
from neens_action.items import FrozenItem, ItemDigest, ItemSpool, LazySequence
from neens_action.outcome import Invocation, Outcome
from neens_action.spill import Records, RunRows
from neens_action.world import World

if TYPE_CHECKING:
    from neens_action.api.client import NeensClient
    from neens_action.policy import GatePolicy
    from neens_action.settings.run import EvalRunSettings

LOG_EVERY = 0.1  # per-item lines reach the log together, at most this often (Runner)


# -- create --------------------------------------------------------------------------------------


def create_run(client: NeensClient, body: Mapping[str, Any], *, world: World,
               outcome: Outcome) -> Run:
    """``POST /preprod-evals``, then the create lines and the eval-gates acknowledgement.

    Sets ``outcome.run_id`` as soon as the run exists. Raises NeensError.
    """
    run = client.create_run(body)
    run_id = run.id
    if not run_id:
        raise RunError("the server created no run (the response carried no 'id')")
    outcome.run_id = run_id
    outcome.created = True
    world.log(f"Created run {run_id}")
    if run.dataset_id or body.get("dataset_id"):
        world.log(f"Baseline: {describe_baseline(run.baseline, run.baseline_resolution)}")
    if "gates_policy" in body:
        _ack_gates_policy(run, body["gates_policy"], world=world, outcome=outcome)
    sent = body.get("gates")
    if sent:
        if run.gates is None:
            raise RunError("the server ignored the eval-gates request (its response has no "
                           "'gates'): it predates eval gates")
        rows = run.gates
        if not rows:
            if sent == "active":
                msg = ("WARNING: the project has no active eval gate: nothing from --gates "
                       "active is enforced in this run")
                world.log(msg)
                outcome.warnings.append(msg.removeprefix("WARNING: "))
            else:
                raise RunError(f"none of the requested eval gates exist: {', '.join(sent)}")
        else:
            world.log(f"Enforcing {len(rows)} eval gate(s): {', '.join(rows)}")
    return run


def _ack_gates_policy(run: Run, sent: Mapping[str, Any], *, world: World,
                      outcome: Outcome) -> None:
    """A declared gates block must be echoed; drift lines are printed."""
    if not run.gates_policy_said:
        raise RunError("the server ignored the policy's 'gates' block (its response has no "
                       "'gatesPolicy'): it predates gate-as-code gates")
    if not run.gates and not run.gate_drift:
        msg = "the policy's 'gates' block selected no eval gate in this project"
        world.log(f"WARNING: {msg}")
        outcome.warnings.append(msg)
    elif run.gates:
        world.log(f"Enforcing {len(run.gates)} eval gate(s): {', '.join(run.gates)}")
    tier = "BLOCKING" if sent.get("severity", "block") == "block" else "WARNING"
    for item in run.gate_drift:
        world.log(f"gate drift ({tier}): {item.message or item.kind}")



# -- items and agents ----------------------------------------------------------------------------


def fetch_items(client: NeensClient, run_id: str) -> ItemSpool:
    """The run's items, spooled to a temp file as they stream in (see :class:`ItemSpool`); raises
    RunError when there are none or one has no item id. The caller closes the spool."""
    spool = ItemSpool()
    try:
        client.get_items(run_id, row=spool.add, restart=spool.reset)
        if spool.first_without_id is not None:
            raise RunError(f"item {spool.first_without_id} of run {run_id} has no item_id")
        if not len(spool):
            raise RunError(f"no items to replay: run {run_id} has no frozen prompts (is the "
                           "dataset version empty?)")
    except BaseException:
        spool.close()
        raise
    return spool


class ItemJobs(LazySequence[Job]):
    """One Job per frozen item, each made when the runner takes it (with its environment
    built just before launch), so 10,000 pending items cost two strings each."""

    def __init__(self, items: Sequence[FrozenItem], *, run_id: str, version_label: str,
                 base_env: Mapping[str, str], sweep: Any = None,
                 meta: Mapping[str, Any] | None = None) -> None:
        self.items = items
        self.env = correlation.ItemEnv(run_id=run_id, version_label=version_label,
                                       sweep=sweep, base=base_env)
        self.meta = dict(meta or {})  # read-only for the runner: one dict for every job

    def __len__(self) -> int:
        return len(self.items)

    def _get(self, index: int) -> Job:
        item_id, text = self.items[index]
        return Job(key=item_id, input=text, meta=self.meta,
                   env=functools.partial(self.env, item_id, text))


def warn_otlp(world: World, base_url: str, outcome: Outcome | None = None) -> None:
    """Before the first item: say exactly what to set when no OTLP endpoint is configured."""
    msg = correlation.otlp_warning(world.environ, base_url)
    if msg:
        world.log(f"neens: warning: {msg}")
        if outcome is not None:
            outcome.warnings.append(msg)


def run_agents(command: Sequence[str] | str, jobs: Sequence[Job], *, world: World,
               timeout: float | None, concurrency: int, output_cap: int = DEFAULT_OUTPUT_CAP,
               on_result: Callable[[Job, Invocation], None] | None = None,
               runner: Runner | None = None, keep_ok: bool = True,
               workers: int | None = None,
               record: Callable[[int, Invocation], None] | None = None) -> list[Invocation]:
    """Run the command once per job (interrupt-safe: agents are killed before re-raising),
    or with ``workers``, in that many long-lived worker processes.
    ``keep_ok=False``: only the invocations that did not succeed are returned; ``record``
    is handed every job's index and invocation as it ends."""
    runner = runner or make_runner(command, timeout=timeout, concurrency=concurrency,
                                   workers=workers, output_cap=output_cap, log=world.log,
                                   log_every=LOG_EVERY, environ=world.environ)
    if record is None:
        return runner.run(jobs, on_result=on_result, keep_ok=keep_ok)
    return runner.run(jobs, on_result=on_result, keep_ok=keep_ok, record=record)


def agents_phrase(concurrency: int, workers: int | None) -> str:
    """How the items run, for the 'Running N item(s) ...' line."""
    return f"{workers} warm worker(s)" if workers else f"concurrency={concurrency}"


def start_and_wait(client: NeensClient, run_id: str, *, world: World, interval: float,
                   timeout: float, digest: ItemDigest | None = None) -> Run:
    """``POST .../start`` (a 409 means already terminal), then poll until terminal (poll_run)."""
    world.log("Starting run (POST /start) ...")
    client.start_run(run_id)
    world.log("Waiting for scoring to complete ...")
    return poll_run(client, run_id, world=world, interval=interval, timeout=timeout,
                    digest=digest)


def _count(value: int | float | None) -> int:
    return whole(value) or 0


def some_item_failed(outcome: Outcome) -> bool:
    """True when an item did not pass (by the gate, the run's items or our own agents)."""
    gate = outcome.gate or Gate()
    if gate.pass_rate is not None and gate.pass_rate < 1:
        return True
    if _count(gate.regressions) > 0 or any(not inv.ok for inv in outcome.invocations):
        return True
    run = outcome.run or Run()
    if _count(run.aggregate.failed) + _count(run.aggregate.errored) > 0:
        return True
    if outcome.item_digest is not None and outcome.item_digest.not_passing:
        return True
    return run.items is not None and any(i.passed is not True for i in run.items)


def collect_verdict(client: NeensClient, outcome: Outcome, *, world: World,
                    policy: GatePolicy | None = None) -> None:
    """Gate; comparison with a policy or when some item did not pass (the evidence tells regressed
    items from those failing as before); metrics with a policy. A failed fetch of either warns.
    The policy itself is evaluated after the flow, by the pipeline (``policy.apply_policy``)."""
    outcome.gate = client.get_gate(outcome.run_id)
    fetches: list[tuple[str, Callable[[str], Any], str]] = []
    if policy is not None or some_item_failed(outcome):
        fetches.append(("comparison", client.get_comparison, "comparison"))
    if policy is not None:
        fetches.append(("metrics", client.get_metrics, "metrics"))
    for attr, fetch, what in fetches:
        try:
            setattr(outcome, attr, fetch(outcome.run_id))
        except NeensApiError as exc:
            why = ("policy rules that need it are skipped" if policy is not None else
                   "failing items are not told apart as regressed or failing as before")
            msg = f"could not fetch the {what} ({exc}); {why}"
            world.log(f"neens: warning: {msg}")
            outcome.warnings.append(msg)
    base = baseline_run_id(outcome)
    if outcome.comparison is not None and base:
        try:  # the per-judge change in the report; without it the report shows none
            outcome.baseline_metrics = client.get_metrics(base)
        except NeensApiError:
            outcome.baseline_metrics = None


def baseline_run_id(outcome: Outcome) -> str:
    """The run the baseline resolved to ("" for a production window or none)."""
    base = (outcome.gate.baseline if outcome.gate is not None else None) or (
        outcome.comparison.baseline if outcome.comparison is not None else None)
    if base is None or base.compared is False:
        return ""
    resolved = base.resolution.resolved_run_id if base.resolution is not None else ""
    return resolved or (base.run_id if base.kind == "preprod_run" else "")


def note_run(run: Run, outcome: Outcome, world: World) -> None:
    """Warnings carried by the terminal run (label mismatch)."""
    if run.label_mismatch:
        msg = ("some traces carried a neens.version_label different from the run's label "
               f"{run.version_label!r}; they were linked by run and item id anyway: "
               "check what sets NEENS_VERSION_LABEL / OTEL_RESOURCE_ATTRIBUTES in your agent")
        world.log(f"neens: warning: {msg}")
        outcome.warnings.append(msg)


def replay_items(items: Sequence[FrozenItem], outcome: Outcome, settings: EvalRunSettings, *,
                 world: World, label: str, keep_ok: bool = True, spill: bool = False) -> None:
    """Run the agent once per item for ``outcome.run_id`` (the execution settings:
    ``command``, ``timeout``, ``concurrency``, ``workers``, ``output_cap``) into
    ``outcome.invocations``; ``keep_ok=False`` keeps only the invocations that failed.
    ``keep_ok=True`` with ``spill``: every invocation is spilled to disk as it ends
    (one per item, read back in item order), memory keeping only the failed ones meanwhile.
    ``world.starting`` is told first (the CI step's running comment, before any agent)."""
    world.starting(len(items))
    jobs = ItemJobs(items, run_id=outcome.run_id, version_label=label, base_env=world.environ)
    store = Records(Invocation, len(items)) if keep_ok and spill else None
    invocations = run_agents(settings.command, jobs, world=world,
                             timeout=settings.timeout, concurrency=settings.concurrency,
                             output_cap=settings.output_cap,
                             keep_ok=keep_ok and store is None, workers=settings.workers,
                             record=store.put if store is not None else None)
    outcome.invocations = invocations if store is None else store  # type: ignore[assignment]
    if not keep_ok:  # only failures were kept: count the successes for the verdict
        outcome.agents_ok = len(items) - len(outcome.invocations)


def run_label(client: NeensClient, outcome: Outcome, run: Run | None, *,
              world: World) -> str:
    """The label the traces carry when none was given: the run's own (a warning when the
    run has none)."""
    current = run if run is not None and run.version_label_said else client.get_run(
        outcome.run_id)
    label = current.version_label
    if not label:
        msg = (f"run {outcome.run_id} has no version label: traces are tagged with an empty "
               "neens.version_label (pass --version-label)")
        world.log(f"neens: warning: {msg}")
        outcome.warnings.append(msg)
    return label


def drive_run(client: NeensClient, outcome: Outcome, settings: EvalRunSettings, *,
              world: World, policy: GatePolicy | None = None, run: Run | None = None,
              label: str | None = None, every_item: bool | None = None) -> Outcome:
    """Items -> agents -> start -> wait -> verdict answers for ``outcome.run_id``.

    ``run``: the run already known (e.g. the create answer); ``label``: the candidate label
    (None: the run's own); ``every_item`` (default ``settings.keeps_every_item``): False
    folds the terminal run's items into a digest (a console report). A terminal ``failed``
    status is recorded in ``outcome.error`` and the gate is still fetched. Other errors
    raise (NeensError, Interrupted); agents are killed before an interrupt re-raises.
    """
    run_id = outcome.run_id
    if label is None:
        label = run_label(client, outcome, run, world=world)
    full = settings.keeps_every_item if every_item is None else every_item
    outcome.version_label = label
    outcome.agent_timeout = settings.timeout
    with fetch_items(client, run_id) as items:
        total = len(items)
        warn_otlp(world, client.base_url, outcome)
        how = agents_phrase(settings.concurrency, settings.workers)
        world.log(f"Running {total} item(s) with {how} (version={label!r})")
        # A console report needs only the invocations that failed (one per item otherwise).
        replay_items(items, outcome, settings, world=world, label=label, keep_ok=full,
                     spill=full)
    ok = total - sum(1 for inv in outcome.invocations if not inv.ok)
    world.log(f"Command finished for {ok}/{total} item(s) with rc=0")
    outcome.started = True
    digest = None if full else ItemDigest()
    outcome.run = start_and_wait(client, run_id, world=world, interval=settings.poll_interval,
                                 timeout=settings.poll_timeout, digest=digest)
    outcome.item_digest = digest
    note_run(outcome.run, outcome, world)
    if outcome.run.status == "failed":
        outcome.error = f"run {run_id} ended with status 'failed'" + (
            f": {outcome.run.error}" if outcome.run.error else "")
    collect_verdict(client, outcome, world=world, policy=policy)
    return outcome


# -- wait ----------------------------------------------------------------------------------------


def is_terminal(run: Run | None) -> bool:
    return run is not None and run.terminal


def progress_text(run: Run) -> str:
    return f"{run.status or 'unknown'} ({run.completed}/{run.total} scored)"


def legacy_notice(run: Run) -> str | None:
    if not run.legacy_seen:
        return None
    names = ", ".join(run.legacy_attrs) or "old names"
    return (f"traces with old-brand correlation attributes ({names}) reached this run and "
            "correlate to nothing: upgrade the agent's instrumentation to the neens.* attributes")


def all_scored(run: Run) -> bool:
    """A started run whose every item is scored: only its verdict is still to come."""
    return run.status == "running" and run.total > 0 and run.completed >= run.total


def poll_run(client: NeensClient, run_id: str, *, world: World, interval: float, timeout: float,
             on_poll: Callable[[Run], None] | None = None,
             digest: ItemDigest | None = None) -> Run:
    """Poll the run until it is terminal (without the per-item list when the client can),
    then return the terminal run with its items, or, with ``digest``, without them: they
    are folded into the digest as they stream in (memory flat in the item count). Prints
    the legacy-correlation notice once."""
    seen = {"legacy": None}

    def watch(run: Run) -> None:
        if seen["legacy"] is None:
            notice = legacy_notice(run)
            if notice:
                seen["legacy"] = notice
                world.log(f"neens: notice: {notice}")
        if on_poll is not None:
            on_poll(run)

    summary = getattr(client, "get_run_summary", None)
    fetch = summary or client.get_run
    try:
        run = poll_until(lambda: fetch(run_id), world=world, interval=interval,
                         timeout=timeout, is_done=is_terminal, describe=progress_text,
                         prefix="  run status: ", what="scoring", on_poll=watch,
                         nearly_done=all_scored)
    except RunError as exc:
        if seen["legacy"]:
            raise RunError(f"{exc} ({seen['legacy']})") from None
        raise
    if digest is not None:
        if summary is None or run.items is not None:  # the items came along
            digest.reset()
            for row in run.items or ():
                digest.add_row(row)
            run = dataclasses.replace(run, items=None)
        else:
            run = client.get_run(run_id, digest=digest)
    elif summary is not None and run.items is None:  # polled without the items: read them
        if getattr(client, "spills_rows", False):  # to disk, as they stream in
            rows = RunRows()
            run = dataclasses.replace(client.get_run(run_id, rows=rows), items=rows)
        else:
            run = client.get_run(run_id)
    return run
