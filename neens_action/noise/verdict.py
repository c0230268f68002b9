"""The run-level verdict: regressed, improved, no change or inconclusive, with the items it
holds, the pass rate with its uncertainty and the smallest drop this run could have detected.
Pure functions, no I/O; the method is written up in docs/noise.md.

- *regressed*: the stratified exact test (neens_action/noise/stratified.py) finds this run
  passing less than the default branch at level ``alpha`` and holds at least one item that was
  stable on main (with adaptive repeats: and that its later repetitions confirm). The false
  block rate of a run where nothing changed is at most ``alpha``, whatever the item count.
- *improved*: the mirror (failures tested), holding at least one item that failed on main.
- *inconclusive*: nothing to compare with (no item scored, no history), or the run passes less
  but no stable item is held, or the run could not have detected a drop of
  ``detectable_drop`` (its smallest detectable drop at ``power`` is larger). Never a pass.
- *no change*: none of the above.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import Enum
from statistics import median

from neens_action.noise.adaptive import DEFAULT_CAP, DEFAULT_CONFIRM_ALPHA, ItemState, item_state
from neens_action.noise.detectable import smallest_detectable_drop
from neens_action.noise.exact import wilson
from neens_action.noise.model import ItemClass, ItemRecord
from neens_action.noise.stratified import Stratum, expected_sum, step_down, stratum

__all__ = ["NoiseSettings", "PassRate", "RunOutcome", "RunVerdict", "decide"]


class RunOutcome(str, Enum):
    REGRESSED = "regressed"
    IMPROVED = "improved"
    NO_CHANGE = "no change"
    INCONCLUSIVE = "inconclusive"


@dataclass(frozen=True)
class NoiseSettings:
    alpha: float = 0.05              # false-block rate of an A/A run, at most
    break_weight: int = 4            # weight of an item whose misses fit in this run
    power: float = 0.8               # for the smallest detectable drop
    detectable_drop: float = 0.05    # inconclusive when a drop this large could go unseen
    confidence: float = 0.95         # of the pass-rate interval
    adaptive: bool = False           # reps past the first only confirm (adaptive repeats)
    cap: int = DEFAULT_CAP
    confirm_alpha: float = DEFAULT_CONFIRM_ALPHA


@dataclass(frozen=True)
class PassRate:
    """This run's pass rate (the mean over items of each item's share of passing repetitions),
    its interval (Wilson, over every scored repetition) and the default branch's."""

    now: float
    low: float
    high: float
    reps_scored: int
    main: float | None
    main_runs: int


@dataclass(frozen=True)
class RunVerdict:
    outcome: RunOutcome
    reason: str
    p_drop: float
    p_rise: float
    regressed: tuple[str, ...]
    improved: tuple[str, ...]
    flaky: tuple[str, ...]            # mixed on main or now, and not held: never regressions
    pass_rate: PassRate
    detectable_drop: float | None     # in points of pass rate; None: no drop is detectable
    history_runs: int
    classes: dict[str, ItemClass] = field(default_factory=dict)


def _pass_rate(tested: Sequence[ItemRecord], confidence: float, history_runs: int) -> PassRate:
    scored = [r for r in tested if r.now_scored]
    reps = sum(r.now_scored for r in scored)
    passes = sum(r.now_passed for r in scored)
    now = sum(r.now_passed / r.now_scored for r in scored) / len(scored) if scored else 0.0
    low, high = wilson(passes, reps, confidence)
    main_n = sum(r.main_runs for r in tested)
    main = sum(r.main_passed for r in tested) / main_n if main_n else None
    return PassRate(now, low, high, reps, main, history_runs)


def _tables(tested: Sequence[ItemRecord], weight: int,
            rise: bool) -> tuple[list[Stratum], list[Stratum]]:
    """(candidates that may be held, the other items) in the direction tested."""
    may_hold = ItemClass.STABLE_FAIL if rise else ItemClass.STABLE_PASS
    held: list[Stratum] = []
    rest: list[Stratum] = []
    for r in tested:
        k, n = r.now_scored, r.main_runs
        if not k or not n or r.now_passed + r.main_passed in (0, k + n):
            continue  # nothing to compare, or an item that never varied (no chance in it)
        x, h = (k - r.now_passed, n - r.main_passed) if rise else (r.now_passed, r.main_passed)
        table = stratum(r.item_id, x, k, h, n, weight)
        (held if r.item_class is may_hold else rest).append(table)
    return held, rest


def _percent(value: float) -> str:
    return f"{100 * value:.1f} %"


def decide(records: Sequence[ItemRecord], settings: NoiseSettings | None = None) -> RunVerdict:
    """The verdict of one run from every item's history and repetitions."""
    s = settings or NoiseSettings()
    tested = [r.first_rep() for r in records] if s.adaptive else list(records)
    history_runs = max((len(r.history) for r in records), default=0)
    classes = {r.item_id: r.item_class for r in records}
    rate = _pass_rate(tested, s.confidence, history_runs)
    scored = sum(1 for r in tested if r.now_scored)
    compared = sum(1 for r in tested if r.now_scored and r.main_runs)

    def verdict(outcome: RunOutcome, reason: str, p_drop: float = 1.0, p_rise: float = 1.0,
                regressed: Sequence[str] = (), improved: Sequence[str] = (),
                drop: float | None = None) -> RunVerdict:
        held = {*regressed, *improved}
        flaky = tuple(sorted(r.item_id for r in records if r.item_id not in held and (
            classes[r.item_id] is ItemClass.FLAKY or 0 < r.now_passed < r.now_scored)))
        return RunVerdict(outcome, reason, p_drop, p_rise, tuple(regressed), tuple(improved),
                          flaky, rate, drop, history_runs, classes)

    if not scored:
        return verdict(RunOutcome.INCONCLUSIVE, "no item was scored in this run")
    if not compared:
        return verdict(RunOutcome.INCONCLUSIVE, "no item has a history on main to compare with")
    cand, rest = _tables(tested, s.break_weight, rise=False)
    p_drop, held_drop, law = step_down(cand, rest, s.alpha, s.power)
    cand, rest = _tables(tested, s.break_weight, rise=True)
    mean, observed = expected_sum([*cand, *rest])
    # The rise is tested only when this run fails less than expected (else p_rise = 1).
    p_rise, held_rise = step_down(cand, rest, s.alpha)[:2] if observed < mean else (1.0, [])
    if s.adaptive:
        by_id = {r.item_id: r for r in records}
        held_drop = [k for k in held_drop if item_state(by_id[k], s.cap, s.confirm_alpha)
                     is ItemState.BROKEN]
        held_rise = [k for k in held_rise if item_state(by_id[k], s.cap, s.confirm_alpha)
                     is ItemState.FIXED]
    stable = [r for r in tested if r.now_scored and r.main_runs
              and r.item_class is ItemClass.STABLE_PASS]
    n_typ = round(median(r.main_runs for r in stable)) if stable else 0
    k_typ = round(median(r.now_scored for r in stable)) if stable else 0
    items = smallest_detectable_drop(law, n_typ, k_typ, len(stable), s.break_weight, s.alpha,
                                     s.power)
    drop = None if items is None else 100.0 * items / scored
    versus = (f"pass rate {_percent(rate.now)} (interval {_percent(rate.low)} to "
              f"{_percent(rate.high)}) vs main "
              f"{_percent(rate.main) if rate.main is not None else 'n/a'} over "
              f"{history_runs} run{'s' if history_runs != 1 else ''}")
    sees = (f"this run detects a drop of {drop:.1f} pp or more" if drop is not None
            else "this run cannot detect a drop")
    args = {"p_drop": p_drop, "p_rise": p_rise, "regressed": held_drop,
            "improved": held_rise, "drop": drop}
    if held_drop:
        return verdict(RunOutcome.REGRESSED, f"{len(held_drop)} item(s) held regressed "
                       f"(p = {p_drop:.2g}); {versus}", **args)
    if p_drop <= s.alpha * (1 + 1e-9):
        return verdict(RunOutcome.INCONCLUSIVE, f"the run passes less than main (p = "
                       f"{p_drop:.2g}) but no item stable on main is held; {versus}", **args)
    if held_rise:
        return verdict(RunOutcome.IMPROVED, f"{len(held_rise)} item(s) held improved "
                       f"(p = {p_rise:.2g}); {versus}", **args)
    if drop is None:
        return verdict(RunOutcome.INCONCLUSIVE, f"{versus}; {sees} (no item stable on main, "
                       "or too few history runs and repetitions)", **args)
    if drop > 100.0 * s.detectable_drop:
        return verdict(RunOutcome.INCONCLUSIVE, f"{versus}; {sees}, more than the "
                       f"{100 * s.detectable_drop:.1f} pp asked", **args)
    return verdict(RunOutcome.NO_CHANGE, f"{versus}; {sees}", **args)
