"""Adaptive repeats: every item is replayed once, and again only while its verdict is still
in doubt, up to a cap. Pure functions, no I/O.

An item is in doubt when this run contradicts a uniform history: stable on main and failing
every repetition so far (broken, or a flaky item caught on a bad streak), or failing on main
and passing every repetition so far (fixed, or lucky). Another repetition settles it: one
contrary result makes it flaky (decided, stop); else the item is decided once its own exact
test holds it (``confirm_alpha``) or the cap is reached. Every other item is decided after its
first scored repetition (nothing a repeat could change), and an item no repetition scored is
not replayed again (a repeat does not make the scorer score it).

Only the first repetition enters the run-level test (a fixed design, so the test stays
exact); the later ones only confirm the items the test holds, so they can remove a block but
never add one.
"""

from __future__ import annotations

from enum import Enum

from neens_action.noise.exact import fisher_less
from neens_action.noise.model import ItemRecord

__all__ = ["DEFAULT_CAP", "DEFAULT_CONFIRM_ALPHA", "ItemState", "item_state",
           "needs_another_rep"]

DEFAULT_CAP = 5
DEFAULT_CONFIRM_ALPHA = 0.01


class ItemState(str, Enum):
    PENDING = "pending"      # replay it again
    SETTLED = "settled"      # nothing to decide, or decided without a change
    BROKEN = "broken"        # stable on main, failed every repetition, held by its own test
    FIXED = "fixed"          # failing on main, passed every repetition, held likewise
    UNSCORED = "unscored"    # replayed, never scored: not replayed again


def item_state(record: ItemRecord, cap: int = DEFAULT_CAP,
               confirm_alpha: float = DEFAULT_CONFIRM_ALPHA) -> ItemState:
    """Where adaptive repeats stand for one item (its history and repetitions so far)."""
    if cap < 1:
        raise ValueError(f"the repeat cap must be at least 1: {cap}")
    if not record.reps:
        return ItemState.PENDING
    k, x = record.now_scored, record.now_passed
    if k == 0:
        return ItemState.UNSCORED
    n, h = record.main_runs, record.main_passed
    if n == 0:
        return ItemState.SETTLED
    if h == n and x == 0:
        total = n + k
        held = fisher_less(0, k, n, total) <= confirm_alpha
        if held or len(record.reps) >= cap:
            return ItemState.BROKEN
        return ItemState.PENDING
    if h == 0 and x == k:
        total = n + k
        held = fisher_less(0, k, n, total) <= confirm_alpha  # failures, mirrored
        if held or len(record.reps) >= cap:
            return ItemState.FIXED
        return ItemState.PENDING
    return ItemState.SETTLED


def needs_another_rep(record: ItemRecord, cap: int = DEFAULT_CAP,
                      confirm_alpha: float = DEFAULT_CONFIRM_ALPHA) -> bool:
    """True when the item should be replayed once more (never past ``cap`` repetitions)."""
    return len(record.reps) < cap and item_state(record, cap, confirm_alpha) is ItemState.PENDING
