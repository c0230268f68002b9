"""The one report model every renderer reads (text, Markdown, JUnit, JSON, dotenv).

Built once from an Outcome by ``report.build``; renderers never call the client and never
re-decide a verdict. All strings here are raw (unescaped): each renderer escapes for its
own medium.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field


@dataclass
class Table:
    title: str
    columns: list[str]
    rows: list[list[str]]
    footer: str | None = None


@dataclass(slots=True)
class JudgeScore:
    """One judge's verdict on one item (``passed`` None: the judge gave no pass/fail)."""

    name: str
    score: float | None
    passed: bool | None = None


@dataclass(slots=True)
class AgentFailure:
    """One agent invocation that did not finish cleanly, counted apart from regressions."""

    item_id: str
    kind: str  # crashed | timed_out | no_trace | launch_failed
    detail: str  # "exit code 3", "after 60 s", "no trace captured"
    returncode: int | None = None
    stderr_tail: str = ""  # last lines of the agent's own output (escaped by renderers)


@dataclass(slots=True)  # one per item: 10,000 items must stay cheap
class ItemVerdict:
    """One golden item as the server scored it (JUnit test case, failed-item list)."""

    item_id: str
    input: str
    state: str  # "pass" | "fail" | "unscored"
    score: float | None = None
    reason: str = ""  # judge reasons / error text
    suite: str = ""  # "" for the dataset, else the eval gate / failure mode it belongs to
    strategy: str = ""  # stress scenarios only
    duration_s: float | None = None
    # evidence: why the item failed (all raw, untrusted text)
    status: str = ""  # regressed | failing | new | agent_failed | unscored | "" (passed)
    expected: str = ""
    answer: str = ""
    judges: list[JudgeScore] = field(default_factory=list)
    baseline: str = ""  # the baseline's result for this item: pass | fail | ""
    baseline_score: float | None = None
    link: str = ""  # a human page for the item or its trace (from the ui-url template)


@dataclass(slots=True)
class JudgeSummary:
    """One judge (scorer) over the whole run, beside the baseline's when it is known.

    ``improved``: items that pass now, failed in the baseline, and this judge passed;
    ``regressed``: regressed items this judge failed (None: the comparison did not say)."""

    name: str
    scored: int  # items this judge scored
    passed: int  # ... and passed
    average: float | None  # its mean score (0..1)
    baseline_pass_rate: float | None = None  # the baseline run's pass rate for this judge
    baseline_average: float | None = None
    improved: int | None = None
    regressed: int | None = None

    @property
    def pass_rate(self) -> float | None:
        return self.passed / self.scored if self.scored else None


@dataclass(slots=True)
class FailureGroup:
    """Items that did not pass the same way: the same state and the same judges failing
    (or, without judges, the same kind of error). ``items``: their ids, in report order."""

    status: str  # the items' status (regressed, failing, agent_failed...)
    failing: list[str]  # the judges that failed, in the run's judge order
    why: str  # without a failing judge: what went wrong ("agent timed out", an error)
    items: list[str] = field(default_factory=list)


@dataclass
class PolicyLine:
    label: str  # e.g. "cost", "metric[faithfulness]"
    severity: str  # block | warn
    status: str  # pass | warn | fail | skipped
    observed: str
    threshold: str
    reason: str


@dataclass
class Chart:
    """A small bar chart (rendered as Mermaid in Markdown, skipped in text)."""

    title: str
    labels: list[str]
    series: dict[str, list[float | None]]  # series name -> one value per label
    unit: str = ""
    bar: float | None = None  # a reference line (the sweep's quality bar), same unit


@dataclass
class Report:
    kind: str  # "eval" | "sweep" | "stress"
    title: str  # e.g. "Pre-prod eval ppr_123"
    verdict: str  # passed | warned | blocked | errored
    exit_code: int
    headline: str  # one sentence: what happened and why
    run_id: str = ""
    run_url: str = ""  # link to the run in Neens, when the base URL is known
    facts: list[tuple[str, str]] = field(default_factory=list)  # ordered label -> value
    reasons: list[str] = field(default_factory=list)  # server gate reasons
    warnings: list[str] = field(default_factory=list)
    tables: list[Table] = field(default_factory=list)
    policy: list[PolicyLine] = field(default_factory=list)
    # every item, in replay order (a list, or for a run whose rows were spilled to disk a
    # ``neens_action.spill.Spill``, read one item at a time: never mutate its items)...
    items: Sequence[ItemVerdict] = field(default_factory=list)
    # ...unless the run was digested (a console-only report): then ``items`` holds only the
    # first items that did not pass, and these say how many items there were in all
    items_total: int | None = None
    items_not_passing: int | None = None
    charts: list[Chart] = field(default_factory=list)
    error: str | None = None
    gate_passed: bool | None = None  # the server gate's own verdict (None: not fetched)
    outputs: dict[str, str] = field(default_factory=dict)  # CI outputs (exit-code, run-id...)
    # what a reviewer reads first: ordered (label, value) pairs such as ("pass rate",
    # "50 % ▼ 50 pp vs 100 %"); raw text
    header: list[tuple[str, str]] = field(default_factory=list)
    caveats: list[str] = field(default_factory=list)  # a rule could not be evaluated, a waiver
    agent_failures: Sequence[AgentFailure] = field(default_factory=list)  # may be spilled too
    agent_total: int = 0  # agent invocations in all (pull runs)
    hints: list[str] = field(default_factory=list)  # "How to fix" bullets for errors/failures
    # human links (never API paths): baseline, sweep, job, summary; and where the report
    # was made (platform, job URL...), so a saved result re-renders without a CI environment
    links: dict[str, str] = field(default_factory=dict)
    context: dict[str, str] = field(default_factory=dict)
    # repeats and history (None without them: every output stays as it was)
    noise: NoiseView | None = None
    # at a glance: one line per judge, and the failing items grouped by how they failed
    judges: list[JudgeSummary] = field(default_factory=list)
    groups: list[FailureGroup] = field(default_factory=list)

    @property
    def failed_items(self) -> Sequence[ItemVerdict]:
        """The items that did not pass (only the first ones of a digested run); of spilled
        items, a sequence that reads each one from disk when asked for it."""
        if isinstance(self.items, list):
            return [i for i in self.items if i.state != "pass"]
        from neens_action.spill import Filtered

        cached = self.__dict__.get("_failing")
        if cached is None or cached.records is not self.items:
            cached = self.__dict__["_failing"] = Filtered(self.items, _not_passing)
        return cached

    @property
    def item_count(self) -> int:
        return len(self.items) if self.items_total is None else self.items_total

    @property
    def not_passing_count(self) -> int:
        if self.items_not_passing is None:
            return len(self.failed_items)
        return self.items_not_passing


def _not_passing(item: ItemVerdict) -> bool:
    return item.state != "pass"


@dataclass
class NoiseItem:
    """One item as the noise-aware verdict sees it: this run's repetitions and main's runs."""

    item_id: str
    now_passed: int
    now_scored: int
    main_passed: int
    main_runs: int
    item_class: str  # stable pass | flaky | stable fail | new | unscored
    fact: str  # "flaky on main: passed 3 of the last 5"


@dataclass
class TrendPoint:
    """One run of the default branch's history (the trend, oldest first)."""

    run_id: str
    version_label: str
    pass_rate: float | None


@dataclass
class RepLine:
    """One repetition's own numbers, as the server scored and gated it."""

    index: int
    run_id: str
    status: str
    pass_rate: float | None
    gate_passed: bool | None
    items_replayed: int


@dataclass
class NoiseView:
    """Repeats and the default branch's history, as every surface shows them (raw text)."""

    outcome: str  # regressed | improved | no change | inconclusive
    gate: str  # pass | warn | block (the noise-aware rules)
    line: str  # "no change: pass rate 92.1 % ± 1.9 pp vs main 92.4 % over 5 runs; ..."
    repeat: str  # "3" or "auto"
    history_found: int
    history_requested: int
    history_end: str
    pass_rate: float
    low: float
    high: float
    main: float | None
    detectable_drop: float | None  # pp
    regressed: list[NoiseItem] = field(default_factory=list)
    improved: list[NoiseItem] = field(default_factory=list)
    flaky: list[NoiseItem] = field(default_factory=list)
    facts: dict[str, str] = field(default_factory=dict)  # failing item -> its history fact
    rules: list[PolicyLine] = field(default_factory=list)  # rule, observed, threshold, outcome
    trend: list[TrendPoint] = field(default_factory=list)  # oldest first
    trend_warning: str = ""
    reps: list[RepLine] = field(default_factory=list)
