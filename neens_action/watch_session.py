"""``neens eval watch``: ``eval run --create`` on every save (docs/cli.md).

The first iteration runs at start-up; afterwards the tree is polled every 0.5 s and, once a
change has settled (``--debounce``), the next iteration runs. Each iteration is a brand-new
run (the create: no gates, no provenance, no CI default baseline, label
``<label>-watch.<session>.<N>``) driven through the shared run lifecycle
(:func:`neens_action.flows.runs.drive_run`), concluded like any ``eval run`` by the job and
the pipeline (:func:`neens_action.pipeline.conclude`: policy, then verdict), then diffed
against the last iteration that had verdicts. Iterations never overlap: saves made while one
runs are picked up when it ends and give exactly one follow-up.

The session sits above the flows (it loops over whole jobs, as the pipeline runs one): the
tree watcher is :mod:`neens_action.flows.watch.files`.

Exit codes: ``--once`` => that iteration's code; ``--max-iterations N`` => the last
iteration's code; a create refused with 401/403/404/422 => 2 (no file save can fix it);
SIGINT/SIGTERM => agents killed, the in-flight run cancelled, 130. Any other iteration
failure is printed, its run cancelled, and the watcher keeps going. Watch never reports a
build verdict to Neens (no ci-result).
"""

from __future__ import annotations

import json
import math
import os
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from neens_action.api.answers import ItemRow, Run, item_row
from neens_action.errors import (
    EXIT_ERROR,
    Interrupted,
    NeensApiError,
    NeensError,
    UsageError,
)
from neens_action.flows.interrupt import handle_interrupt
from neens_action.flows.pull import server_gate
from neens_action.flows.runs import drive_run, is_terminal
from neens_action.flows.watch.files import AgentWriteFilter, Filters, TreeWatcher
from neens_action.jobs import job
from neens_action.outcome import Outcome
from neens_action.pipeline import conclude
from neens_action.report.build import watch_diff
from neens_action.report.render import watch_text
from neens_action.verdict import decide_watch
from neens_action.world import World

if TYPE_CHECKING:
    from neens_action.api.client import NeensClient
    from neens_action.policy import GatePolicy
    from neens_action.settings.run import EvalRunSettings

FATAL_CREATE_STATUSES = frozenset({401, 403, 404, 422})
DEFAULT_LABEL = "local"


@dataclass
class WatchOptions:
    """The watch-only flags (the shared ones live in ``EvalRunSettings``)."""

    paths: list[str] = field(default_factory=lambda: ["."])
    include: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()
    debounce: float = 1.0
    max_iterations: int | None = None
    once: bool = False

    def validate(self) -> WatchOptions:
        if not math.isfinite(self.debounce) or self.debounce < 0:
            raise UsageError(f"--debounce must be 0 or more seconds, got {self.debounce:g}")
        if self.max_iterations is not None and self.max_iterations < 1:
            raise UsageError(f"--max-iterations must be 1 or more, got {self.max_iterations}")
        self.paths = list(self.paths) or ["."]
        for path in self.paths:
            if not path or not os.path.exists(path):
                raise UsageError(f"--path {path!r} does not exist")
        return self


@dataclass
class IterationResult:
    number: int
    label: str
    trigger: list[str]
    run_id: str = ""
    exit_code: int = EXIT_ERROR
    error: str | None = None
    fatal: bool = False  # the create was refused for good: stop with exit 2
    gate_passed: bool | None = None
    policy_blocked: bool | None = None
    states: dict[str, watch_diff.ItemState] | None = None  # None: errored, not diffed
    metrics: dict[str, Any] | None = None

    @property
    def status(self) -> str:
        if self.error is not None:
            return "ERROR"
        return "PASSED" if self.gate_passed is True and not self.policy_blocked else "FAILED"


def session_stamp(world: World) -> str:
    return world.clock.utcnow().strftime("%Y%m%dT%H%M%S")


class WatchLoop:
    """One watch session. ``run()`` returns the exit code."""

    def __init__(self, settings: EvalRunSettings, opts: WatchOptions, *, client: NeensClient,
                 world: World,
                 policy: GatePolicy | None = None, watcher: TreeWatcher | None = None) -> None:
        self.settings = settings
        self.opts = opts
        self.client = client
        self.world = world
        self.policy = policy
        self.base_label = (settings.version_label or "").strip() or DEFAULT_LABEL
        self.session = session_stamp(world)
        self.watcher = watcher or TreeWatcher(
            opts.paths, Filters(tuple(opts.include), tuple(opts.exclude)),
            sleep=world.clock.sleep, debounce=opts.debounce,
        )
        self.agent_writes = AgentWriteFilter()
        self._announced: set[str] = set()  # agent-written paths already reported
        self.previous: IterationResult | None = None  # the iteration before this one
        self.last_scored: IterationResult | None = None  # the last one with verdicts
        self.outcome: Outcome | None = None  # the in-flight iteration's outcome

    # -- the loop ---------------------------------------------------------------------------

    def run(self) -> int:
        for line in watch_text.banner(
            file_count=self.watcher.file_count, roots=self.opts.paths,
            dataset=self.settings.dataset or "", label=self.base_label,
            max_iterations=self.opts.max_iterations, once=self.opts.once,
            capped=self.watcher.capped,
        ):
            self.world.log(line)
        if self.policy is not None and _declares_gates(self.policy):
            self.world.log("  notice: the policy's 'gates' block is ignored in watch mode")
        number, trigger = 0, []
        try:
            while True:
                number += 1
                result = self.iteration(number, trigger)
                if result.fatal:
                    raise NeensError(f"{result.error} (no file save can fix this: the watcher "
                                     "stops)")
                if self.opts.once or (self.opts.max_iterations is not None
                                      and number >= self.opts.max_iterations):
                    return decide_watch(result.exit_code, interrupted=False)
                trigger = self.next_trigger(number)
        except (Interrupted, KeyboardInterrupt):
            self.interrupted()
            return decide_watch(None, interrupted=True)

    def next_trigger(self, number: int) -> list[str]:
        """Saves made during iteration ``number`` give one follow-up; else wait for a save."""
        during = self.watcher.poll()
        kept, ignored = self.agent_writes.during_run(during)
        new = [p for p in ignored if p not in self._announced]
        if new:  # said once per path, not on every iteration
            self._announced.update(new)
            shown = ", ".join(watch_diff.one_line(p, 120) for p in new[:3])
            more = f" (+{len(new) - 3} more)" if len(new) > 3 else ""
            self.world.log(f"  ignoring during-run changes to {shown}{more}: written by the "
                           "agent in two consecutive iterations")
        if kept:
            self.world.log(f"  {len(kept)} file(s) changed during iteration {number}: "
                           "one follow-up run")
            return self.watcher.settle(kept)
        self.world.log("watching for changes (Ctrl-C to stop) ...")
        return self.watcher.wait_for_change()

    def interrupted(self) -> None:
        outcome = self.outcome
        if outcome is not None and outcome.run_id and not is_terminal(outcome.run):
            handle_interrupt(self.client, outcome, world=self.world,
                             command=self.settings.command)
        else:
            self.world.log("neens: interrupted")

    # -- one iteration ----------------------------------------------------------------------

    def create_body(self, number: int, label: str) -> dict[str, Any]:
        s = self.settings
        name = (s.name or "").strip() or f"{self.base_label} (watch #{number})"
        body: dict[str, Any] = {"name": name, "version_label": label, "dataset_id": s.dataset}
        if s.dataset_version_id:
            body["dataset_version_id"] = s.dataset_version_id
        if s.baseline_wire:  # only an explicit --baseline: watch has no CI default
            body["baseline"] = s.baseline_wire
        gate = server_gate(s, self.policy)
        if gate:
            body["gate"] = gate
        return body

    def iteration(self, number: int, trigger: list[str]) -> IterationResult:
        label = f"{self.base_label}-watch.{self.session}.{number}"
        result = IterationResult(number, label, list(trigger))
        self.world.log("")
        self.world.log(watch_text.iteration_header(number, label))
        changed = watch_text.changed_line(trigger)
        if changed:
            self.world.log(changed)
        outcome = Outcome(mode="watch", base_url=self.client.base_url,
                          enforced=not self.settings.no_gate)
        self.outcome = outcome  # what an interrupt cancels
        run = self._create(number, label, outcome, result)
        if run is not None:
            self._drive(outcome, run, label)
        self.conclude(result, outcome)
        self.outcome = None
        return result

    def _create(self, number: int, label: str, outcome: Outcome,
                result: IterationResult) -> Run | None:
        try:
            run = self.client.create_run(self.create_body(number, label))
        except Interrupted:
            raise
        except NeensApiError as exc:
            outcome.error = str(exc)
            result.fatal = exc.status in FATAL_CREATE_STATUSES
            return None
        except NeensError as exc:
            outcome.error = str(exc)
            return None
        run_id = run.id
        if not run_id:
            outcome.error = "the server created no run (the response carried no 'id')"
            return None
        outcome.run_id = run_id
        outcome.created = True
        self.world.log(f"  created run {run_id}")
        return run

    def _drive(self, outcome: Outcome, run: Run, label: str) -> None:
        try:  # every item is kept: the next iteration is diffed item by item
            drive_run(self.client, outcome, self.settings, world=self.world, policy=self.policy,
                      run=run, label=label, every_item=True)
        except Interrupted:
            raise
        except NeensError as exc:
            outcome.error = outcome.error or str(exc)
        status = outcome.run.status if outcome.run is not None else None
        if outcome.error is None and status == "cancelled":
            outcome.error = f"run {outcome.run_id} was cancelled"
        if outcome.error is not None and not is_terminal(outcome.run):
            self._cancel(outcome.run_id)

    def _cancel(self, run_id: str) -> None:
        """Cancel a failed iteration's run, so it does not wait for traces (409: done)."""
        try:
            self.client.cancel_run(run_id)
            self.world.log(f"  cancelled run {run_id}")
        except Interrupted:
            raise
        except NeensError as exc:
            self.world.log(f"neens: warning: could not cancel run {run_id} ({exc})")

    def conclude(self, result: IterationResult, outcome: Outcome) -> None:
        """Exit code, verdicts, diff; print the result block and the --json line."""
        # each iteration is concluded like one eval run (policy, then verdict); watch
        # reports no build verdict to Neens
        conclude(outcome, job=job("run"), world=self.world, client=self.client,
                 policy=self.policy, report_ci=False)
        result.run_id = outcome.run_id
        result.exit_code = outcome.exit_code
        result.error = outcome.error
        if outcome.gate is not None and outcome.gate.passed is not None:
            result.gate_passed = outcome.gate.passed
        if outcome.policy_eval is not None:
            result.policy_blocked = outcome.policy_eval.blocked
        if result.error is None:
            result.metrics = watch_diff.metrics(outcome.run, outcome.gate)
            result.states = watch_diff.item_states(outcome.run, self._rows(outcome))
        compared = self.last_scored if result.states is not None else None
        diff = (watch_diff.diff_items(compared.states or {}, result.states or {})
                if compared is not None else None)
        deltas = (watch_diff.deltas(compared.metrics, result.metrics or {})
                  if compared is not None else None)
        prev = self.previous
        view = watch_text.IterationView(
            number=result.number, exit_code=result.exit_code, status=result.status,
            error=None if result.fatal else result.error, metrics=result.metrics,
            deltas=deltas,
            previous=(prev.status, prev.number) if prev and prev.status != result.status
            else None,
            states=result.states, diff=diff,
            compared_to=compared.number if compared is not None else None,
            continuing=self._continuing(result),
        )
        for line in watch_text.result_lines(view):
            self.world.log(line)
        if self.settings.json:
            record = watch_diff.iteration_record(
                iteration=result.number, run_id=result.run_id, version_label=result.label,
                exit_code=result.exit_code, gate_passed=result.gate_passed,
                policy_blocked=result.policy_blocked, error=result.error,
                trigger=result.trigger, metrics=result.metrics,
                compared_to=view.compared_to, deltas=deltas, diff=diff,
            )
            text = json.dumps(record, separators=(",", ":"), ensure_ascii=False)
            print(text, file=self.world.out, flush=True)
        self.previous = result
        if result.states is not None:
            self.last_scored = result

    def _continuing(self, result: IterationResult) -> bool:
        if result.fatal or self.opts.once:
            return False
        return self.opts.max_iterations is None or result.number < self.opts.max_iterations

    def _rows(self, outcome: Outcome) -> list[ItemRow] | None:
        """The item list's rows, only when the run carries no ``items`` list."""
        if outcome.run is not None and outcome.run.items is not None:
            return None
        try:
            return self.client.get_items(outcome.run_id, row=item_row)
        except Interrupted:
            raise
        except NeensError as exc:
            self.world.log(f"neens: warning: could not read the items of run "
                           f"{outcome.run_id} ({exc})")
            return []


def _declares_gates(policy: GatePolicy | None) -> bool:
    block = getattr(policy, "gates_block", None)
    return bool(callable(block) and block() is not None)


def run_watch(settings: EvalRunSettings, opts: WatchOptions, *, client: NeensClient, world: World,
              policy: GatePolicy | None = None) -> int:
    """The whole command; raises NeensError (exit 2) when the watcher must stop."""
    if not settings.dataset:
        raise UsageError("neens eval watch needs --dataset ID (the golden set every "
                         "iteration replays)")
    return WatchLoop(settings, opts, client=client, world=world, policy=policy).run()

