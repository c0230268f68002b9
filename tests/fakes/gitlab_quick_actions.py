"""Which quick actions GitLab would run from a note: its extraction rules, re-stated.

Rules (from GitLab's documentation and the shape of its extractor, restated here):
- the note is scanned once, left to right, for the first of these at each position (multi-line
  mode, ``.`` crossing newlines, every repetition lazy):
  a code block: a line opening with three backticks, up to the next line that is exactly three
  backticks; an HTML block: a line that is one tag ``<...>``, up to the next line that is one
  closing tag ``</...>``; a ``>>>`` quote up to the next line that is exactly ``>>>``;
- outside those, a line that *starts* with ``/`` and a command name (letters, digits, ``_``),
  optionally followed by one space and the arguments to the end of the line, is a quick
  action. Any command name counts here (GitLab only runs the ones it knows), so this finds
  at least everything GitLab would run.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_SCAN = re.compile(
    r"""
      (?P<code>^```.+?\n```$)
    | (?P<html>^<[^>]+?>\n.+?\n</[^>]+?>$)
    | (?P<quote>^>>>.+?\n>>>$)
    | (?P<command>^/(?P<name>\w+)(?:[ ](?P<arg>[^\n]*))?(?:\s*\n|$))
    """,
    re.M | re.S | re.X,
)


@dataclass(frozen=True)
class QuickAction:
    name: str
    arg: str


def quick_actions(note: str) -> list[QuickAction]:
    """Every quick action GitLab would extract from ``note``, in order."""
    return [QuickAction(m.group("name"), (m.group("arg") or "").strip())
            for m in _SCAN.finditer(note.replace("\r\n", "\n")) if m.group("command")]
