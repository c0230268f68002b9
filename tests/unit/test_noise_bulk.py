"""The exact recurrence for many items (neens_action/noise/bulk.py) against the item-by-item
convolution: the same laws to the last bits a float holds, and the same decisions."""

from __future__ import annotations

import random

import pytest

from neens_action.noise import ItemRecord, NoiseSettings, decide, stratified
from neens_action.noise.bulk import BULK_MIN, bulk_law, worth_it
from neens_action.noise.stratified import Stratum, convolve, stratum


def _tables(rng: random.Random, count: int, weights=(1, 4)) -> list[Stratum]:
    out: list[Stratum] = []
    while len(out) < count:
        n, k = rng.randint(1, 6), rng.randint(1, 4)
        item = stratum(f"i{len(out)}", rng.randint(0, k), k, rng.randint(0, n), n,
                       rng.choice(weights))
        if item.informative:
            out.append(item)
    return out


def _close(a: list[float], b: list[float]) -> None:
    assert len(a) == len(b)
    for x, y in zip(a, b, strict=True):
        assert x == pytest.approx(y, rel=1e-12, abs=1e-300)


@pytest.mark.parametrize("seed", range(6))
def test_the_recurrence_gives_the_convolved_law(seed):
    rng = random.Random(seed)
    items = _tables(rng, rng.randint(1, 300))
    for limit in (None, rng.randint(0, 60), rng.randint(100, 600)):
        dist = [1.0]
        for item in items:
            dist = convolve(dist, item, limit)
        _close(bulk_law(items, limit), dist)


def test_it_is_used_only_for_many_items_over_few_tables():
    rng = random.Random(7)
    assert not worth_it(_tables(rng, BULK_MIN - 1))
    same = [stratum(f"i{n}", 1, 3, 2, 5, 1) for n in range(BULK_MIN)]
    assert worth_it(same)


def _records(rng: random.Random, items: int) -> list[ItemRecord]:
    k, n = rng.randint(1, 3), rng.randint(1, 6)
    flaky = rng.uniform(0.05, 0.4)
    broken = rng.choice([0, 0, 3, 10, 30])
    records = []
    for i in range(items):
        p = rng.uniform(0.2, 0.8) if rng.random() < flaky else 1.0
        now = 0.0 if i < broken and p == 1.0 else p
        history = tuple(None if rng.random() < 0.02 else rng.random() < p for _ in range(n))
        reps = tuple(None if rng.random() < 0.02 else rng.random() < now for _ in range(k))
        records.append(ItemRecord(f"item-{i:04d}", history, reps))
    return records


@pytest.mark.parametrize("seed", range(6))
def test_decisions_are_the_same_either_way(seed, monkeypatch):
    rng = random.Random(100 + seed)
    records = _records(rng, rng.randint(280, 500))
    settings = NoiseSettings(adaptive=rng.random() < 0.3)
    monkeypatch.setattr(stratified, "worth_it", lambda items: True)
    fast = decide(records, settings)
    monkeypatch.setattr(stratified, "worth_it", lambda items: False)
    plain = decide(records, settings)
    assert fast.outcome == plain.outcome
    assert (fast.regressed, fast.improved, fast.flaky) == (
        plain.regressed, plain.improved, plain.flaky)
    assert fast.detectable_drop == plain.detectable_drop
    assert fast.p_drop == pytest.approx(plain.p_drop, rel=1e-9, abs=1e-300)
    assert fast.p_rise == pytest.approx(plain.p_rise, rel=1e-9, abs=1e-300)
