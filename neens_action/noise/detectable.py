"""The smallest drop a run could have detected, at a stated power. Pure functions, no I/O.

The drop is counted in items that were stable on main and stop passing altogether (each
failing every repetition): the run's own law of the test statistic under "nothing changed"
stands for the noise, ``d`` such broken items are added to it, and the smallest ``d`` for
which the test would reject with probability ``power`` is the answer (exact, by the same
convolution as the test itself; neens_action/noise/stratified.py).
"""

from __future__ import annotations

from collections.abc import Sequence

from neens_action.noise.stratified import convolve, stratum

__all__ = ["smallest_detectable_drop"]


def _cdf(law: Sequence[float]) -> list[float]:
    out: list[float] = []
    acc = 0.0
    for p in law:
        acc += p
        out.append(acc)
    return out


def smallest_detectable_drop(law: Sequence[float], main_runs: int, reps: int,
                             candidates: int, weight: int, alpha: float,
                             power: float) -> int | None:
    """The smallest number of broken items (``main_runs`` history passes each, ``reps``
    failing repetitions now) the test detects with probability ``power`` on top of the noise
    ``law`` (the null law of the statistic over this run's items, index = value, possibly cut
    after a value where its distribution function reaches ``power``); None when
    even all ``candidates`` would not do (or there is no history or no repetition)."""
    if main_runs < 1 or reps < 1 or candidates < 1:
        return None
    broken = stratum("", 0, reps, main_runs, main_runs, weight)
    noise = _cdf(law)
    null = list(law)
    limit = len(law) - 1
    tol = alpha * (1 + 1e-9)
    for d in range(1, candidates + 1):
        null = convolve(null, broken, limit)
        # A broken item sits at the lowest value of its own law (0 in these units), so under
        # the drop the statistic is the noise alone; reject at the critical value c_d.
        acc, critical = 0.0, -1
        for value, p in enumerate(null):
            acc += p
            if acc > tol:
                break
            critical = value
        # A law cut short (step_down with power) ends where the noise's distribution
        # function already reaches ``power``: a critical value at its end detects.
        if critical >= 0 and noise[critical] >= power * (1 - 1e-12):
            return d
    return None
