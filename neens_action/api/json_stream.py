"""Decode a JSON object from a stream of byte chunks, one element of its big list at a time.

Run objects (create, get, start, trigger) and item lists hold one row per golden item: 10,000 items
are about 3 MB of JSON. Reading the whole body and then decoding it holds the bytes, the text
and every decoded row at once. :func:`decode_chunks` reads the body as it arrives and hands
each element of one top-level list (``"items"``) to a function as soon as it is complete, so
only what that function keeps stays in memory.

Only the framing of the top-level object and of that one list is done here; every value is
decoded by the standard library (:meth:`json.JSONDecoder.raw_decode`). A body that is not a
JSON object is decoded whole, as :func:`json.loads` would. Malformed JSON raises ValueError.

Decoding stays linear: a value cut by the end of the text read so far is tried again only
once the unread text has doubled, so a 4 MiB value costs about two decodes, not 64.
Limits: at most :data:`MAX_ITEMS` rows (a :class:`TooLarge` beyond, per call through
:data:`max_items`); JSON nested deeper than the decoder can follow is a ValueError too.
"""

from __future__ import annotations

import codecs
import json
import re
from collections.abc import Callable, Iterable, Iterator
from contextvars import ContextVar
from typing import Any

_DECODER = json.JSONDecoder()
_SPACE = " \t\n\r"
_NUMBER_TAIL = ".eE+-"  # a number followed by one of these was cut before its fraction/exponent
MAX_ITEMS = 1_000_000  # rows of the ``items`` list, by default
max_items: ContextVar[int] = ContextVar("max_items", default=MAX_ITEMS)


class TooLarge(Exception):
    """An answer past a cap (rows, bytes): the message names the cap."""


_SURROGATE = re.compile("[\ud800-\udfff]")
_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")  # a JSON escape of a (maybe lone) surrogate


def scrub(value: Any) -> Any:
    """``value`` with every lone surrogate in its strings (keys too) replaced by U+FFFD: a
    ``"\\ud800"`` from a server must not crash an encoder later (an agent's environment, a
    file, the log)."""
    if isinstance(value, str):
        return _SURROGATE.sub("\ufffd", value)
    if isinstance(value, list):
        return [scrub(v) for v in value]
    if isinstance(value, dict):
        return {scrub(k): scrub(v) for k, v in value.items()}
    return value


def loads(data: bytes | str) -> Any:
    """``json.loads`` of strict UTF-8 with lone surrogates replaced (see :func:`scrub`)."""
    text = data.decode("utf-8") if isinstance(data, bytes) else data
    try:
        value = json.loads(text)
    except RecursionError:
        raise ValueError("JSON nested too deeply") from None
    return scrub(value) if _ESCAPE.search(text) else value


def keep(value: Any) -> Any:
    """The element function that keeps every element as decoded."""
    return value


class _Text:
    """The body as text, read on demand; ``buf[pos:]`` is what is not consumed yet."""

    def __init__(self, chunks: Iterable[bytes]) -> None:
        self._chunks: Iterator[bytes] = iter(chunks)
        self._utf8 = codecs.getincrementaldecoder("utf-8")("strict")
        self.buf = ""
        self.pos = 0
        self.done = False
        self.surrogates = False  # a surrogate escape was seen: decoded values are scrubbed

    def more(self) -> bool:
        """Append the next chunk (dropping what was consumed); False at the end."""
        while not self.done:
            chunk = next(self._chunks, None)
            if chunk is None:
                self.done = True
                text = self._utf8.decode(b"", final=True)
            else:
                text = self._utf8.decode(chunk)
            if text:
                if not self.surrogates:
                    self.surrogates = _ESCAPE.search(self.buf[-5:] + text) is not None
                self.buf = self.buf[self.pos:] + text
                self.pos = 0
                return True
        return False

    def skip_space(self) -> str:
        """The next non-space character (consumed: no), or "" at the end of the body."""
        while True:
            while self.pos < len(self.buf) and self.buf[self.pos] in _SPACE:
                self.pos += 1
            if self.pos < len(self.buf):
                return self.buf[self.pos]
            if not self.more():
                return ""

    def expect(self, allowed: str) -> str:
        char = self.skip_space()
        if not char or char not in allowed:
            raise ValueError(f"expected one of {allowed!r} at offset {self.pos}")
        self.pos += 1
        return char

    def grow(self) -> bool:
        """Read until the unread text is twice as long (or the body ends); False when
        nothing more came. Doubling keeps the retries of a long value linear."""
        want = 2 * max(len(self.buf) - self.pos, 1)
        grew = False
        while len(self.buf) - self.pos < want and self.more():
            grew = True
        return grew

    def value(self) -> Any:
        """Decode the next JSON value. A value that may have been cut short by the end of
        the text read so far (``12`` of ``123``, ``1`` of ``1e5``) is decoded again with
        (twice as much) more text."""
        self.skip_space()
        while True:
            try:
                value, end = _DECODER.raw_decode(self.buf, self.pos)
            except json.JSONDecodeError:
                if self.grow():
                    continue
                raise
            except RecursionError:
                raise ValueError("JSON nested too deeply") from None
            if self._maybe_cut(value, end) and self.grow():
                continue
            self.pos = end
            return scrub(value) if self.surrogates else value

    def _maybe_cut(self, value: Any, end: int) -> bool:
        if self.done:
            return False
        if end == len(self.buf):
            return True
        number = isinstance(value, int | float) and not isinstance(value, bool)
        return number and self.buf[end] in _NUMBER_TAIL

    def rest(self) -> str:
        while self.more():
            pass
        return self.buf[self.pos:]


def decode_chunks(chunks: Iterable[bytes], *, key: str = "items",
                  element: Callable[[Any], Any] | None = keep) -> Any:
    """The JSON document in ``chunks``. When it is an object whose ``key`` is a list, each
    element of that list is passed to ``element`` as soon as it is decoded and the list
    holds what ``element`` returned (None results are left out); ``element=None`` drops the
    key altogether (the default, :func:`keep`, keeps every element, nulls too). Raises
    ValueError (JSONDecodeError, UnicodeDecodeError) on malformed input; an empty body is
    None."""
    text = _Text(chunks)
    first = text.skip_space()
    if not first:
        return None
    if first != "{":
        return loads(text.rest())
    text.pos += 1
    out: dict[str, Any] = {}
    if text.skip_space() == "}":
        text.pos += 1
    else:
        while True:
            name = text.value()
            if not isinstance(name, str):
                raise ValueError(f"an object key must be a string (offset {text.pos})")
            text.expect(":")
            if name == key and text.skip_space() == "[":
                text.pos += 1
                rows = _elements(text, element)
                if element is None:
                    out.pop(name, None)
                else:
                    out[name] = rows
            else:
                out[name] = text.value()
            if text.expect(",}") == "}":
                break
    if text.skip_space():
        raise ValueError(f"extra data after the JSON object (offset {text.pos})")
    return out


def _elements(text: _Text, element: Callable[[Any], Any] | None) -> list[Any]:
    rows: list[Any] = []
    if text.skip_space() == "]":
        text.pos += 1
        return rows
    cap = max_items.get()
    count = 0
    while True:
        count += 1
        if count > cap:
            raise TooLarge(f"more than {cap} items (the cap, NEENS_MAX_ITEMS)")
        value = text.value()
        if element is keep:
            rows.append(value)
        elif element is not None:
            kept = element(value)
            if kept is not None:
                rows.append(kept)
        del value
        if text.expect(",]") == "]":
            return rows
