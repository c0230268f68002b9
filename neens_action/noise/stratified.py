"""The run-level test: a stratified exact conditional test of "this run passes less (or
more) than the default branch did", one stratum per item, and the step-down that names the
items it holds.

Each item is a 2x2 table (this run's repetitions vs its history runs, passed vs failed).
Under "nothing changed", an item's observations are exchangeable, so given the item's pooled
number of passes ``t`` its passes in this run follow the hypergeometric law whatever the
item's own pass probability is: items that always pass (or always fail) carry no chance at
all, and a flaky item carries exactly its own. The statistic is a weighted sum of the items'
passes in this run; its exact law is the convolution of the items' hypergeometric laws (small
integer supports), so the p-value holds whatever the number of items: many items never mean
many chances to block by luck. Weights depend on the margins only (never on the outcome), so
the test stays exact: an item whose pooled failures could all sit in this run (the pattern of
a break: stable on main, failing now) weighs ``break_weight``, any other weighs 1.

Pure functions, no I/O.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from neens_action.noise.bulk import bulk_law, worth_it
from neens_action.noise.exact import fisher_less, hypergeom_pmf

__all__ = ["Stratum", "convolve", "expected_sum", "lower_tail", "moments", "step_down",
           "stratum"]


@dataclass(frozen=True)
class Stratum:
    """One item's table, in the direction tested (passes for a drop, failures for a rise):
    ``x`` of ``k`` in this run, ``t`` of ``total`` pooled; ``weight`` from the margins."""

    key: str
    x: int
    k: int
    t: int
    total: int
    weight: int

    @property
    def informative(self) -> bool:
        """A table whose margins leave ``x`` free (else it adds nothing to the law)."""
        return 0 < self.k < self.total and 0 < self.t < self.total

    @property
    def expected(self) -> float:
        return self.k * self.t / self.total

    @property
    def p_value(self) -> float:
        """The item's own one-sided exact (Fisher) p-value: this few or fewer."""
        return fisher_less(self.x, self.k, self.t, self.total)


def stratum(key: str, x: int, k: int, h: int, n: int, break_weight: int) -> Stratum:
    """The table of ``x`` of ``k`` now and ``h`` of ``n`` in history (counting whatever the
    direction counts): the item weighs ``break_weight`` when its pooled misses fit in this
    run (``total - t <= k``), else 1."""
    total, t = n + k, x + h
    weight = break_weight if total - t <= k else 1
    return Stratum(key, x, k, t, total, weight)


def convolve(dist: list[float], item: Stratum, limit: int | None = None) -> list[float]:
    """The law of ``S + weight * (x - lowest x)`` from the law of ``S`` (index = value), cut
    after ``limit`` when given (every value is >= 0, so values up to ``limit`` of a sum only
    need values up to ``limit`` of its parts: lower tails stay exact).

    Each value is ``sum_j P(S = v - weight * j) * q_j`` added up in the order of ``j`` (the
    same sums, in the same order, as adding the shifted laws one after the other), in one
    pass over the values."""
    _, pmf = hypergeom_pmf(item.total, item.t, item.k)
    w = item.weight
    span = len(dist)
    size = span + w * (len(pmf) - 1)
    if limit is not None:
        size = min(size, limit + 1)
    # The law of S shifted by weight * j, over the values 0 .. size - 1 (zero outside).
    terms = [j for j in range(len(pmf)) if j * w < size]
    shifted = [([0.0] * (j * w) + dist[: size - j * w] + [0.0] * max(0, size - j * w - span))
               for j in terms]
    q = [pmf[j] for j in terms]
    if len(terms) == 1:
        return [a * q[0] for a in shifted[0]]
    if len(terms) == 2:
        q0, q1 = q
        return [a * q0 + b * q1 for a, b in zip(*shifted, strict=True)]
    if len(terms) == 3:
        q0, q1, q2 = q
        return [a * q0 + b * q1 + c * q2 for a, b, c in zip(*shifted, strict=True)]
    if len(terms) == 4:
        q0, q1, q2, q3 = q
        return [a * q0 + b * q1 + c * q2 + d * q3
                for a, b, c, d in zip(*shifted, strict=True)]
    out = [a * q[0] for a in shifted[0]]
    for qj, part in zip(q[1:], shifted[1:], strict=True):
        out = [a + b * qj for a, b in zip(out, part, strict=True)]
    return out


def _shifted(item: Stratum) -> int:
    """The item's observed value in the units of :func:`convolve`."""
    lo = max(0, item.k - (item.total - item.t))
    return item.weight * (item.x - lo)


def lower_tail(items: Sequence[Stratum]) -> float:
    """P(weighted sum <= observed) under "nothing changed": the run-level p-value."""
    dist = [1.0]
    observed = 0
    for item in items:
        if item.informative:
            dist = convolve(dist, item)
            observed += _shifted(item)
    return min(1.0, sum(dist[: observed + 1]))


def moments(items: Sequence[Stratum]) -> tuple[float, float, int]:
    """(expectation, variance, observed value) of the weighted statistic over ``items`` under
    "nothing changed", in the units of :func:`convolve`."""
    mean = var = 0.0
    observed = 0
    for item in items:
        if item.informative:
            lo = max(0, item.k - (item.total - item.t))
            share = item.t / item.total
            spread = item.k * share * (1 - share) * (item.total - item.k) / (item.total - 1)
            mean += item.weight * (item.expected - lo)
            var += item.weight * item.weight * spread
            observed += _shifted(item)
    return mean, var, observed


def expected_sum(items: Sequence[Stratum]) -> tuple[float, int]:
    """(expectation, observed value) of the weighted statistic over ``items``: the run passes
    as expected or better when observed >= expectation."""
    mean, _, observed = moments(items)
    return mean, observed


def step_down(candidates: Sequence[Stratum], rest: Sequence[Stratum], alpha: float,
              power: float | None = None) -> tuple[float, list[str], list[float]]:
    """The run-level p-value over every item, the candidates it holds, and the law of the
    whole statistic under "nothing changed" (index = value), cut after the observed value, or
    with ``power`` after a value whose distribution function is at least ``power`` (the mean
    plus ``sqrt(power / (1 - power))`` standard deviations, by Cantelli's inequality): all
    that the detectable drop reads.

    ``candidates`` are the items that may be named (ordered here by their own evidence,
    strongest first); ``rest`` the other items, always in the law. The test of the whole set
    rejects or not; each time it rejects, the strongest remaining candidate is held and the
    test is repeated without it, until a test no longer rejects (only candidates with a
    deficit are ordered; ties with the last one held are held too). Every law is built once,
    from the weakest end: one convolution in all. Nothing is held unless the whole set is
    rejected, so under "nothing changed" anything is held with probability at most ``alpha``.
    """
    ordered = sorted((c for c in candidates if c.informative and c.x < c.expected),
                     key=lambda c: (c.p_value, c.x - c.expected, c.key))
    mean, var, limit = moments([*candidates, *rest])
    if power is not None:
        limit = max(limit, math.ceil(mean + math.sqrt(var * power / (1 - power))))
    named = {c.key for c in ordered}
    bulk = [i for i in rest if i.informative]
    bulk += [c for c in candidates if c.informative and c.key not in named]
    observed = sum(_shifted(i) for i in bulk)
    if worth_it(bulk):  # thousands of items: one exact recurrence (neens_action/noise/bulk.py)
        dist = bulk_law(bulk, limit)
    else:
        dist = [1.0]
        for item in bulk:
            dist = convolve(dist, item, limit)
    tails: list[float] = []
    for item in reversed(ordered):
        dist = convolve(dist, item, limit)
        observed += _shifted(item)
        tails.append(min(1.0, sum(dist[: observed + 1])))
    tails.reverse()
    whole = tails[0] if tails else min(1.0, sum(dist[: observed + 1]))
    held: list[str] = []
    for item, p in zip(ordered, tails, strict=True):
        if p > alpha * (1 + 1e-9):
            break
        held.append(item.key)
    if held:
        # Candidates with evidence as strong as the last one held cannot be told apart from
        # it (the order among equals is arbitrary): they are held together.
        last = ordered[len(held) - 1].p_value
        held += [c.key for c in ordered[len(held):] if c.p_value <= last * (1 + 1e-9)]
    return whole, held, dist
