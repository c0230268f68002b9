"""What the noise-aware verdict reads, per item: its history on the default branch (one
pass/fail per earlier run, absent where the run did not hold or did not score it) and this
run's repetitions (one pass/fail per repetition, absent where unscored or not replayed);
and how each item is classed from them.

Classes (the item's behaviour on the default branch, the candidate's repetitions say the
rest): ``stable pass`` (passed in every history run that scored it), ``stable fail`` (failed
in every one), ``flaky`` (both), ``new`` (no history), ``unscored`` (no repetition of this
run scored it). Pure data and pure functions, no I/O.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import Enum

__all__ = ["ItemClass", "ItemRecord", "history_fact", "records_from"]

Outcome = bool | None  # True passed, False failed, None absent or unscored


class ItemClass(str, Enum):
    STABLE_PASS = "stable pass"
    FLAKY = "flaky"
    STABLE_FAIL = "stable fail"
    NEW = "new"
    UNSCORED = "unscored"


@dataclass(frozen=True)
class ItemRecord:
    """One item: ``history`` newest run first, ``reps`` in the order they were replayed
    (the first repetition first: adaptive repeats test on it alone). The counts and the class
    are computed once, when the record is made (the verdict reads them many times)."""

    item_id: str
    history: tuple[Outcome, ...] = ()
    reps: tuple[Outcome, ...] = ()
    main_runs: int = field(init=False, repr=False, compare=False)   # history runs that scored it
    main_passed: int = field(init=False, repr=False, compare=False)
    now_scored: int = field(init=False, repr=False, compare=False)  # repetitions that scored it
    now_passed: int = field(init=False, repr=False, compare=False)
    item_class: ItemClass = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        history, reps = self.history, self.reps
        runs = len(history) - history.count(None)
        passed = history.count(True)
        scored = len(reps) - reps.count(None)
        put = object.__setattr__
        put(self, "main_runs", runs)
        put(self, "main_passed", passed)
        put(self, "now_scored", scored)
        put(self, "now_passed", reps.count(True))
        put(self, "item_class", ItemClass.UNSCORED if scored == 0 else ItemClass.NEW
            if runs == 0 else ItemClass.STABLE_PASS if passed == runs else
            ItemClass.STABLE_FAIL if passed == 0 else ItemClass.FLAKY)

    def first_rep(self) -> ItemRecord:
        """The same item with its first repetition only (what the adaptive design tests)."""
        if len(self.reps) <= 1:
            return self
        return ItemRecord(self.item_id, self.history, self.reps[:1])


def records_from(history: Sequence[dict[str, bool]],
                 reps: Sequence[dict[str, bool]]) -> list[ItemRecord]:
    """Records from per-run maps ``item id -> passed`` (an item absent from a map is absent
    from that run): ``history`` newest run first, ``reps`` in replay order. Every item seen
    in any repetition or history run gets a record, sorted by id."""
    ids = sorted({key for run in (*history, *reps) for key in run})
    return [ItemRecord(key, tuple(run.get(key) for run in history),
                       tuple(run.get(key) for run in reps)) for key in ids]


def history_fact(record: ItemRecord) -> str:
    """The item's history in words, for a failing item even without repeats:
    ``flaky on main: passed 3 of the last 5``."""
    runs, passed = record.main_runs, record.main_passed
    if runs == 0:
        return "new: no history on main"
    last = "the last run" if runs == 1 else f"the last {runs}"
    kind = {ItemClass.STABLE_PASS: "stable on main", ItemClass.STABLE_FAIL: "failing on main",
            ItemClass.FLAKY: "flaky on main"}
    cls = (ItemClass.STABLE_PASS if passed == runs else
           ItemClass.STABLE_FAIL if passed == 0 else ItemClass.FLAKY)
    return f"{kind[cls]}: passed {passed} of {last}"
