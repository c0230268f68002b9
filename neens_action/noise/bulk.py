"""The law of the weighted statistic over many items at once, exactly, in time linear in its
length: what :func:`neens_action.noise.stratified.step_down` needs for the items it never
names (thousands of them in a large run). Pure functions, no I/O.

Items with the same table (``total``, ``t``, ``k`` and weight) have the same law, so a run of
thousands of items has a handful of distinct laws ``B_g``, the ``g``-th held by ``m_g``
items. With the hypergeometric probabilities' integer numerators (``C(t, x) C(total - t,
k - x)``, over ``C(total, k)``), the law of the sum is, up to one integer denominator, the
integer polynomial ``F = prod_g B_g ** m_g``. Its logarithmic derivative gives ``D F' = N F``
with ``D = prod_g B_g`` and ``N = sum_g m_g B_g' prod_{h != g} B_h``, a recurrence of the
order of ``D``'s degree (a few dozen) for the coefficients of ``F``, computed with Python's
exact integers: each value costs a few dozen integer products instead of one pass over the
whole law per item. The values are exact until the final division, which rounds each one
correctly; the item-by-item convolution (:func:`neens_action.noise.stratified.convolve`)
rounds at every step, so the two agree to the last bits a float holds
(``tests/unit/test_noise_bulk.py`` checks it, and that decisions are the same).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from typing import Protocol

__all__ = ["BULK_MIN", "bulk_law", "worth_it"]

BULK_MIN = 256  # fewer items than this: the item-by-item convolution is as fast


class Table(Protocol):
    t: int
    k: int
    total: int
    weight: int


Key = tuple[int, int, int]  # total, t, k


def _numerators(total: int, t: int, k: int) -> list[int]:
    """The item's law times ``C(total, k)``, as a polynomial (index = value above the
    lowest)."""
    lo = max(0, k - (total - t))
    return [math.comb(t, x) * math.comb(total - t, k - x) for x in range(lo, min(k, t) + 1)]


def _mul(a: list[int], b: list[int]) -> list[int]:
    out = [0] * (len(a) + len(b) - 1)
    for i, x in enumerate(a):
        for j, y in enumerate(b):
            out[i + j] += x * y
    return out


def _classes(items: Sequence[Table]) -> dict[int, Counter[Key]]:
    """Items by weight, then by table."""
    out: dict[int, Counter[Key]] = {}
    for i in items:
        out.setdefault(i.weight, Counter())[(i.total, i.t, i.k)] += 1
    return out


def _order(groups: Counter[Key]) -> int:
    """The recurrence's order (the degree of ``D``) over one weight's tables."""
    return sum(min(k, t) - max(0, k - (total - t)) for total, t, k in groups)


def worth_it(items: Sequence[Table]) -> bool:
    """True when the recurrence beats the item-by-item convolution: many items over few
    distinct tables (each value of a weight's law costs about ``2 * order`` integer products
    here, against about 2 float operations per item there)."""
    if len(items) < BULK_MIN:
        return False
    return len(items) >= 16 * max(_order(g) for g in _classes(items).values())


def _exact(groups: Counter[Key], top: int) -> list[float]:
    """The law of the sum of ``x - lowest x`` over the items of ``groups`` (one weight, in
    its units), values 0 .. ``top`` at most: exact integers, one rounding at the end."""
    polys = {key: _numerators(*key) for key in groups}
    degree = sum(m * (len(polys[key]) - 1) for key, m in groups.items())
    top = min(degree, top)
    d_poly = [1]
    for key in groups:
        d_poly = _mul(d_poly, polys[key])
    n_poly = [0] * max(1, len(d_poly) - 1)
    for key, m in groups.items():
        part = [m * i * c for i, c in enumerate(polys[key])][1:] or [0]
        for other in groups:
            if other != key:
                part = _mul(part, polys[other])
        for i, c in enumerate(part):
            n_poly[i] += c
    d_terms = [(i, c) for i, c in enumerate(d_poly) if c and i]
    n_terms = [(i, c) for i, c in enumerate(n_poly) if c]
    d0 = d_poly[0]
    f = [math.prod(polys[key][0] ** m for key, m in groups.items())]
    for n in range(top):
        # D_0 (n + 1) f[n + 1] = sum_i N_i f[n - i] - sum_{i >= 1} D_i (n + 1 - i) f[n + 1 - i]
        acc = 0
        for i, c in n_terms:
            if i > n:
                break
            acc += c * f[n - i]
        for i, c in d_terms:
            if i > n + 1:
                break
            acc -= c * (n + 1 - i) * f[n + 1 - i]
        f.append(acc // (d0 * (n + 1)))
    denominator = math.prod(math.comb(total, k) ** m for (total, _, k), m in groups.items())
    return [v / denominator for v in f]


def bulk_law(items: Sequence[Table], limit: int | None = None) -> list[float]:
    """The law of ``sum_i weight_i * (x_i - lowest x_i)`` over ``items`` (informative tables)
    under "nothing changed", index = value, cut after ``limit`` when given: the same law as
    convolving the items one by one. Each weight's law is exact (above); the weights' laws
    are then convolved as floats (two of them: 1 and the break weight)."""
    classes = _classes(items)
    dist = [1.0]
    for weight in sorted(classes):
        groups = classes[weight]
        degree = sum(m * (min(k, t) - max(0, k - (total - t))) for (total, t, k), m
                     in groups.items())
        top = degree if limit is None else min(degree, limit // weight)
        law = _exact(groups, top)
        size = len(dist) + weight * (len(law) - 1)
        if limit is not None:
            size = min(size, limit + 1)
        out = [0.0] * size
        # Values far below the mean underflow to exactly 0.0: they add nothing, skip them.
        first = next((i for i, p in enumerate(dist) if p != 0.0), len(dist))
        for j, q in enumerate(law):
            off = j * weight + first
            if off >= size:
                break
            if q == 0.0:
                continue
            seg = min(len(dist) - first, size - off)
            part = dist[first:first + seg]
            out[off:off + seg] = [a + p * q for a, p in zip(out[off:off + seg], part,
                                                             strict=True)]
        dist = out
    return dist
