"""``neens sweep run``: runner-mode sweeps, driven by the user's own agent (docs/sweep.md).

1. Create a runner sweep (or attach to one with ``--sweep-id``); refuse a push sweep.
2. For every child run still ``awaiting_traces`` (this is how a re-attach resumes), fetch its
   frozen items; plan every arm x rep x item rep-major, item position next, arms round-robin,
   and run them through one FIFO pool of ``--concurrency`` agent processes.
3. Start each child run as soon as its last item ran (3 attempts, 1 s then 2 s; 409 = done),
   on a starter thread so agent slots never wait on the network.
4. Poll the sweep until scored, read the comparison, exit 0 (a winner) / 1 (none) / 2.

SIGINT and SIGTERM kill every agent and cancel the sweep server-side (exit 130), so nothing
is left waiting for traces.
"""

from __future__ import annotations

import contextlib
import copy
import queue
import re
import shlex
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from neens_action.agents.correlation import SweepTag, item_env, otlp_warning
from neens_action.agents.driver import make_runner
from neens_action.agents.runner import Job, Runner
from neens_action.api.sweeps import Sweep
from neens_action.errors import (
    Interrupted,
    NeensApiError,
    NeensError,
    RunError,
)
from neens_action.flows.sweep.shared import (
    TERMINAL,
    Poll,
    SweepClient,
    poll_sweep,
)
from neens_action.outcome import FailedStart, Invocation, SweepOutcome
from neens_action.verdict import sweep_run_problem
from neens_action.world import World

if TYPE_CHECKING:
    from neens_action.api.client import NeensClient

START_WAITS = (1.0, 2.0)
KEEP_FAILED_OUTPUTS = 20  # captured output tails kept (failures only; memory stays bounded)
_RUNNER_ITEM_LINE = re.compile(r"^item\s+\d+/\d+ \[")  # the runner's own per-item line


@dataclass
class SweepRunParams:
    command: list[str]
    sweep_id: str | None = None  # attach (resume); exclusive with create_body
    create_body: dict[str, Any] | None = None  # POST /model-sweeps body, runner arms
    concurrency: int = 1
    workers: int | None = None  # worker mode: warm agent processes (agents/workers.py)
    timeout: float | None = None  # per invocation
    bar: float | None = None
    baseline_arm: str | None = None
    poll: Poll = field(default_factory=Poll)
    output_cap: int = 64 * 1024
    start_waits: tuple[float, ...] = START_WAITS  # len + 1 attempts


@dataclass
class ChildRun:
    run_id: str
    arm: str
    model: str
    rep: int
    items: list[dict[str, Any]] = field(default_factory=list)


def is_runner_sweep(sweep: Sweep) -> bool:
    """Top-level ``runnerMode == "runner"``; when absent, every (non-empty) arm says so."""
    if sweep.runner_mode is not None:
        return sweep.runner_mode == "runner"
    return bool(sweep.arms) and all(a.runner_mode == "runner" for a in sweep.arms)


def runs_to_drive(sweep: Sweep) -> tuple[list[ChildRun], int]:
    """Child runs still ``awaiting_traces`` (missing status counts), and how many were skipped."""
    todo, skipped = [], 0
    for arm in sweep.arms:
        for position, run in enumerate(arm.runs, start=1):
            if not run.run_id:
                continue
            if run.status not in (None, "awaiting_traces"):
                skipped += 1
                continue
            todo.append(ChildRun(run_id=run.run_id, arm=arm.name or "?", model=arm.model,
                                 rep=run.rep if run.rep is not None else position))
    return todo, skipped


def item_id_of(item: dict[str, Any]) -> str:
    return str(item.get("item_id") or item.get("itemId") or item.get("id") or "")


def item_text(item: dict[str, Any]) -> str:
    value = item.get("input")
    return value if isinstance(value, str) else ("" if value is None else str(value))


def plan(runs: list[ChildRun]) -> list[tuple[ChildRun, int]]:
    """(run, item index) in the interleaved order: rep-major, item position, arms in order."""
    arm_order: dict[str, int] = {}
    for run in runs:
        arm_order.setdefault(run.arm, len(arm_order))
    by_rep: dict[int, list[ChildRun]] = {}
    for run in runs:
        by_rep.setdefault(run.rep, []).append(run)
    order: list[tuple[ChildRun, int]] = []
    for rep in sorted(by_rep):
        group = sorted(by_rep[rep], key=lambda r: arm_order[r.arm])
        for index in range(max(len(r.items) for r in group)):
            order.extend((run, index) for run in group if index < len(run.items))
    return order


def _no_retries(client: NeensClient) -> Any:
    """The same client (same session) without its own retries: the /start loop retries
    (3 attempts, 1 s then 2 s), so a transient error is not retried twelve times."""
    clone = copy.copy(client)
    with contextlib.suppress(AttributeError):
        clone.retries = 0
    return clone


class Starter:
    """Starts child runs on its own thread, in the order their last item finished."""

    def __init__(self, client: NeensClient, world: World, waits: tuple[float, ...],
                 on_failed: Callable[[FailedStart], None]) -> None:
        self.client = client
        self.world = world
        self.waits = waits
        self.on_failed = on_failed
        self.todo: queue.Queue[ChildRun | None] = queue.Queue()
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._loop, name="neens-sweep-starter",
                                       daemon=True)
        self.thread.start()

    def submit(self, run: ChildRun) -> None:
        self.todo.put(run)

    def finish(self) -> None:
        """No more runs will come; wait for the queued starts (interruptible by signals)."""
        self.todo.put(None)
        while self.thread.is_alive():
            self.thread.join(0.2)

    def abort(self) -> None:
        self.stop.set()
        self.todo.put(None)

    def _loop(self) -> None:
        while True:
            run = self.todo.get()
            if run is None or self.stop.is_set():
                return
            self._start(run)

    def _start(self, run: ChildRun) -> None:
        what = f"run {run.run_id} ({run.arm} rep {run.rep})"
        attempts = len(self.waits) + 1
        for attempt in range(attempts):
            try:
                self.client.start_run(run.run_id)  # a 409 (already terminal) returns None
            except NeensError as err:
                transient = isinstance(err, NeensApiError) and err.transient
                if transient and attempt < attempts - 1 and not self.stop.is_set():
                    wait = self.waits[attempt]
                    self.world.log(f"  start of {what} failed ({err}); retrying in {wait:g}s "
                                   f"(attempt {attempt + 2}/{attempts})")
                    self.stop.wait(wait)
                    continue
                self.world.log(f"  could not start {what}: {err}")
                self.on_failed(FailedStart(run.run_id, run.arm, run.rep, str(err)))
                return
            self.world.log(f"  started {what} — all items executed")
            return


class _Drive:
    """One ``sweep run``; keeps what the signal path needs (sweep id, runner, starter)."""

    def __init__(self, client: SweepClient, params: SweepRunParams, world: World,
                 runner_factory: Callable[..., Runner]) -> None:
        self.client = client
        self.params = params
        self.world = world
        self.runner_factory = runner_factory
        self.outcome = SweepOutcome(command="run", base_url=str(getattr(client, "base_url", "")))
        self.runner: Runner | None = None
        self.starter: Starter | None = None
        self.lock = threading.Lock()

    # -- the whole flow --------------------------------------------------------------------

    def __call__(self) -> SweepOutcome:
        out = self.outcome
        phase = "setup"
        try:
            sweep = self._attach()
            phase = "drive"
            if not self._drive(sweep):
                return out
            phase = "poll"
            self._poll_and_compare()
        except Interrupted:
            self._interrupted()
        except NeensError as err:
            out.error = str(err)
            if phase == "drive":
                self._abort_run_phase()
        return out

    def _attach(self) -> Sweep:
        p, out, log = self.params, self.outcome, self.world.log
        if p.create_body is not None:
            created = self.client.create_sweep(p.create_body)
            out.sweep_id = created.id
            if not out.sweep_id:
                raise RunError("the server created a sweep but returned no id")
            log(f"Created sweep {out.sweep_id} (runner mode)")
        else:
            out.sweep_id = str(p.sweep_id)
            log(f"Attaching to sweep {out.sweep_id}")
        sweep = self.client.get_sweep(out.sweep_id)
        out.sweep = sweep
        if not is_runner_sweep(sweep):
            raise RunError(
                f"sweep {out.sweep_id} is a push sweep (Neens calls its arms' connections): "
                f"follow it with `neens sweep get {out.sweep_id} --wait` instead of sweep run")
        described = ", ".join(f"{a.label}={a.model or '?'}" for a in sweep.arms)
        k = sweep.pass_k if sweep.pass_k is not None else "?"
        log(f"Sweep {out.sweep_id} — {len(sweep.arms)} arm(s): {described}; "
            f"k={k}; version='{sweep.version_label}'")
        return sweep

    def _drive(self, sweep: Sweep) -> bool:
        """Run every planned invocation and start the runs; False when the flow is over."""
        p, out, log = self.params, self.outcome, self.world.log
        if sweep.status in TERMINAL:
            log(f"  sweep {out.sweep_id} is already {sweep.status}: nothing to run")
            return True
        runs, skipped = runs_to_drive(sweep)
        if skipped:
            log(f"  resuming: {skipped} run(s) already past awaiting_traces are not re-run")
        for run in runs:
            run.items = self.client.get_items(run.run_id)
            if not run.items:
                raise RunError(f"child run {run.run_id} ({run.arm} rep {run.rep}) has no "
                               "items to replay")
        order = plan(runs)
        label = sweep.version_label
        jobs = [self._job(run, index, label) for run, index in order]
        how = f"{p.workers} warm worker(s)" if p.workers else f"concurrency={p.concurrency}"
        log(f"Running {len(jobs)} agent invocation(s) across {len(runs)} run(s) with "
            f"{how} (interleaved: rep-major, arms round-robin)")
        warning = otlp_warning(self.world.environ, out.base_url) if jobs else None
        if warning:
            log(f"  WARNING: {warning}")
        remaining = {run.run_id: len(run.items) for run in runs}
        done, kept = [0], [0]
        self.starter = Starter(_no_retries(self.client), self.world, p.start_waits,
                               self._failed_start)

        def on_result(job: Job, inv: Invocation) -> None:
            run: ChildRun = job.meta["child"]
            done[0] += 1
            status = "ok" if inv.ok else (inv.error or f"rc={inv.returncode}")
            log(f"  [{done[0]}/{len(jobs)}] {run.arm} rep {run.rep} item "
                f"{job.meta['index'] + 1}/{len(run.items)} [{job.key}] {status} "
                f"({inv.duration_s:.1f}s)")
            if not inv.ok:  # a failure's output tail is kept for the CI log (bounded)
                kept[0] += 1
                if kept[0] > KEEP_FAILED_OUTPUTS:
                    inv.output = ""
            remaining[run.run_id] -= 1
            if remaining[run.run_id] == 0 and self.starter is not None:
                self.starter.submit(run)

        extra = {"workers": p.workers} if p.workers else {}
        self.runner = self.runner_factory(
            p.command, timeout=p.timeout, concurrency=p.concurrency, output_cap=p.output_cap,
            log=self._runner_log, environ=self.world.environ, **extra)  # NEENS_LAUNCHER
        invocations = self.runner.run(jobs, on_result=on_result) if jobs else []
        out.invocations = invocations  # --json never carries agent output (report/sweep_json)
        if jobs and not any(inv.ok for inv in invocations):
            self.starter.abort()
            raise RunError(f"every agent invocation failed ({len(jobs)} of {len(jobs)}): "
                           "the sweep is cancelled")
        self.starter.finish()
        ok = sum(1 for inv in invocations if inv.ok)
        log(f"Command finished for {ok}/{len(invocations)} invocation(s) with rc=0")
        if out.failed_starts:
            hint = f"neens sweep run --sweep-id {out.sweep_id} -- {shlex.join(p.command)}"
            log(f"  {len(out.failed_starts)} run(s) could not be started; resume with: {hint}")
            out.error = (f"{len(out.failed_starts)} child run(s) could not be started after "
                         f"{len(p.start_waits) + 1} attempts; resume with: {hint}")
            return False
        return True

    def _job(self, run: ChildRun, index: int, version_label: str) -> Job:
        item = run.items[index]
        item_id, text = item_id_of(item), item_text(item)
        env = item_env(
            run_id=run.run_id, item_id=item_id, version_label=version_label, item_input=text,
            sweep=SweepTag(sweep_id=self.outcome.sweep_id, arm=run.arm, rep=run.rep,
                           model=run.model or None),
            base=self.world.environ,
        )
        meta = {"arm": run.arm, "model": run.model or None, "rep": run.rep,
                "run_id": run.run_id, "index": index, "child": run}
        return Job(key=item_id, input=text, env=env, meta=meta)

    def _runner_log(self, line: str) -> None:
        if not _RUNNER_ITEM_LINE.match(line):  # we print our own per-invocation line
            self.world.log(f"  {line}")

    def _failed_start(self, entry: FailedStart) -> None:
        with self.lock:
            self.outcome.failed_starts.append(entry)

    def _poll_and_compare(self) -> None:
        p, out = self.params, self.outcome
        self.world.log("Waiting for the sweep to be scored ...")
        sweep, timed_out = poll_sweep(self.client, out.sweep_id, poll=p.poll, world=self.world)
        out.sweep = sweep
        if timed_out:
            raise RunError(
                f"sweep {out.sweep_id} was not scored within --poll-timeout {p.poll.timeout:g}s "
                f"(status={sweep.status}); it is not cancelled: "
                f"`neens sweep decide --sweep-id {out.sweep_id} --wait` reads it later")
        comparison = self.client.get_sweep_comparison(
            out.sweep_id, bar=p.bar, baseline_arm=p.baseline_arm)
        out.comparison = comparison = comparison.for_sweep(out.sweep_id)
        out.error = sweep_run_problem(comparison)  # void, failed, unfinished

    # -- the error and signal paths ----------------------------------------------------------

    def _cancel(self) -> None:
        if not self.outcome.sweep_id:
            return
        try:
            answer = self.client.cancel_sweep(self.outcome.sweep_id, quick=True)
            if answer is None:  # 409: it had already finished
                self.world.log(f"Sweep {self.outcome.sweep_id} had already finished")
                return
            self.world.log(f"Cancelled sweep {self.outcome.sweep_id} and its pending runs")
            if answer.status:
                self.outcome.sweep = answer  # the cancelled state, not the stale one
        except NeensError as err:
            self.world.log(f"  could not cancel sweep {self.outcome.sweep_id}: {err}")

    def _abort_run_phase(self) -> None:
        if self.starter is not None:
            self.starter.abort()
        if self.runner is not None:
            self.runner.kill_all()
        self._cancel()

    def _interrupted(self) -> None:
        out = self.outcome
        with contextlib.suppress(Interrupted):  # a second signal only hurries us along
            if self.runner is not None:
                self.runner.kill_all()
            if self.starter is not None:
                self.starter.abort()
            self.world.log("Interrupted: agents killed, cancelling the sweep ...")
            self._cancel()
        out.interrupted = True
        out.error = "interrupted"


def run_flow(client: SweepClient, params: SweepRunParams, *, world: World,
             runner_factory: Callable[..., Runner] = make_runner) -> SweepOutcome:
    """Drive one runner-mode sweep end to end; never raises for API or run errors."""
    return _Drive(client, params, world, runner_factory)()
