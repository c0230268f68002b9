"""Per-item data of a run, kept small: memory must not grow with the golden set.

- :class:`LazySequence`: a read-only sequence that makes each element when asked for it.
- :class:`FrozenItem` / :func:`frozen_item`: one item-list row reduced to what the runner needs.
- :class:`ItemSpool`: the frozen prompts of a run in an unlinked temporary file, read back
  one at a time (a few bytes of memory per item, whatever the prompts' size).
- :class:`ItemDigest`: the terminal run's item rows folded as they stream in: counts, and
  the first few rows that did not pass (what the console report shows).
- :func:`slim_run_item`: a run item row trimmed to the fields the report reads.

Stateful sinks (spool, digest) are fed by a streamed response that a retry may read again
from its first row, so each has ``reset()``.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import threading
from array import array
from collections.abc import Iterator, Sequence
from typing import Any, NamedTuple, TypeVar, overload

from neens_action.api.answers import ItemRow

SLIM_ITEM_KEYS = ("datasetVersionItemId", "itemId", "item_id", "input", "passed", "score",
                  "avgScore", "reason", "reasons", "error", "gateId", "gateName", "captured")
# Short texts that repeat across thousands of rows ("no trace captured", a gate id): one copy.
_SHARED_TEXT = frozenset(("reason", "error", "gateId", "gateName"))
_LONE = "surrogatepass"  # JSON escapes can make lone surrogates: kept as they are
READ_AHEAD = 256  # items read back from the spool per system call
SHOWN_ITEMS = 20  # not-passing items the console report lists (report/text.py)


T = TypeVar("T")


class LazySequence(Sequence[T]):
    """A ``Sequence`` whose subclasses give ``__len__`` and ``_get(index)`` (an int in
    range, negatives already added to the length); slices are lists made from those."""

    def _get(self, index: int) -> T:
        raise NotImplementedError

    @overload
    def __getitem__(self, index: int) -> T: ...

    @overload
    def __getitem__(self, index: slice) -> list[T]: ...

    def __getitem__(self, index: int | slice) -> T | list[T]:
        if isinstance(index, slice):
            return [self._get(i) for i in range(*index.indices(len(self)))]
        if index < 0:
            index += len(self)
        if not 0 <= index < len(self):
            raise IndexError("item index out of range")
        return self._get(index)


class FrozenItem(NamedTuple):
    """One frozen prompt of a run (an item-list row reduced to what the runner needs)."""

    item_id: str
    input: str


def frozen_item(row: Any) -> FrozenItem | None:
    """An item-list row as a FrozenItem (its id may be "": the caller refuses that)."""
    if not isinstance(row, dict):
        return None
    item_id = row.get("item_id") or row.get("itemId") or row.get("id") or ""
    text = row.get("input")
    if text is None:
        text = ""
    elif not isinstance(text, str):
        text = json.dumps(text, ensure_ascii=False)
    return FrozenItem(str(item_id), text)


class ItemSpool(LazySequence[FrozenItem]):
    """Frozen items in an unlinked temporary file (mode 0600, gone when closed or when the
    process dies); memory holds 12 bytes per item. ``spool[i]`` reads item ``i`` back with
    ``os.pread``, so worker threads read concurrently without a shared file position.
    Where no temporary file can be made, the items are kept in memory instead."""

    def __init__(self) -> None:
        # record i = its id then its input (UTF-8), at offsets[i]..offsets[i + 1]
        self._offsets = array("Q", [0])
        self._key_sizes = array("I")
        self._lock = threading.Lock()
        self._memory: list[FrozenItem] | None = None
        self._window: tuple[int, list[FrozenItem]] = (0, [])  # the last block read back
        self.first_without_id: int | None = None  # 1-based position of a row with no id
        try:
            # lives as long as the spool: closed by close() / the with block
            self._file: Any = tempfile.TemporaryFile(  # noqa: SIM115
                prefix="neens-items-", buffering=0)
        except OSError:
            self._file, self._memory = None, []

    def add(self, row: Any) -> None:
        """Append an item-list row (a stream element function: returns None, keeps nothing)."""
        item = frozen_item(row)
        if item is None:
            return
        if not item.item_id and self.first_without_id is None:
            self.first_without_id = len(self) + 1
        if self._memory is not None:
            self._memory.append(item)
            return
        key = item.item_id.encode("utf-8", _LONE)
        data = key + item.input.encode("utf-8", _LONE)
        with self._lock:
            end = self._offsets[-1]
            os.pwrite(self._file.fileno(), data, end)
            self._offsets.append(end + len(data))
            self._key_sizes.append(len(key))

    def reset(self) -> None:
        """Forget every item (a retried read starts again from the first row)."""
        with self._lock:
            self._offsets = array("Q", [0])
            self._key_sizes = array("I")
            self._window = (0, [])
            self.first_without_id = None
            if self._memory is not None:
                self._memory.clear()
            else:
                self._file.truncate(0)

    def close(self) -> None:
        if self._file is not None:
            self._file.close()

    def __enter__(self) -> ItemSpool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __len__(self) -> int:
        if self._memory is not None:
            return len(self._memory)
        return len(self._offsets) - 1

    def _get(self, index: int) -> FrozenItem:
        if self._memory is not None:
            return self._memory[index]
        first, block = self._window
        if not first <= index < first + len(block):
            first, block = index, self._read_block(index)
            self._window = (first, block)  # one tuple: readers in other threads see either
        return block[index - first]

    def _read_block(self, first: int) -> list[FrozenItem]:
        """Items ``first`` onwards, up to :data:`READ_AHEAD` of them or 1 MiB of text, with
        one ``pread`` (the runner takes items in order: one system call per block, not per
        item, which also spares each worker thread a GIL round trip per item)."""
        offsets, sizes = self._offsets, self._key_sizes
        last = min(first + READ_AHEAD, len(offsets) - 1)
        while last > first + 1 and offsets[last] - offsets[first] > 1 << 20:
            last = first + (last - first) // 2
        base = offsets[first]
        data = os.pread(self._file.fileno(), offsets[last] - base, base)
        block = []
        for i in range(first, last):
            start, end = offsets[i] - base, offsets[i + 1] - base
            key_end = start + sizes[i]
            block.append(FrozenItem(data[start:key_end].decode("utf-8", _LONE),
                                    data[key_end:end].decode("utf-8", _LONE)))
        return block

    def __iter__(self) -> Iterator[FrozenItem]:
        for i in range(len(self)):
            yield self[i]


def slim_run_item(row: Any) -> Any:
    """One run item row, as the report reads it: the :data:`SLIM_ITEM_KEYS` that are set
    (a missing key reads as None, like a null one), repeated texts shared."""
    if not isinstance(row, dict):
        return row
    out = {}
    for key in SLIM_ITEM_KEYS:
        value = row.get(key)
        if value is not None:
            if key in _SHARED_TEXT and isinstance(value, str) and len(value) <= 200:
                value = sys.intern(value)
            out[key] = value
    return out


class ItemDigest:
    """The item rows of a terminal run, folded one at a time: how many there are, how many
    passed, and the first ``limit`` that did not pass (decoded from their slim copy, in
    replay order)."""

    def __init__(self, limit: int = SHOWN_ITEMS) -> None:
        self.limit = limit
        self.total = 0
        self.passed = 0
        self.rows: list[ItemRow] = []

    @property
    def not_passing(self) -> int:
        return self.total - self.passed

    def add(self, row: Any) -> None:
        """Fold one run item row in (a stream element function: keeps nothing itself)."""
        if not isinstance(row, dict):
            return
        self.total += 1
        if row.get("passed") is True:
            self.passed += 1
        elif len(self.rows) < self.limit:
            self.rows.append(ItemRow.decode(slim_run_item(row)))

    def add_row(self, row: ItemRow) -> None:
        """Fold one decoded row in (a run whose items came along whole)."""
        self.total += 1
        if row.passed is True:
            self.passed += 1
        elif len(self.rows) < self.limit:
            self.rows.append(row)

    def reset(self) -> None:
        self.total = self.passed = 0
        self.rows = []
