"""Plain data produced by a flow: what happened, before anyone decides or renders anything.

A flow (pull, push, stress, shard/finish) fills an :class:`Outcome` from the server's answers
(decoded by the client into the typed objects of :mod:`neens_action.api.answers`) plus what
it observed locally (agent invocations). ``verdict.py`` turns it into an exit code and build
verdict; ``report/`` turns it into a :class:`~neens_action.report.model.Report`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from neens_action.api.answers import Gate, Run
from neens_action.api.comparison import Comparison, Metrics
from neens_action.items import ItemDigest

if TYPE_CHECKING:  # annotations only: not imported before an eval run's first agent
    from neens_action.api.suites import Suite
    from neens_action.api.sweep_comparison import SweepComparison
    from neens_action.api.sweeps import Estimate, Sweep
    from neens_action.noise.evidence import NoiseEvidence
    from neens_action.policy.result import PolicyEval

JsonDict = dict[str, Any]


@dataclass(slots=True)  # one per item: 10,000 items must stay cheap
class Invocation:
    """One execution of the user's command for one frozen item (pull flows only)."""

    item_id: str
    input: str
    returncode: int | None = None
    duration_s: float = 0.0
    timed_out: bool = False
    error: str | None = None  # launch error / timeout text / "rc=3"; None when ok
    output: str = ""  # captured stdout+stderr tail, capped; echoed only inside ::stop-commands::
    # sweep run only
    arm: str | None = None
    model: str | None = None
    rep: int | None = None
    run_id: str | None = None

    @property
    def ok(self) -> bool:
        return self.returncode == 0 and not self.timed_out and self.error is None


@dataclass
class ShardInfo:
    """This job's share of a sharded run: shard ``index`` of ``total``, ``items`` of the
    run's ``total_items`` replayed here."""

    index: int = 1
    total: int = 1
    items: int = 0
    total_items: int = 0


@dataclass
class Outcome:
    """Everything one eval-style command learned."""

    mode: str  # "run" | "push" | "stress" | "finish" | "watch"
    run_id: str = ""
    base_url: str = ""
    run: Run | None = None  # the terminal run (or the create answer of a step that waits)
    gate: Gate | None = None  # the gate answer: None => nothing was measured
    comparison: Comparison | None = None  # with a policy, or when some item did not pass
    metrics: Metrics | None = None  # only when a policy is in play
    baseline_metrics: Metrics | None = None  # the baseline run's rollup (per-judge deltas)
    # one per item; with ``item_digest`` set, only those that did not succeed
    invocations: list[Invocation] = field(default_factory=list)
    # successful invocations, counted where only the failed ones are kept (console runs);
    # None: count them in ``invocations``
    agents_ok: int | None = None
    # console-only runs: the terminal run's items folded as they streamed in (``run`` then
    # has no ``items``): counts and the first rows that did not pass
    item_digest: ItemDigest | None = None
    policy_eval: PolicyEval | None = None  # set by the pipeline when a policy is in play
    policy_identity: JsonDict | None = None  # {name, sha256, overridden} for ci-result
    enforced: bool = True  # False under --no-gate
    error: str | None = None  # run error sentence (=> exit 2)
    interrupted: bool = False  # SIGINT/SIGTERM (=> exit 130)
    warnings: list[str] = field(default_factory=list)
    exit_code: int = 2
    build_verdict: str | None = None  # passed | warned | blocked | errored
    ci_result_reported: bool = False
    suite: Suite | None = None  # stress: the scenario suite object
    # repeats and the default branch's history (None: one replay, one baseline run)
    noise: NoiseEvidence | None = None
    # what the flow did to the run (the interrupt and reporting paths read these)
    created: bool = False  # this job created the run (so it may cancel it)
    started: bool = False  # the run was started (or was found already started)
    triggered: bool = False  # push: the server was asked to run the agent
    # flow-specific facts the reports show
    version_label: str | None = None  # the candidate label the traces carry
    agent_connection: str | None = None  # push / stress: the agent connection id
    agent_timeout: float | None = None  # the per-item agent deadline (s), for hints
    shard: ShardInfo | None = None  # --shard I/N: this job's share
    rerun: str = ""  # the command that re-runs this job's share ("" when nothing to re-run)
    missing_items: list[str] = field(default_factory=list)  # --finish: items without a trace


@dataclass(frozen=True)
class FailedStart:
    """A child run of ``sweep run`` that could not be started (``--json``: ``failedStarts``)."""

    run_id: str
    arm: str
    rep: int
    error: str

    def as_json(self) -> JsonDict:
        return {"runId": self.run_id, "arm": self.arm, "rep": self.rep, "error": self.error}


@dataclass
class SweepOutcome:
    """What a sweep command learned (preview/start/get/decide/run)."""

    command: str  # preview | start | get | decide | run
    sweep_id: str = ""
    base_url: str = ""
    sweep: Sweep | None = None  # the sweep object
    estimate: Estimate | None = None  # sweep preview estimate (unwrapped)
    refusals: list[str] = field(default_factory=list)
    comparison: SweepComparison | None = None  # sweep comparison
    invocations: list[Invocation] = field(default_factory=list)
    failed_starts: list[FailedStart] = field(default_factory=list)
    error: str | None = None
    interrupted: bool = False
    warnings: list[str] = field(default_factory=list)
    # what the verdict rule needs (verdict.decide_sweep): None = the ``sweep run`` rule
    require_winner: bool | None = None
    require_all_arms: bool = False
    timed_out: bool = False  # the poll budget ran out before the sweep finished
    exit_code: int = 2  # decided by the pipeline (verdict.decide_sweep)
    build_verdict: str | None = None
