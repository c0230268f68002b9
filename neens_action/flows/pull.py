"""The pull flow, ``neens eval run`` (spec 7.1), in reusable pieces.

- :func:`create_body` / :func:`create_run`: E1 with target, baseline, gate and provenance.
- :func:`drive_run`: given a run id, fetch items, run the agent per item, start, poll, fetch
  the gate (+ comparison / metrics and the policy evaluation when a policy is in play) into
  an :class:`~neens_action.outcome.Outcome`. Raises on errors; the caller records them.
- the smaller steps it is made of: :func:`fetch_items`, :class:`ItemJobs`,
  :func:`run_agents`, :func:`start_and_wait`, :func:`collect_verdict`.
- :func:`run_pull`: the whole command. Problems found before any request raise
  :class:`~neens_action.errors.UsageError`; everything later lands in ``outcome.error``
  (or ``outcome.interrupted``) so the pipeline can still report and render.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from neens_action.agents import correlation
from neens_action.agents.runner import DEFAULT_OUTPUT_CAP, Job, Runner
from neens_action.agents.workers import make_runner
from neens_action.api.answers import Gate, Run, describe_baseline
from neens_action.api.values import whole
from neens_action.errors import Interrupted, NeensApiError, NeensError, RunError, UsageError
from neens_action.flows.interrupt import abandon, handle_interrupt, resume_hint  # noqa: F401
from neens_action.flows.runs import poll_run
from neens_action.items import FrozenItem, ItemDigest, ItemSpool, LazySequence
from neens_action.outcome import Invocation, Outcome
from neens_action.settings import provenance
from neens_action.world import World

if TYPE_CHECKING:
    from neens_action.api.client import NeensClient
    from neens_action.policy import GatePolicy
    from neens_action.settings.run import EvalRunSettings

LOG_EVERY = 0.1  # per-item lines reach the log together, at most this often (Runner)


@dataclass
class DriveOptions:
    """How to drive one run's items (the execution flags)."""

    command: Sequence[str] | str
    version_label: str | None = None  # None: read the run's versionLabel
    per_item_timeout: float | None = None
    concurrency: int = 1
    workers: int | None = None  # worker mode (agents/workers.py)
    poll_interval: float = 5.0
    poll_timeout: float = 1800.0
    output_cap: int = DEFAULT_OUTPUT_CAP
    policy: GatePolicy | None = None  # neens_action.policy.GatePolicy | None
    full_items: bool = True  # False: a console report only: items folded into a digest


# -- create -------------------------------------------------------------------------------------


def version_label_for(settings: EvalRunSettings, prov: provenance.Provenance) -> str | None:
    """The candidate label: --version-label, else (eval-gates runs) the short commit."""
    if settings.version_label:
        return settings.version_label.strip()
    if settings.gates_wire or settings.declared_gates:
        if not prov.short_sha:
            raise UsageError("--gates needs a version label: pass --version-label or --git-sha "
                             "(no commit was detected from the CI environment)")
        return prov.short_sha
    return None


def server_gate(settings: EvalRunSettings, policy: GatePolicy | None) -> dict[str, Any]:
    """The E1 ``gate``: the policy's gate block, then --max-regressions/--min-pass-rate."""
    gate: dict[str, Any] = {}
    if policy is not None:
        base = policy.server_gate()
        if isinstance(base, dict):
            gate.update({k: v for k, v in base.items() if v is not None})
    if settings.max_regressions is not None:
        gate["max_regressions"] = int(settings.max_regressions)
    if settings.min_pass_rate is not None:
        gate["min_pass_rate"] = float(settings.min_pass_rate)
    if not gate.get("cost"):
        gate.pop("cost", None)  # never "cost": null (it would void in-flight sweeps)
    return gate


def create_body(settings: EvalRunSettings, prov: provenance.Provenance,
                policy: GatePolicy | None = None) -> dict[str, Any]:
    """The E1 body for ``eval run --create`` / ``--gates`` (null fields omitted)."""
    label = version_label_for(settings, prov)
    assert label is not None  # validate() guarantees a label for --create without gates
    body: dict[str, Any] = {"name": (settings.name or "").strip() or label,
                            "version_label": label}
    if settings.dataset:
        body["dataset_id"] = settings.dataset
    if settings.dataset_version_id:
        body["dataset_version_id"] = settings.dataset_version_id
    baseline = settings.baseline_wire
    if baseline is None and not settings.baseline:
        baseline = provenance.default_baseline(prov, has_dataset=bool(settings.dataset))
    if baseline:
        body["baseline"] = baseline
    gate = server_gate(settings, policy)
    if gate:
        body["gate"] = gate
    if settings.gates_wire:
        body["gates"] = settings.gates_wire
    declared = policy.gates_block() if policy is not None else None
    if declared is not None:
        body["gates_policy"] = declared
    body.update(prov.wire(has_gates=bool(settings.gates_wire or declared is not None)))
    return body


def create_run(client: NeensClient, body: Mapping[str, Any], *, world: World,
               outcome: Outcome) -> Run:
    """E1, then the create lines (spec 10.1) and the eval-gates acknowledgement (spec 4.3).

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


# -- drive ---------------------------------------------------------------------------------------


def fetch_items(client: NeensClient, run_id: str) -> ItemSpool:
    """E3, spooled to a temporary file as it streams in (see :class:`ItemSpool`); raises
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
               workers: int | None = None) -> list[Invocation]:
    """Run the command once per job (interrupt-safe: agents are killed before re-raising),
    or with ``workers``, in that many long-lived worker processes.
    ``keep_ok=False``: only the invocations that did not succeed are returned."""
    runner = runner or make_runner(command, timeout=timeout, concurrency=concurrency,
                                   workers=workers, output_cap=output_cap, log=world.log,
                                   log_every=LOG_EVERY, environ=world.environ)
    return runner.run(jobs, on_result=on_result, keep_ok=keep_ok)


def agents_phrase(concurrency: int, workers: int | None) -> str:
    """How the items run, for the 'Running N item(s) ...' line."""
    return f"{workers} warm worker(s)" if workers else f"concurrency={concurrency}"


def start_and_wait(client: NeensClient, run_id: str, *, world: World, interval: float,
                   timeout: float, digest: ItemDigest | None = None) -> Run:
    """E4 (a 409 means already terminal), then poll E2 until terminal (see poll_run)."""
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
    """E7; E8 with a policy or when some item did not pass (the evidence tells regressed
    items from those failing as before); E9 with a policy. A failed E8/E9 is a warning.
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


def note_run(run: Run, outcome: Outcome, world: World) -> None:
    """Warnings carried by the terminal run (label mismatch)."""
    if run.label_mismatch:
        msg = ("some traces carried a neens.version_label different from the run's label "
               f"{run.version_label!r}; they were linked by run and item id anyway: "
               "check what sets NEENS_VERSION_LABEL / OTEL_RESOURCE_ATTRIBUTES in your agent")
        world.log(f"neens: warning: {msg}")
        outcome.warnings.append(msg)


def drive_run(client: NeensClient, outcome: Outcome, opts: DriveOptions, *, world: World,
              run: Run | None = None) -> Outcome:
    """Items -> agents -> /start -> poll -> gate (+policy) for ``outcome.run_id``.

    ``run`` is the run object already known (e.g. the create response). A terminal
    ``failed`` status is recorded in ``outcome.error`` and the gate is still fetched. Other
    errors raise (NeensError, Interrupted); agents are killed before an interrupt re-raises.
    """
    run_id = outcome.run_id
    label = opts.version_label
    if label is None:
        current = run if run is not None and run.version_label_said else client.get_run(run_id)
        label = current.version_label
        if not label:
            msg = (f"run {run_id} has no version label: traces are tagged with an empty "
                   "neens.version_label (pass --version-label)")
            world.log(f"neens: warning: {msg}")
            outcome.warnings.append(msg)
    outcome.version_label = label
    outcome.agent_timeout = opts.per_item_timeout
    with fetch_items(client, run_id) as items:
        total = len(items)
        warn_otlp(world, client.base_url, outcome)
        how = agents_phrase(opts.concurrency, opts.workers)
        world.log(f"Running {total} item(s) with {how} "
                  f"(version={label!r})")
        jobs = ItemJobs(items, run_id=run_id, version_label=label, base_env=world.environ)
        # A console report needs only the invocations that failed (one per item otherwise).
        outcome.invocations = run_agents(opts.command, jobs, world=world,
                                         timeout=opts.per_item_timeout,
                                         concurrency=opts.concurrency,
                                         output_cap=opts.output_cap, keep_ok=opts.full_items,
                                         workers=opts.workers)
    ok = total - sum(1 for inv in outcome.invocations if not inv.ok)
    world.log(f"Command finished for {ok}/{total} item(s) with rc=0")
    outcome.started = True
    digest = None if opts.full_items else ItemDigest()
    outcome.run = start_and_wait(client, run_id, world=world, interval=opts.poll_interval,
                                 timeout=opts.poll_timeout, digest=digest)
    outcome.item_digest = digest
    note_run(outcome.run, outcome, world)
    if outcome.run.status == "failed":
        detail = outcome.run.error
        outcome.error = f"run {run_id} ended with status 'failed'" + (
            f": {detail}" if detail else "")
    collect_verdict(client, outcome, world=world, policy=opts.policy)
    return outcome


def run_pull(settings: EvalRunSettings, *, client: NeensClient, world: World,
             policy: GatePolicy | None = None) -> Outcome:
    """``neens eval run``: create (or attach), drive, gate. See the module docstring."""
    outcome = Outcome(mode="run", base_url=client.base_url, enforced=not settings.no_gate)
    if policy is not None:
        outcome.policy_identity = policy.identity()
    body = None
    if settings.creates_run:
        prov = settings.resolve_provenance(world.environ)
        body = create_body(settings, prov, policy)  # UsageError propagates: nothing sent yet
    opts = DriveOptions(
        command=settings.command,
        version_label=body["version_label"] if body else (settings.version_label or None),
        per_item_timeout=settings.timeout, concurrency=settings.concurrency,
        workers=settings.workers, poll_interval=settings.poll_interval,
        poll_timeout=settings.poll_timeout,
        output_cap=settings.output_cap, policy=policy,
        full_items=settings.keeps_every_item,
    )
    try:
        run = None
        if body is not None:
            run = create_run(client, body, world=world, outcome=outcome)
        else:
            outcome.run_id = settings.run_id
        drive_run(client, outcome, opts, world=world, run=run)
    except (Interrupted, KeyboardInterrupt):
        handle_interrupt(client, outcome, world=world, command=settings.command)
    except NeensError as exc:
        outcome.error = outcome.error or str(exc)
        if outcome.run_id:
            abandon(client, outcome, world)
    return outcome
