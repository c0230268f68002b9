"""The run-level stratified exact test (neens_action/noise/stratified.py) and the smallest
detectable drop (neens_action/noise/detectable.py), against laws enumerated independently
(every joint outcome of the items, each item's probability from scipy's hypergeometric law)."""

from __future__ import annotations

import itertools
import random

import pytest
from scipy import stats

from neens_action.noise.detectable import smallest_detectable_drop
from neens_action.noise.stratified import convolve, expected_sum, lower_tail, step_down, stratum

# (x now, k now, h on main, n on main): a few items of every kind.
ITEMS = [(0, 3, 5, 5), (1, 3, 3, 5), (2, 2, 1, 2), (0, 1, 2, 4), (3, 3, 4, 5), (1, 2, 2, 3)]


def _enumerated_tail(tables, weight: int) -> float:
    """P(weighted sum of passes now <= observed) by enumerating every joint outcome."""
    laws, observed = [], 0
    for x, k, h, n in tables:
        item = stratum("", x, k, h, n, weight)
        law = stats.hypergeom(item.total, item.t, item.k)
        support = range(max(0, k - (item.total - item.t)), min(k, item.t) + 1)
        laws.append([(item.weight * v, law.pmf(v)) for v in support])
        observed += item.weight * x
    tail = 0.0
    for outcome in itertools.product(*laws):
        if sum(v for v, _ in outcome) <= observed:
            prob = 1.0
            for _, p in outcome:
                prob *= p
            tail += prob
    return tail


@pytest.mark.parametrize("weight", [1, 2, 4])
def test_the_run_level_p_value_is_the_exact_tail_of_the_weighted_sum(weight):
    for size in range(1, len(ITEMS) + 1):
        tables = ITEMS[:size]
        items = [stratum(str(i), *t, weight) for i, t in enumerate(tables)]
        assert lower_tail(items) == pytest.approx(_enumerated_tail(tables, weight), rel=1e-9)


def test_weights_follow_the_margins_only():
    # Misses that fit in this run (a break's pattern) weigh break_weight, whatever x is.
    assert stratum("a", 0, 3, 5, 5, 4).weight == 4
    assert stratum("a", 3, 3, 2, 5, 4).weight == 4   # same margins: t = 5 of 8
    assert stratum("a", 1, 3, 3, 5, 4).weight == 1   # 4 misses of 8 cannot all be now
    assert stratum("a", 0, 1, 5, 5, 4).weight == 4


def test_items_that_never_vary_add_nothing():
    steady = [stratum(str(i), 3, 3, 5, 5, 4) for i in range(50)]
    assert not any(s.informative for s in steady)
    assert lower_tail(steady) == 1.0
    broken = stratum("b", 0, 3, 5, 5, 4)
    assert lower_tail([*steady, broken]) == pytest.approx(1 / 56)


def test_convolution_keeps_a_law():
    law = [1.0]
    for t in ITEMS:
        law = convolve(law, stratum("", *t, 2))
    assert sum(law) == pytest.approx(1.0, abs=1e-12) and min(law) >= 0.0


def test_expectation_and_observation_agree_with_the_tables():
    items = [stratum(str(i), *t, 1) for i, t in enumerate(ITEMS)]
    mean, observed = expected_sum(items)
    lows = sum(max(0, i.k - (i.total - i.t)) for i in items if i.informative)
    assert observed + lows == sum(i.x for i in items if i.informative)
    assert mean + lows == pytest.approx(sum(i.expected for i in items if i.informative))


def test_step_down_holds_the_broken_items_and_not_the_noise():
    broken = [stratum(f"b{i}", 0, 3, 5, 5, 4) for i in range(4)]
    noise = [stratum(f"f{i}", x, 3, h, 5, 4) for i, (x, h) in
             enumerate([(1, 3), (2, 2), (3, 2), (0, 1), (2, 4)])]
    whole, held, law = step_down(broken, noise, 0.05)
    assert whole == pytest.approx(lower_tail([*broken, *noise]))
    assert sorted(held) == ["b0", "b1", "b2", "b3"]  # equal evidence: held together
    assert sum(law) == pytest.approx(whole)  # the law is cut after the observed value


def test_a_law_cut_for_the_detectable_drop_gives_the_same_answer_as_the_whole_law():
    rng = random.Random(3)
    for trial in range(40):
        k, n = rng.choice([(1, 5), (3, 5), (2, 2), (5, 10), (1, 1)])
        tables = []
        for _ in range(rng.randrange(0, 25)):
            x, h = rng.randint(0, k), rng.randint(0, n)
            tables.append((x, k, h, n))
        items = [stratum(str(i), *t, 4) for i, t in enumerate(tables)]
        whole_law = [1.0]
        for item in items:
            if item.informative:
                whole_law = convolve(whole_law, item)
        _, _, cut = step_down([], items, 0.05, power=0.8)
        assert len(cut) <= len(whole_law)
        assert cut == pytest.approx(whole_law[: len(cut)], abs=1e-15)
        expected = smallest_detectable_drop(whole_law, n, k, 60, 4, 0.05, 0.8)
        assert smallest_detectable_drop(cut, n, k, 60, 4, 0.05, 0.8) == expected, trial


def test_step_down_holds_nothing_when_the_whole_set_is_not_rejected():
    items = [stratum("a", 1, 3, 5, 5, 4), stratum("b", 2, 3, 3, 5, 4)]
    whole, held, _ = step_down(items, [], 0.05)
    assert whole > 0.05 and held == []


def test_the_false_block_rate_of_the_test_is_at_most_alpha():
    """Under "nothing changed" every joint outcome of these margins is enumerated: the
    probability that the test rejects is at most alpha (exactly, not by simulation)."""
    margins = [(3, 4, 5), (3, 6, 5), (2, 3, 2), (1, 4, 4), (3, 2, 5)]  # (k, t, n)
    for alpha in (0.01, 0.05, 0.2):
        laws = []
        for k, t, n in margins:
            law = stats.hypergeom(n + k, t, k)
            laws.append([(x, law.pmf(x)) for x in range(max(0, k - n), min(k, t) + 1)])
        size = 0.0
        for outcome in itertools.product(*laws):
            items = [stratum(str(i), x, k, t - x, n, 4)
                     for i, ((x, _), (k, t, n)) in enumerate(zip(outcome, margins, strict=True))]
            if lower_tail(items) <= alpha:
                prob = 1.0
                for _, p in outcome:
                    prob *= p
                size += prob
        assert size <= alpha + 1e-12


def test_the_smallest_detectable_drop_without_noise():
    # K = 3, N = 5: one broken item alone has p = 1/56 <= 0.05.
    assert smallest_detectable_drop([1.0], 5, 3, 170, 4, 0.05, 0.8) == 1
    # K = 1, N = 1: each broken item halves the p-value: 2^-5 is the first <= 0.05.
    assert smallest_detectable_drop([1.0], 1, 1, 100, 4, 0.05, 0.8) == 5
    # Not enough candidates, no history, no repetition.
    assert smallest_detectable_drop([1.0], 1, 1, 4, 4, 0.05, 0.8) is None
    assert smallest_detectable_drop([1.0], 0, 3, 4, 4, 0.05, 0.8) is None
    assert smallest_detectable_drop([1.0], 5, 0, 4, 4, 0.05, 0.8) is None


def test_the_smallest_detectable_drop_with_noise_against_enumeration():
    noise_tables = [(1, 3, 3, 5), (2, 3, 2, 5), (0, 3, 4, 5), (3, 3, 1, 5)]
    noise = [stratum(str(i), *t, 4) for i, t in enumerate(noise_tables)]
    law = [1.0]
    for item in noise:
        law = convolve(law, item)
    found = smallest_detectable_drop(law, 5, 3, 50, 4, 0.05, 0.8)
    # Independently: the power of the test with d broken items, by enumerating the noise.
    noise_laws = []
    for item in noise:
        h = stats.hypergeom(item.total, item.t, item.k)
        noise_laws.append([(x, h.pmf(x)) for x in range(max(0, item.k - (item.total - item.t)),
                                                       min(item.k, item.t) + 1)])
    powers = []
    for d in range(1, 6):
        power = 0.0
        for outcome in itertools.product(*noise_laws):
            tables = [(x, i.k, i.t - x, i.total - i.k) for (x, _), i in
                      zip(outcome, noise, strict=True)] + [(0, 3, 5, 5)] * d
            items = [stratum(str(j), *t, 4) for j, t in enumerate(tables)]
            if lower_tail(items) <= 0.05:
                prob = 1.0
                for _, p in outcome:
                    prob *= p
                power += prob
        powers.append(power)
    expected = next(d for d, p in enumerate(powers, start=1) if p >= 0.8)
    assert found == expected
