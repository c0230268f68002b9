"""The noise-aware run verdict (neens_action/noise/verdict.py) and item classes
(neens_action/noise/model.py) on the edge cases: no history, 1 history run, all items stable,
all flaky, unscored items, K = 1, a hard regression, an improvement."""

from __future__ import annotations

import random

import pytest
from scipy import stats

from neens_action.noise import (
    ItemClass,
    ItemRecord,
    NoiseSettings,
    RunOutcome,
    decide,
    history_fact,
    records_from,
)

P, F = True, False


def stable(count: int, n: int, k: int, prefix: str = "s") -> list[ItemRecord]:
    return [ItemRecord(f"{prefix}{i:03d}", (P,) * n, (P,) * k) for i in range(count)]


def broken(count: int, n: int, k: int) -> list[ItemRecord]:
    return [ItemRecord(f"b{i:03d}", (P,) * n, (F,) * k) for i in range(count)]


def flaky(count: int, n: int, k: int, seed: int = 7) -> list[ItemRecord]:
    rng = random.Random(seed)
    return [ItemRecord(f"f{i:03d}", tuple(rng.random() < 0.5 for _ in range(n)),
                       tuple(rng.random() < 0.5 for _ in range(k))) for i in range(count)]


def test_items_are_classed_from_their_history_and_repetitions():
    assert ItemRecord("a", (P, P), (F,)).item_class is ItemClass.STABLE_PASS
    assert ItemRecord("a", (F, None, F), (P,)).item_class is ItemClass.STABLE_FAIL
    assert ItemRecord("a", (P, F), (P, P)).item_class is ItemClass.FLAKY
    assert ItemRecord("a", (), (P,)).item_class is ItemClass.NEW
    assert ItemRecord("a", (None, None), (P,)).item_class is ItemClass.NEW
    assert ItemRecord("a", (P, P), (None, None)).item_class is ItemClass.UNSCORED
    rec = ItemRecord("a", (P, None, F), (None, P, F))
    assert (rec.main_runs, rec.main_passed, rec.now_scored, rec.now_passed) == (2, 1, 2, 1)


def test_records_from_per_run_maps():
    history = [{"a": True, "b": False}, {"a": True}]
    reps = [{"a": False, "c": True}, {"a": True, "b": True}]
    recs = records_from(history, reps)
    assert [r.item_id for r in recs] == ["a", "b", "c"]
    assert recs[1] == ItemRecord("b", (F, None), (None, P))
    assert recs[2].item_class is ItemClass.NEW


def test_history_facts_in_words():
    assert history_fact(ItemRecord("a", (P, F, P, P, F), (F,))) == \
        "flaky on main: passed 3 of the last 5"
    assert history_fact(ItemRecord("a", (P,), (F,))) == "stable on main: passed 1 of the last run"
    assert history_fact(ItemRecord("a", (F, F), (F,))) == "failing on main: passed 0 of the last 2"
    assert history_fact(ItemRecord("a", (), (F,))) == "new: no history on main"


def test_no_history_is_inconclusive():
    v = decide(stable(20, 0, 3) + broken(5, 0, 3))
    assert v.outcome is RunOutcome.INCONCLUSIVE and "no item has a history" in v.reason
    assert v.regressed == () and v.history_runs == 0
    assert set(v.classes.values()) == {ItemClass.NEW}


def test_nothing_scored_is_inconclusive():
    recs = [ItemRecord(f"u{i}", (P,) * 5, (None,) * 3) for i in range(10)]
    v = decide(recs)
    assert v.outcome is RunOutcome.INCONCLUSIVE and "no item was scored" in v.reason
    assert set(v.classes.values()) == {ItemClass.UNSCORED}


def test_unscored_items_are_left_out_of_the_test():
    unscored = [ItemRecord(f"u{i}", (P,) * 5, (None,) * 3) for i in range(40)]
    v = decide(stable(100, 5, 3) + unscored)
    assert v.outcome is RunOutcome.NO_CHANGE
    assert v.pass_rate.now == 1.0 and v.pass_rate.reps_scored == 300
    assert v.detectable_drop == pytest.approx(1.0)  # one item of the 100 scored
    assert sum(c is ItemClass.UNSCORED for c in v.classes.values()) == 40


def test_all_items_stable_is_no_change_with_its_detectable_drop():
    v = decide(stable(50, 5, 3))
    assert v.outcome is RunOutcome.NO_CHANGE and v.p_drop == 1.0 and v.regressed == ()
    assert v.detectable_drop == pytest.approx(2.0)  # one broken item of 50 (p = 1/56)
    assert "detects a drop of 2.0 pp or more" in v.reason
    lo, hi = stats.binomtest(150, 150).proportion_ci(method="wilson")
    assert (v.pass_rate.low, v.pass_rate.high) == (pytest.approx(lo), pytest.approx(hi))


def test_all_items_flaky_holds_nothing_and_says_so():
    v = decide([ItemRecord(f"f{i}", (P, F, P, F, P), (F, F, F) if i % 2 else (P, F, P))
                for i in range(40)])
    assert v.regressed == () and v.improved == ()
    assert set(v.classes.values()) == {ItemClass.FLAKY} and len(v.flaky) == 40
    # No item is stable on main, so no break could be detected: never a plain "no change".
    assert v.detectable_drop is None and v.outcome is RunOutcome.INCONCLUSIVE
    assert "cannot detect a drop" in v.reason


def test_flaky_items_are_shown_apart_from_regressions():
    v = decide(flaky(40, 5, 3) + stable(100, 5, 3))
    assert v.regressed == ()
    assert {k for k, c in v.classes.items() if c is ItemClass.FLAKY} <= set(v.flaky)
    mixed_now = {r.item_id for r in flaky(40, 5, 3) if 0 < r.now_passed < r.now_scored}
    assert mixed_now <= set(v.flaky)


def test_one_history_run_holds_only_what_it_can():
    # N = 1, K = 3: a broken item alone has p = 1/4; five of them 1/1024.
    v = decide(stable(100, 1, 3) + broken(5, 1, 3))
    assert v.outcome is RunOutcome.REGRESSED
    assert v.p_drop == pytest.approx(0.25 ** 5)
    assert list(v.regressed) == [f"b{i:03d}" for i in range(5)]
    one = decide(stable(100, 1, 3) + broken(1, 1, 3))
    assert one.outcome is RunOutcome.NO_CHANGE and one.regressed == ()
    assert one.p_drop == pytest.approx(0.25)
    # Three broken items alone would give 1/64, but this run's own failing item is part of
    # the noise (p = 1/4 at its lowest): a fourth is needed for 80 % power.
    assert one.detectable_drop == pytest.approx(400 / 101)


def test_k1_with_history_detects_a_hard_regression():
    recs = stable(170, 5, 1) + flaky(20, 5, 1) + broken(10, 5, 1)
    v = decide(recs)
    assert v.outcome is RunOutcome.REGRESSED
    assert {f"b{i:03d}" for i in range(10)} <= set(v.regressed)
    assert not set(v.regressed) & set(v.flaky)


def test_k1_n1_one_failure_is_not_a_regression():
    v = decide(stable(199, 1, 1) + broken(1, 1, 1))
    assert v.regressed == () and v.p_drop == pytest.approx(0.5)


def test_a_hard_regression_with_repeats_names_its_items():
    v = decide(stable(160, 5, 3) + flaky(30, 5, 3) + broken(10, 5, 3))
    assert v.outcome is RunOutcome.REGRESSED and v.p_drop < 1e-6
    assert set(v.regressed) == {f"b{i:03d}" for i in range(10)}
    assert "10 item(s) held regressed" in v.reason
    assert v.pass_rate.main is not None and v.pass_rate.now < v.pass_rate.main


def test_an_improvement_is_held_on_items_failing_on_main():
    fixed = [ItemRecord(f"x{i}", (F,) * 5, (P,) * 3) for i in range(6)]
    v = decide(stable(150, 5, 3) + flaky(20, 5, 3) + fixed)
    assert v.outcome is RunOutcome.IMPROVED and set(v.improved) == {f"x{i}" for i in range(6)}
    assert v.p_rise < 0.05 and v.regressed == ()


def test_a_tiny_dataset_is_inconclusive():
    # 6 items, K = 2, N = 2: one broken item is 16.7 pp and p = 1/6 alone.
    v = decide(stable(6, 2, 2))
    assert v.outcome is RunOutcome.INCONCLUSIVE and v.detectable_drop == pytest.approx(100 / 3)


def test_the_detectable_drop_threshold_is_a_setting():
    v = decide(stable(6, 2, 2), NoiseSettings(detectable_drop=0.5))
    assert v.outcome is RunOutcome.NO_CHANGE


def test_adaptive_repeats_test_the_first_repetition_and_confirm_with_the_rest():
    confirmed = [ItemRecord(f"b{i}", (P,) * 5, (F, F, F, F)) for i in range(10)]
    recovered = [ItemRecord(f"r{i}", (P,) * 5, (F, P)) for i in range(10)]
    settings = NoiseSettings(adaptive=True)
    v = decide(stable(180, 5, 1) + confirmed, settings)
    assert v.outcome is RunOutcome.REGRESSED and len(v.regressed) == 10
    assert v.pass_rate.reps_scored == 190  # the first repetitions only
    w = decide(stable(180, 5, 1) + recovered, settings)
    # The first repetitions look the same, but every item recovered: nothing is held.
    assert w.p_drop == pytest.approx(v.p_drop) and w.regressed == ()
    assert w.outcome is RunOutcome.INCONCLUSIVE
    assert set(w.flaky) == {f"r{i}" for i in range(10)}
