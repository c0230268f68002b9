"""Long untrusted text cut to fit a table cell, keeping the part that matters: around what the
judge looked at (a value its reason quotes, or the expected answer, found in the text), else at
the end of a sentence, else at a word; an ellipsis marks every cut."""

from __future__ import annotations

import re

from neens_action.text import ELLIPSIS, one_line

_QUOTED = re.compile(r"'([^']{2,80})'|\"([^\"]{2,80})\"")
_SENTENCE_END = re.compile(r"[.!?。](?=\s)")


def focus_of(reason: str, expected: str, answer: str) -> list[str]:
    """What the judge looked at, as far as the item tells: the values its reason quotes, then
    the expected answer; only those found in ``answer``."""
    quoted = [a or b for a, b in _QUOTED.findall(reason or "")]
    low = answer.lower()
    return [n for n in (*quoted, one_line(expected)) if n and n.lower() in low]


def _word_start(text: str, i: int) -> int:
    """``i`` moved forward to the start of a word (unless that is too far)."""
    if i <= 0:
        return 0
    space = text.find(" ", i, i + 20)
    return space + 1 if space >= 0 else i


def _word_end(text: str, i: int) -> int:
    if i >= len(text):
        return len(text)
    space = text.rfind(" ", i - 20, i)
    return space if space > 0 else i


def around(text: object, limit: int, focus: list[str] | None = None) -> str:
    """``text`` on one line, at most about ``limit`` characters (ellipses added)."""
    flat = one_line(text)
    if len(flat) <= limit:
        return flat
    low = flat.lower()
    for needle in focus or ():
        at = low.find(needle.lower())
        if at < 0 or at + len(needle) <= limit - 1:
            continue  # not there, or already inside the head
        start = max(0, min(at - limit // 3, len(flat) - limit))
        start = _word_start(flat, start)
        end = _word_end(flat, min(len(flat), start + limit - 2))
        if end <= at:
            end = min(len(flat), at + len(needle))
        return (ELLIPSIS + flat[start:end].strip() + (ELLIPSIS if end < len(flat) else ""))
    head = flat[:limit - 1]
    ends = [m.end() for m in _SENTENCE_END.finditer(head + " ")]
    if ends and ends[-1] >= limit * 0.4:
        return head[:ends[-1]] + " " + ELLIPSIS
    cut = head.rfind(" ")
    if cut >= limit * 0.6:
        head = head[:cut]
    return head.rstrip() + ELLIPSIS
