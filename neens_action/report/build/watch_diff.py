"""What changed between two ``neens eval watch`` iterations (docs/cli.md).

Pure functions over the server's answers: per-item states from the terminal run (or the item
list's rows when the run carries no ``items``), the headline metrics, their deltas, and the
item diff. ``iteration_record`` assembles the compact ``--json`` object of one iteration.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from neens_action.api.answers import Gate, ItemRow, Run
from neens_action.api.values import real

JsonDict = dict[str, Any]

PASS, FAIL, UNSCORED, ABSENT = "pass", "fail", "unscored", "absent"
METRIC_KEYS = ("passRate", "avgScore", "passed", "failed", "errored", "regressions")
DIFF_KEYS = (
    "newlyFailing", "newlyPassing", "stillFailing", "unchangedPassing",
    "onlyInCurrent", "onlyInPrevious",
)


@dataclass(frozen=True)
class ItemState:
    item_id: str
    state: str  # pass | fail | unscored
    input: str = ""
    error: str | None = None


def item_states(run: Run | None,
                rows: Sequence[ItemRow] | None = None) -> dict[str, ItemState]:
    """Per-item verdicts, in replay order, keyed by item id. From ``run.items`` when the run
    has such a list, else from the item list's ``rows`` (which carry no verdict: every item
    is unscored). ``passed: null`` (never captured, errored, not yet scored) is never a pass.
    """
    source = run.items if run is not None else None
    if source is None:
        source = tuple(rows or ())
    states: dict[str, ItemState] = {}
    for row in source:
        item_id = row.item_id
        if not item_id or item_id in states:
            continue
        state = PASS if row.passed is True else FAIL if row.passed is False else UNSCORED
        states[item_id] = ItemState(item_id, state, row.input, row.error or None)
    return states


def _count(value: int | float | None) -> int | None:
    return None if value is None else int(value)


def metrics(run: Run | None, gate: Gate | None) -> JsonDict:
    """``{passRate, avgScore, passed, failed, errored, regressions}``; None where unknown.
    ``passRate`` prefers the gate's figure; ``regressions`` is None when the gate says nothing
    was compared (``regressions: null``), else the gate's count, else the run's.
    """
    run = run or Run()
    gate = gate or Gate()
    agg = run.aggregate
    pass_rate = real(gate.pass_rate)
    if pass_rate is None:
        pass_rate = real(agg.pass_rate)
    if gate.regressions is not None or gate.regressions_null:
        regressions = _count(gate.regressions)
    else:
        regressions = _count(agg.regressions)
        if regressions is None:
            regressions = _count(run.regressions)
    return {
        "passRate": pass_rate,
        "avgScore": real(agg.avg_score),
        "passed": _count(agg.passed),
        "failed": _count(agg.failed),
        "errored": _count(agg.errored),
        "regressions": regressions,
    }


def deltas(previous: JsonDict | None, current: JsonDict) -> JsonDict | None:
    """``current - previous`` per metric (None where either side is unknown); None when there
    is no previous scored iteration."""
    if previous is None:
        return None
    out: JsonDict = {}
    for key in METRIC_KEYS:
        before, after = previous.get(key), current.get(key)
        if before is None or after is None:
            out[key] = None
        elif key in ("passRate", "avgScore"):
            out[key] = round(after - before, 6)
        else:
            out[key] = int(after - before)
    return out


@dataclass
class ItemChange:
    item_id: str
    label: str  # the item's input, as a one-line snippet
    before: str  # pass | fail | unscored | absent
    after: str
    error: str | None = None

    def to_json(self) -> JsonDict:
        return {
            "itemId": self.item_id, "label": self.label, "before": self.before,
            "after": self.after, "error": self.error,
        }


@dataclass
class ItemDiff:
    """The current iteration against the last iteration that had verdicts."""

    newly_failing: list[ItemChange] = field(default_factory=list)  # was pass, now not
    newly_passing: list[ItemChange] = field(default_factory=list)  # was not pass, now pass
    still_failing: list[ItemChange] = field(default_factory=list)
    unchanged_passing: list[ItemChange] = field(default_factory=list)
    only_in_current: list[ItemChange] = field(default_factory=list)
    only_in_previous: list[ItemChange] = field(default_factory=list)

    def groups(self) -> dict[str, list[ItemChange]]:
        return dict(zip(DIFF_KEYS, (
            self.newly_failing, self.newly_passing, self.still_failing,
            self.unchanged_passing, self.only_in_current, self.only_in_previous,
        ), strict=True))

    def to_json(self) -> JsonDict:
        return {key: [c.to_json() for c in changes] for key, changes in self.groups().items()}


def one_line(text: str, limit: int) -> str:
    """Untrusted text for a single terminal line: whitespace runs collapsed, control
    characters (ANSI escapes included) dropped, cut to ``limit`` characters with ``…``."""
    cleaned = "".join(ch if ch.isprintable() else " " for ch in text)
    cleaned = " ".join(cleaned.split())
    if len(cleaned) > limit:
        cleaned = cleaned[: max(limit - 1, 0)] + "…"
    return cleaned


def diff_items(previous: dict[str, ItemState], current: dict[str, ItemState]) -> ItemDiff:
    out = ItemDiff()
    for item_id, cur in current.items():
        label = one_line(cur.input, 60)
        prev = previous.get(item_id)
        if prev is None:
            out.only_in_current.append(ItemChange(item_id, label, ABSENT, cur.state, cur.error))
            continue
        change = ItemChange(item_id, label, prev.state, cur.state, cur.error)
        if prev.state == PASS:
            (out.unchanged_passing if cur.state == PASS else out.newly_failing).append(change)
        else:
            (out.newly_passing if cur.state == PASS else out.still_failing).append(change)
    for item_id, prev in previous.items():
        if item_id not in current:
            label = one_line(prev.input, 60)
            out.only_in_previous.append(ItemChange(item_id, label, prev.state, ABSENT, None))
    return out


def iteration_record(
    *,
    iteration: int,
    run_id: str,
    version_label: str,
    exit_code: int,
    gate_passed: bool | None,
    policy_blocked: bool | None,
    error: str | None,
    trigger: list[str],
    metrics: JsonDict | None,
    compared_to: int | None,
    deltas: JsonDict | None,
    diff: ItemDiff | None,
) -> JsonDict:
    """The ``--json`` object of one iteration, keys in the documented order."""
    return {
        "iteration": iteration,
        "runId": run_id,
        "versionLabel": version_label,
        "exitCode": exit_code,
        "gatePassed": gate_passed,
        "policyBlocked": policy_blocked,
        "error": error,
        "trigger": list(trigger),
        "metrics": metrics,
        "comparedTo": compared_to,
        "deltas": deltas,
        "diff": diff.to_json() if diff is not None else None,
    }
