"""Per-item records of a run kept on disk, not in memory: what ``--json``, ``--junit`` and the
CI result file list item by item.

- :class:`Spill`: a read-only sequence whose records live in an unlinked temporary file
  (mode 0600, gone when the process ends); memory holds 12 bytes per record. Records are
  written once (``put(index, value)`` in any order, or ``append``) and read back one at a
  time, in order through a read-ahead window. Where no temporary file can be made, the
  records are kept in a list instead.
- :class:`Records`: a spill of dataclass records (invocations, item verdicts, agent
  failures).
- :class:`RunRows`: the terminal run's item rows as the server sent them, spilled as they
  stream in (the ``--json`` document passes them through unchanged), read back as
  :class:`~neens_action.api.answers.ItemRow`.
- :class:`Filtered`: the records of a spill that pass a test, as a lazy sequence.
- :class:`Cursor`: item id -> record of a spill, for a reader that walks a second list in
  (nearly) the same order: no index of every id unless the orders differ.

The files are private to this process (an unlinked file of our own). :class:`Records` keeps
a dataclass as the marshalled tuple of its fields (pickled when marshal cannot carry a
value); every field comes back exactly as it was written.
"""

from __future__ import annotations

import json
import marshal
import operator
import os
import pickle
import tempfile
import threading
from array import array
from collections.abc import Callable, Iterator, Sequence
from dataclasses import fields
from typing import Any, Generic, TypeVar

from neens_action.api.answers import ItemRow, Judge
from neens_action.items import LazySequence

T = TypeVar("T")
WINDOW = 256 * 1024  # bytes read ahead per system call while reading in order
_NOWHERE = 2**64 - 1  # an index not written (yet)


class Spill(LazySequence[T]):
    """Records in an unlinked temporary file (see the module docstring). ``size``: the
    number of records when known up front (``put`` fills them in any order); else records
    are appended. ``view`` (optional) is applied to each record as it is read back."""

    def __init__(self, size: int = 0, *, prefix: str = "neens-spill-") -> None:
        self._starts = array("Q", [_NOWHERE]) * size
        self._sizes = array("I", [0]) * size
        self._end = 0  # where the next record goes (the file, then the buffer)
        self._buffer = bytearray()  # records not written yet, from _end - len(_buffer)
        self._lock = threading.Lock()
        self._window: tuple[int, bytes] = (0, b"")
        self._memory: list[Any] | None = None
        self.view: Callable[[T], T] | None = None
        try:
            # lives as long as the spill: closed by close() / the with block
            self._file: Any = tempfile.TemporaryFile(  # noqa: SIM115
                prefix=prefix, buffering=0)
        except OSError:
            self._file, self._memory = None, [None] * size

    # -- writing -----------------------------------------------------------------------------

    def put(self, index: int, value: T) -> None:
        """Record ``index`` (thread-safe; an index past the end extends the spill)."""
        if self._memory is not None:
            with self._lock:
                self._memory.extend([None] * (index + 1 - len(self._memory)))
                self._memory[index] = value
            return
        data = self.encode(value)
        with self._lock:
            missing = index + 1 - len(self._starts)
            if missing > 0:
                self._starts.extend(array("Q", [_NOWHERE]) * missing)
                self._sizes.extend(array("I", [0]) * missing)
            self._starts[index], self._sizes[index] = self._end, len(data)
            self._end += len(data)
            self._buffer += data
            if len(self._buffer) >= WINDOW:
                self._flush()

    def _flush(self) -> None:
        """Write the buffered records (under the lock)."""
        if self._buffer:
            os.pwrite(self._file.fileno(), self._buffer, self._end - len(self._buffer))
            self._buffer = bytearray()

    def append(self, value: T) -> None:
        self.put(len(self), value)

    def extend(self, values: Any) -> None:
        for value in values:
            self.append(value)

    def encode(self, value: T) -> bytes:
        return pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)

    def decode(self, data: bytes) -> T:
        value: T = pickle.loads(data)
        return value

    # -- reading -----------------------------------------------------------------------------

    def __len__(self) -> int:
        return len(self._memory) if self._memory is not None else len(self._starts)

    def _get(self, index: int) -> T:
        value = self._memory[index] if self._memory is not None else self.decode(self._read(index))
        return self.view(value) if self.view is not None else value

    def _read(self, index: int) -> bytes:
        start, size = self._starts[index], self._sizes[index]
        if start == _NOWHERE:
            raise IndexError(f"spill record {index} was never written")
        if self._buffer:
            with self._lock:
                self._flush()
        first, data = self._window
        if not first <= start or start + size > first + len(data):
            first = start
            data = os.pread(self._file.fileno(), max(size, WINDOW), start)
            self._window = (first, data)  # one tuple: readers in other threads see either
        return data[start - first:start - first + size]

    def __iter__(self) -> Iterator[T]:
        """Every record in order (the hot path: one ``pread`` per window, no calls per
        record but its decoding)."""
        if self._memory is not None:
            for value in list(self._memory):
                yield self.view(value) if self.view is not None else value
            return
        if self._buffer:
            with self._lock:
                self._flush()
        decode, view, fd = self.decode, self.view, self._file.fileno()
        starts, sizes = self._starts, self._sizes
        first, data = 0, b""
        for i in range(len(starts)):
            start, size = starts[i], sizes[i]
            if start == _NOWHERE:
                raise IndexError(f"spill record {i} was never written")
            if start < first or start + size > first + len(data):
                first, data = start, os.pread(fd, max(size, WINDOW), start)
            value = decode(data[start - first:start - first + size])
            yield view(value) if view is not None else value

    def close(self) -> None:
        if self._file is not None:
            self._file.close()

    def __enter__(self) -> Spill[T]:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class Records(Spill[T]):
    """Dataclass records (``cls``), each kept as the tuple of its fields, marshalled (a fast
    C codec for str, numbers, None and tuples); ``nested`` names fields holding a sequence of
    dataclasses: field name -> (their class, the container type the field holds)."""

    def __init__(self, cls: type[T], size: int = 0, *,
                 nested: dict[str, tuple[type, type]] | None = None,
                 prefix: str = "neens-spill-") -> None:
        super().__init__(size, prefix=prefix)
        self.cls = cls
        self.names = tuple(f.name for f in fields(cls))  # type: ignore[arg-type]
        self._fields = operator.attrgetter(*self.names)
        nested = nested or {}
        self.nested = tuple((self.names.index(name), sub, container, operator.attrgetter(
            *(f.name for f in fields(sub)))) for name, (sub, container) in nested.items())

    def encode(self, value: T) -> bytes:
        values = self._fields(value)
        if self.nested:
            values = list(values)
            for at, _sub, _container, get in self.nested:
                values[at] = tuple(map(get, values[at]))
            values = tuple(values)
        try:
            return b"m" + marshal.dumps(values)
        except ValueError:  # a value marshal cannot carry (a subclass of str...): pickled
            return b"p" + pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)

    def decode(self, data: bytes) -> T:
        if data[0] != 109:  # b"p"
            return super().decode(data[1:])
        values = marshal.loads(memoryview(data)[1:])
        if not self.nested:
            return self.cls(*values)
        values = list(values)
        for at, sub, container, _names in self.nested:
            values[at] = container(sub(*v) for v in values[at])
        return self.cls(*values)


class _JsonSpill(Spill[Any]):
    """JSON values as compact UTF-8 text (lone surrogates kept as they are)."""

    def encode(self, value: Any) -> bytes:
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"),
                          allow_nan=True).encode("utf-8", "surrogatepass")

    def decode(self, data: bytes) -> Any:
        return json.loads(data.decode("utf-8", "surrogatepass"))


class RunRows(LazySequence[ItemRow]):
    """The terminal run's item rows as the server sent them, spilled as they stream in
    (:meth:`add` is a stream element function, :meth:`reset` restarts a retried read); read
    back as ItemRow (the rows that are objects, as :func:`~neens_action.api.answers.item_rows`
    decodes them), or as the rows themselves with :meth:`raw_rows`."""

    def __init__(self) -> None:
        self._rows = _JsonSpill(prefix="neens-rows-")
        self._decoded = _item_rows()  # the object rows, decoded once

    def add(self, row: Any) -> None:
        """Spill one row (keeps nothing; returns None, so the streamed list stays empty)."""
        self._rows.append(row)
        if isinstance(row, dict):
            self._decoded.append(ItemRow.decode(row))

    def reset(self) -> None:
        """Forget every row (a retried read starts again from the first row)."""
        self.close()
        self._rows, self._decoded = _JsonSpill(prefix="neens-rows-"), _item_rows()

    def __len__(self) -> int:
        return len(self._decoded)

    def _get(self, index: int) -> ItemRow:
        return self._decoded[index]

    def __iter__(self) -> Iterator[ItemRow]:
        return iter(self._decoded)

    def raw_rows(self) -> Iterator[Any]:
        """Every row as the server sent it (decoded JSON), in order."""
        return iter(self._rows)

    def close(self) -> None:
        self._rows.close()
        self._decoded.close()


def _item_rows() -> Records[ItemRow]:
    return Records(ItemRow, nested={"judges": (Judge, tuple)}, prefix="neens-rows-")


class Filtered(LazySequence[T]):
    """The records of ``records`` for which ``keep`` is true, read from ``records`` when asked
    for (4 bytes of memory per one kept)."""

    def __init__(self, records: Sequence[T], keep: Callable[[T], bool]) -> None:
        self.records = records
        self.at = array("I", (n for n, record in enumerate(records) if keep(record)))

    def __len__(self) -> int:
        return len(self.at)

    def _get(self, index: int) -> T:
        return self.records[self.at[index]]

    def __iter__(self) -> Iterator[T]:
        return (self.records[i] for i in self.at)


class Cursor(Generic[T]):
    """``cursor.get(key)``: the record of ``records`` whose ``key_of`` is ``key`` (None when
    none), for keys asked in about the records' own order: the next record is tried first,
    and an index of every key (item id -> position) is built only once the orders differ."""

    def __init__(self, records: Sequence[T], key_of: Callable[[T], str]) -> None:
        self.records = records
        self.key_of = key_of
        self._next = 0
        self._index: dict[str, int] | None = None

    def get(self, key: str) -> T | None:
        records = self.records
        if self._next < len(records):
            record = records[self._next]
            if self.key_of(record) == key:
                self._next += 1
                return record
        if self._index is None:
            self._index = {}
            for i, record in enumerate(records):
                self._index[self.key_of(record)] = i  # the last wins, as in a dict
        at = self._index.get(key)
        if at is None:
            return None
        self._next = at + 1
        return records[at]
