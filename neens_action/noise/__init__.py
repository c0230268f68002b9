"""A gate that knows noise: pure functions that class each item from its history on the
default branch and this run's repetitions, decide the run (regressed, improved, no change,
inconclusive) with a controlled false-block rate, judge the gate's rules on that verdict, and
say when an item needs another repetition. No I/O; the method is in docs/noise.md.

The API the flows call::

    records = records_from(history_maps, rep_maps)        # or ItemRecord(...) per item
    verdict = decide(records, NoiseSettings(adaptive=...))
    gate = judge(verdict, NoiseRules(max_regressions=..., min_pass_rate=...,
                                     on_inconclusive="warn"))
    needs_another_rep(record, cap=5)                      # adaptive repeats
    history_fact(record)                                  # "flaky on main: passed 3 of the last 5"
"""

from __future__ import annotations

from neens_action.noise.adaptive import ItemState, item_state, needs_another_rep
from neens_action.noise.gate import (
    GateDecision,
    NoiseRules,
    RuleResult,
    inconclusive_outcome,
    judge,
)
from neens_action.noise.model import ItemClass, ItemRecord, history_fact, records_from
from neens_action.noise.verdict import NoiseSettings, PassRate, RunOutcome, RunVerdict, decide

__all__ = [
    "GateDecision", "ItemClass", "ItemRecord", "ItemState", "NoiseRules", "NoiseSettings",
    "PassRate", "RuleResult", "RunOutcome", "RunVerdict", "decide", "history_fact",
    "inconclusive_outcome", "item_state", "judge", "needs_another_rep", "records_from",
]
