"""Exact small-sample statistics in pure Python: hypergeometric and binomial laws, the
one-sided Fisher test of a 2x2 table, and two intervals for a pass rate (Wilson's score
interval and the exact Clopper-Pearson one).

Pure functions, no I/O, no third-party code. Probabilities of the hypergeometric law are
ratios of exact integers (``math.comb``), so small tables are exact to the last bit a float
holds; binomial terms go through ``math.lgamma`` so that thousands of trials do not overflow.
"""

from __future__ import annotations

import functools
import math

__all__ = [
    "binom_cdf",
    "binom_pmf",
    "binom_sf",
    "clopper_pearson",
    "fisher_greater",
    "fisher_less",
    "hypergeom_pmf",
    "normal_cdf",
    "normal_ppf",
    "wilson",
]


@functools.lru_cache(maxsize=4096)
def hypergeom_pmf(total: int, successes: int, draws: int) -> tuple[int, tuple[float, ...]]:
    """The law of the number of successes in ``draws`` drawn without replacement from
    ``total`` of which ``successes`` succeed: ``(lowest value, (P(lowest), P(lowest+1), ...))``
    (cached: a run has few distinct tables, the verdict reads each law many times).
    """
    if not 0 <= successes <= total or not 0 <= draws <= total:
        raise ValueError(f"impossible table: total={total} successes={successes} draws={draws}")
    lo = max(0, draws - (total - successes))
    hi = min(draws, successes)
    whole = math.comb(total, draws)
    return lo, tuple(math.comb(successes, x) * math.comb(total - successes, draws - x) / whole
                     for x in range(lo, hi + 1))


def fisher_less(x: int, k: int, t: int, total: int) -> float:
    """One-sided exact (Fisher) p-value that a sample of ``k`` out of ``total`` observations,
    ``t`` of which passed, holds ``x`` passes or fewer: the 2x2 table
    ``[[x, k - x], [t - x, total - k - t + x]]`` tested for "the first row passes less"."""
    lo, pmf = hypergeom_pmf(total, t, k)
    return min(1.0, sum(pmf[: max(0, x - lo + 1)]))


def fisher_greater(x: int, k: int, t: int, total: int) -> float:
    """The mirror of :func:`fisher_less`: ``x`` passes or more."""
    lo, pmf = hypergeom_pmf(total, t, k)
    return min(1.0, sum(pmf[max(0, x - lo):]))


def binom_pmf(x: int, n: int, p: float) -> float:
    """P(X = x) for X ~ Binomial(n, p)."""
    if x < 0 or x > n:
        return 0.0
    if p <= 0.0:
        return 1.0 if x == 0 else 0.0
    if p >= 1.0:
        return 1.0 if x == n else 0.0
    log = (math.lgamma(n + 1) - math.lgamma(x + 1) - math.lgamma(n - x + 1)
           + x * math.log(p) + (n - x) * math.log1p(-p))
    return math.exp(log)


def binom_cdf(x: int, n: int, p: float) -> float:
    """P(X <= x) for X ~ Binomial(n, p)."""
    if x < 0:
        return 0.0
    if x >= n:
        return 1.0
    return min(1.0, math.fsum(binom_pmf(i, n, p) for i in range(x + 1)))


def binom_sf(x: int, n: int, p: float) -> float:
    """P(X >= x) for X ~ Binomial(n, p) (note: "at least x", the tail a lower bound needs)."""
    if x <= 0:
        return 1.0
    if x > n:
        return 0.0
    return min(1.0, math.fsum(binom_pmf(i, n, p) for i in range(x, n + 1)))


def normal_cdf(z: float) -> float:
    """The standard normal distribution function."""
    return 0.5 * math.erfc(-z / math.sqrt(2.0))


def normal_ppf(q: float) -> float:
    """The standard normal quantile, by bisection on :func:`normal_cdf` (exact to ~1e-12)."""
    if not 0.0 < q < 1.0:
        raise ValueError(f"quantile out of (0, 1): {q}")
    lo, hi = -40.0, 40.0
    for _ in range(200):
        mid = (lo + hi) / 2.0
        if normal_cdf(mid) < q:
            lo = mid
        else:
            hi = mid
        if hi - lo < 1e-13:
            break
    return (lo + hi) / 2.0


def wilson(successes: int, n: int, confidence: float = 0.95) -> tuple[float, float]:
    """Wilson's score interval for a proportion (two-sided, ``confidence``); ``(0, 1)``
    when there is no observation."""
    if n <= 0:
        return 0.0, 1.0
    z = normal_ppf(0.5 + confidence / 2.0)
    phat = successes / n
    denom = 1.0 + z * z / n
    centre = (phat + z * z / (2 * n)) / denom
    half = z * math.sqrt(phat * (1 - phat) / n + z * z / (4 * n * n)) / denom
    return max(0.0, centre - half), min(1.0, centre + half)


def _bisect_p(tail, target: float) -> float:
    """The p in [0, 1] where the monotone increasing function ``tail`` reaches ``target``."""
    lo, hi = 0.0, 1.0
    for _ in range(100):
        mid = (lo + hi) / 2.0
        if tail(mid) < target:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2.0


def clopper_pearson(successes: int, n: int, confidence: float = 0.95) -> tuple[float, float]:
    """The exact (Clopper-Pearson) interval for a proportion, by inverting the binomial
    tails; ``(0, 1)`` when there is no observation."""
    if n <= 0:
        return 0.0, 1.0
    a = (1.0 - confidence) / 2.0
    lower = 0.0 if successes == 0 else _bisect_p(lambda p: binom_sf(successes, n, p), a)
    upper = 1.0 if successes == n else _bisect_p(
        lambda p: 1.0 - binom_cdf(successes, n, p), 1.0 - a)
    return lower, upper
