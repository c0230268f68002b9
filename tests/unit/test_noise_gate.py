"""The gate's noise-aware rules (neens_action/noise/gate.py) and adaptive repeats
(neens_action/noise/adaptive.py)."""

from __future__ import annotations

import pytest

from neens_action.noise import (
    ItemRecord,
    ItemState,
    NoiseRules,
    RunOutcome,
    decide,
    inconclusive_outcome,
    item_state,
    judge,
    needs_another_rep,
)
from neens_action.noise.verdict import PassRate, RunVerdict

P, F = True, False


def verdict(outcome: RunOutcome = RunOutcome.NO_CHANGE, regressed: tuple[str, ...] = (),
            rate: tuple[float, float, float] = (0.9, 0.88, 0.92)) -> RunVerdict:
    now, low, high = rate
    return RunVerdict(outcome, "why", 0.5, 0.5, regressed, (), (),
                      PassRate(now, low, high, 600, 0.9, 5), 1.0, 5)


def test_max_regressions_counts_the_items_held():
    two = verdict(RunOutcome.REGRESSED, ("a", "b"))
    assert judge(two, NoiseRules(max_regressions=1)).outcome == "block"
    assert judge(two, NoiseRules(max_regressions=2)).outcome == "pass"
    rule = judge(two, NoiseRules(max_regressions=1)).rules[0]
    assert (rule.rule, rule.observed, rule.threshold, rule.outcome) == \
        ("max-regressions", "2", "1", "fail")


def test_min_pass_rate_is_judged_on_the_interval():
    assert judge(verdict(rate=(0.9, 0.88, 0.92)), NoiseRules(min_pass_rate=0.85)).outcome == "pass"
    assert judge(verdict(rate=(0.8, 0.78, 0.82)), NoiseRules(min_pass_rate=0.85)).outcome == \
        "block"
    straddles = judge(verdict(rate=(0.86, 0.84, 0.88)), NoiseRules(min_pass_rate=0.85))
    assert straddles.outcome == "warn" and straddles.rules[0].outcome == "inconclusive"
    blocking = NoiseRules(min_pass_rate=0.85, on_inconclusive="block")
    assert judge(verdict(rate=(0.86, 0.84, 0.88)), blocking).outcome == "block"


def test_an_inconclusive_verdict_is_never_a_plain_pass():
    inconclusive = verdict(RunOutcome.INCONCLUSIVE)
    assert judge(inconclusive, NoiseRules()).outcome == "warn"
    assert judge(inconclusive, NoiseRules(max_regressions=0)).outcome == "warn"
    assert judge(inconclusive, NoiseRules(on_inconclusive="block")).outcome == "block"
    assert judge(verdict(RunOutcome.NO_CHANGE), NoiseRules()).outcome == "pass"
    assert judge(verdict(RunOutcome.IMPROVED), NoiseRules(max_regressions=0)).outcome == "pass"


def test_a_failed_rule_wins_over_an_inconclusive_one():
    both = verdict(RunOutcome.INCONCLUSIVE, ("a",))
    assert judge(both, NoiseRules(max_regressions=0)).outcome == "block"


def test_on_inconclusive_accepts_warn_or_block_only():
    assert inconclusive_outcome("warn") == "warn"
    assert inconclusive_outcome("block") == "block"
    with pytest.raises(ValueError, match="warn or block"):
        inconclusive_outcome("pass")
    with pytest.raises(ValueError):
        judge(verdict(), NoiseRules(on_inconclusive="maybe"))  # type: ignore[arg-type]


def test_an_a_a_run_with_flaky_items_passes_and_a_hard_regression_blocks():
    stable = [ItemRecord(f"s{i}", (P,) * 5, (P,) * 3) for i in range(160)]
    flaky = [ItemRecord(f"f{i}", (P, F, P, F, F), (F, P, F) if i % 2 else (P, P, F))
             for i in range(30)]
    same = [ItemRecord(f"b{i}", (P,) * 5, (P,) * 3) for i in range(10)]
    broken = [ItemRecord(f"b{i}", (P,) * 5, (F,) * 3) for i in range(10)]
    rules = NoiseRules(max_regressions=0, min_pass_rate=0.85)
    assert judge(decide(stable + flaky + same), rules).outcome == "pass"
    blocked = judge(decide(stable + flaky + broken), rules)
    assert blocked.outcome == "block" and blocked.rules[0].observed == "10"


def test_adaptive_repeats_stop_items_that_cannot_change_the_verdict():
    assert needs_another_rep(ItemRecord("a", (P,) * 5, ()))               # not replayed yet
    assert not needs_another_rep(ItemRecord("a", (P,) * 5, (P,)))         # as on main
    assert not needs_another_rep(ItemRecord("a", (P, F, P), (F,)))        # flaky on main
    assert not needs_another_rep(ItemRecord("a", (), (F,)))               # new
    assert not needs_another_rep(ItemRecord("a", (P,) * 5, (None,)))      # unscored
    assert item_state(ItemRecord("a", (P,) * 5, (None,))) is ItemState.UNSCORED


def test_adaptive_repeats_replay_a_stable_item_that_fails_until_decided():
    rec = ItemRecord("a", (P,) * 5, (F,))
    assert needs_another_rep(rec)                                          # 1/6
    assert needs_another_rep(ItemRecord("a", (P,) * 5, (F, F)))            # 1/21
    assert needs_another_rep(ItemRecord("a", (P,) * 5, (F, F, F)))         # 1/56
    assert item_state(ItemRecord("a", (P,) * 5, (F,) * 4)) is ItemState.BROKEN   # 1/126
    assert item_state(ItemRecord("a", (P,) * 5, (F, P))) is ItemState.SETTLED
    # One history run: never held by its own test, decided at the cap.
    assert needs_another_rep(ItemRecord("a", (P,), (F,) * 4))
    assert item_state(ItemRecord("a", (P,), (F,) * 5)) is ItemState.BROKEN
    assert not needs_another_rep(ItemRecord("a", (P,), (F,) * 5))
    assert not needs_another_rep(ItemRecord("a", (P,), (F,) * 2), cap=2)


def test_adaptive_repeats_replay_a_failing_item_that_passes_until_decided():
    assert needs_another_rep(ItemRecord("a", (F,) * 5, (P,)))
    assert item_state(ItemRecord("a", (F,) * 10, (P, P, P))) is ItemState.FIXED  # 1/286
    assert item_state(ItemRecord("a", (F,) * 5, (P, F))) is ItemState.SETTLED


def test_the_cap_must_allow_one_repetition():
    with pytest.raises(ValueError, match="at least 1"):
        item_state(ItemRecord("a", (P,), (F,)), cap=0)
