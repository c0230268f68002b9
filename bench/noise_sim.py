"""Simulated PRs for ``python -m bench noise``: seeded ``random``, one PR at a time, through
the real verdict functions (neens_action/noise). Nothing here is vectorised on purpose: the
code under test is the pure-Python verdict, called exactly as the flows will call it.

A cell is (flaky share, flaky pass probability, K, N); a PR has ``ITEMS`` items of which the
flaky share passes with the flaky probability on main and now, the rest always passes. Three
scenarios per cell:

- ``aa``: nothing changed (an A/A test): a block is a false block.
- ``hard``: ``HARD`` stable items now always fail (a hard regression).
- ``soft``: every stable item now fails with the probability that takes ``SOFT_POINTS`` points
  off the expected pass rate (a diffuse, soft drop).

``K`` is an int (fixed repeats) or ``"auto"`` (adaptive repeats, the cap in the settings).
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass, field, replace

from neens_action.noise import ItemRecord, NoiseRules, NoiseSettings, decide, judge
from neens_action.noise.adaptive import needs_another_rep

ITEMS = 200
HARD = 10
SOFT_POINTS = 5.0
SCENARIOS = ("aa", "hard", "soft")


@dataclass(frozen=True)
class Cell:
    flaky_share: float
    flaky_p: float
    repeat: int | str   # K, or "auto"
    history: int        # N

    @property
    def label(self) -> str:
        return (f"{100 * self.flaky_share:>4.0f} %  {self.flaky_p:.1f}  {self.repeat!s:>4}  "
                f"{self.history:>2}")


@dataclass
class Tally:
    prs: int = 0
    blocked: int = 0
    inconclusive: int = 0
    flagged: int = 0      # blocked, or inconclusive (a warning: never a plain pass)
    invocations: int = 0
    named_hard: int = 0   # hard-regressed items held regressed, summed over PRs
    drops: list[float] = field(default_factory=list)  # detectable drops (pp); inf: none

    def median_drop(self) -> float:
        """The median smallest detectable drop over the PRs (inf when most detect none)."""
        ordered = sorted(self.drops)
        return ordered[len(ordered) // 2] if ordered else math.inf

    def rate(self, count: int) -> float:
        return count / self.prs if self.prs else 0.0


def _probabilities(cell: Cell, scenario: str) -> tuple[list[float], list[float]]:
    """(pass probability on main, now) per item; flaky items first, the hard ones last."""
    flaky = round(cell.flaky_share * ITEMS)
    main = [cell.flaky_p] * flaky + [1.0] * (ITEMS - flaky)
    now = list(main)
    stable = ITEMS - flaky
    if scenario == "hard":
        for i in range(ITEMS - HARD, ITEMS):
            now[i] = 0.0
    elif scenario == "soft":
        fail = SOFT_POINTS / 100.0 * ITEMS / stable
        for i in range(flaky, ITEMS):
            now[i] = 1.0 - fail
    return main, now


def _draw(rng: random.Random, p: float, times: int) -> tuple[bool, ...]:
    if p >= 1.0:
        return (True,) * times
    if p <= 0.0:
        return (False,) * times
    return tuple(rng.random() < p for _ in range(times))


class _Cache:
    """Records of items that never vary are the same object in every PR (their counts are
    computed once): a speed-up of the simulation only, the verdict sees the same records."""

    def __init__(self) -> None:
        self.records: dict[tuple[int, int, int], ItemRecord] = {}

    def steady(self, index: int, n: int, k: int) -> ItemRecord:
        key = (index, n, k)
        rec = self.records.get(key)
        if rec is None:
            rec = self.records[key] = ItemRecord(f"item-{index:03d}", (True,) * n, (True,) * k)
        return rec


def simulate_pr(rng: random.Random, cell: Cell, main: list[float], now: list[float],
                cache: _Cache, settings: NoiseSettings) -> tuple[list[ItemRecord], int]:
    """One PR's records and the agent invocations it took."""
    records: list[ItemRecord] = []
    invocations = 0
    fixed = cell.repeat != "auto"
    k = int(cell.repeat) if fixed else 1
    for i in range(ITEMS):
        pm, pn = main[i], now[i]
        if pm >= 1.0 and pn >= 1.0:
            rec = cache.steady(i, cell.history, k)
        else:
            rec = ItemRecord(f"item-{i:03d}", _draw(rng, pm, cell.history), _draw(rng, pn, k))
            if not fixed:
                while needs_another_rep(rec, settings.cap, settings.confirm_alpha):
                    rec = ItemRecord(rec.item_id, rec.history, rec.reps + _draw(rng, pn, 1))
        invocations += len(rec.reps)
        records.append(rec)
    return records, invocations


def run_cell(cell: Cell, prs: int, seed: int, scenarios: tuple[str, ...] = SCENARIOS, *,
             rules: NoiseRules | None = None, break_weight: int | None = None,
             ) -> dict[str, Tally]:
    """Every scenario of one cell, ``prs`` simulated PRs each, the gate ``max-regressions 0``
    (on-inconclusive: warn) unless ``rules`` says otherwise."""
    rules = rules or NoiseRules(max_regressions=0)
    settings = NoiseSettings(adaptive=cell.repeat == "auto")
    if break_weight is not None:
        settings = replace(settings, break_weight=break_weight)
    out: dict[str, Tally] = {}
    for scenario in scenarios:
        rng = random.Random(f"{seed}:{cell}:{scenario}")
        main, now = _probabilities(cell, scenario)
        hard_ids = {f"item-{i:03d}" for i in range(ITEMS) if now[i] <= 0.0}
        cache = _Cache()
        tally = Tally()
        for _ in range(prs):
            records, invocations = simulate_pr(rng, cell, main, now, cache, settings)
            verdict = decide(records, settings)
            gate = judge(verdict, rules)
            tally.prs += 1
            tally.blocked += gate.outcome == "block"
            inconclusive = verdict.outcome.value == "inconclusive"
            tally.inconclusive += inconclusive
            tally.flagged += gate.outcome == "block" or inconclusive
            tally.invocations += invocations
            tally.named_hard += len(hard_ids.intersection(verdict.regressed))
            drop = verdict.detectable_drop
            tally.drops.append(math.inf if drop is None else drop)
        out[scenario] = tally
    return out
