"""The noise-aware verdict's exact statistics (neens_action/noise/exact.py, pure Python)
against scipy, computed independently: hypergeometric and binomial laws, one-sided Fisher
tests on every small 2x2 table, Wilson and Clopper-Pearson intervals, normal quantiles."""

from __future__ import annotations

import itertools

import pytest
from scipy import stats

from neens_action.noise import exact


def _tables(max_n: int = 6, max_k: int = 5):
    """Every table of k reps now and n history runs, with x and h passes."""
    for n in range(1, max_n + 1):
        for k in range(1, max_k + 1):
            for x, h in itertools.product(range(k + 1), range(n + 1)):
                yield x, k, h, n


def test_hypergeometric_law_matches_scipy():
    for total, successes, draws in itertools.product(range(1, 12), range(12), range(12)):
        if successes > total or draws > total:
            continue
        lo, pmf = exact.hypergeom_pmf(total, successes, draws)
        law = stats.hypergeom(total, successes, draws)
        assert sum(pmf) == pytest.approx(1.0, abs=1e-12)
        for offset, p in enumerate(pmf):
            assert p == pytest.approx(law.pmf(lo + offset), rel=1e-12, abs=1e-15)
        assert law.pmf(lo - 1) == 0.0 and law.pmf(lo + len(pmf)) == 0.0


def test_hypergeometric_law_refuses_an_impossible_table():
    with pytest.raises(ValueError, match="impossible table"):
        exact.hypergeom_pmf(3, 4, 1)


def test_one_sided_fisher_tests_match_scipy_on_every_small_table():
    checked = 0
    for x, k, h, n in _tables():
        table = [[x, k - x], [h, n - h]]
        total, t = n + k, x + h
        less = stats.fisher_exact(table, alternative="less").pvalue
        greater = stats.fisher_exact(table, alternative="greater").pvalue
        assert exact.fisher_less(x, k, t, total) == pytest.approx(less, rel=1e-9, abs=1e-15)
        assert exact.fisher_greater(x, k, t, total) == pytest.approx(greater, rel=1e-9,
                                                                       abs=1e-15)
        checked += 1
    assert checked > 300


def test_a_broken_item_s_exact_p_value():
    # 5 of 5 on main, 0 of 3 now: 1 / C(8, 3) = 1/56.
    assert exact.fisher_less(0, 3, 5, 8) == pytest.approx(1 / 56, rel=1e-12)
    assert stats.fisher_exact([[0, 3], [5, 0]], alternative="less").pvalue == pytest.approx(1 / 56)


@pytest.mark.parametrize(("n", "p"), [(1, 0.5), (7, 0.3), (30, 0.93), (600, 0.925),
                                      (2000, 0.01), (12, 0.0), (12, 1.0)])
def test_binomial_law_and_tails_match_scipy(n, p):
    law = stats.binom(n, p)
    for x in sorted({0, 1, n // 3, n // 2, n - 1, n}):
        assert exact.binom_pmf(x, n, p) == pytest.approx(law.pmf(x), rel=1e-9, abs=1e-300)
        assert exact.binom_cdf(x, n, p) == pytest.approx(law.cdf(x), rel=1e-9, abs=1e-12)
        # binom_sf is "at least x": scipy's sf is "more than x".
        assert exact.binom_sf(x, n, p) == pytest.approx(law.sf(x - 1), rel=1e-9, abs=1e-12)
    assert exact.binom_pmf(-1, n, p) == 0.0 and exact.binom_pmf(n + 1, n, p) == 0.0


@pytest.mark.parametrize(("successes", "n"), [(0, 1), (1, 1), (3, 5), (0, 20), (20, 20),
                                              (555, 600), (185, 200), (6, 6)])
@pytest.mark.parametrize("confidence", [0.9, 0.95, 0.99])
def test_wilson_and_clopper_pearson_match_scipy(successes, n, confidence):
    test = stats.binomtest(successes, n)
    wilson = test.proportion_ci(confidence_level=confidence, method="wilson")
    cp = test.proportion_ci(confidence_level=confidence, method="exact")
    lo, hi = exact.wilson(successes, n, confidence)
    assert (lo, hi) == (pytest.approx(wilson.low, abs=1e-9), pytest.approx(wilson.high, abs=1e-9))
    lo, hi = exact.clopper_pearson(successes, n, confidence)
    assert (lo, hi) == (pytest.approx(cp.low, abs=1e-9), pytest.approx(cp.high, abs=1e-9))


def test_intervals_without_observations_are_the_whole_range():
    assert exact.wilson(0, 0) == (0.0, 1.0)
    assert exact.clopper_pearson(0, 0) == (0.0, 1.0)


@pytest.mark.parametrize("q", [1e-6, 0.025, 0.05, 0.2, 0.5, 0.8, 0.95, 0.975, 1 - 1e-6])
def test_normal_quantile_and_distribution_match_scipy(q):
    assert exact.normal_ppf(q) == pytest.approx(stats.norm.ppf(q), abs=1e-9)
    assert exact.normal_cdf(exact.normal_ppf(q)) == pytest.approx(q, rel=1e-9)


def test_normal_quantile_refuses_the_ends():
    for q in (0.0, 1.0, -0.1):
        with pytest.raises(ValueError):
            exact.normal_ppf(q)
