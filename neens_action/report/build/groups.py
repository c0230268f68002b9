"""The items that did not pass, grouped by how they failed: the same state and the same judges
failing (an item without a failing judge: the same kind of error, its numbers and quoted
values left out), so thirty regressions failing one judge the same way read as one line."""

from __future__ import annotations

import re

from neens_action.report.model import FailureGroup, ItemVerdict

STATE_ORDER = {"regressed": 0, "agent_failed": 1, "new": 2, "fail": 2, "failing": 3,
               "unscored": 4}
_QUOTED = re.compile(r"'[^']*'|\"[^\"]*\"|\([^)]*\)")
_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")
WHY_CHARS = 80


def _why(item: ItemVerdict) -> str:
    """What went wrong, without its particulars: ``agent timed out (after 60s)`` ->
    ``agent timed out``."""
    first = (item.reason or item.state).split(";")[0]
    text = _NUMBER.sub("N", _QUOTED.sub("", first))
    return " ".join(text.split())[:WHY_CHARS]


def failure_groups(items: list[ItemVerdict]) -> list[FailureGroup]:
    """Groups of the items that did not pass: the worst state first, then the biggest."""
    groups: dict[tuple[str, tuple[str, ...], str], FailureGroup] = {}
    for item in items:
        if item.state == "pass":
            continue
        status = item.status or item.state
        failing = tuple(j.name for j in item.judges if j.passed is False)
        why = "" if failing else _why(item)
        key = (status, failing, why)
        group = groups.get(key)
        if group is None:
            group = groups[key] = FailureGroup(status, list(failing), why)
        group.items.append(item.item_id)
    return sorted(groups.values(),
                  key=lambda g: (STATE_ORDER.get(g.status, 4), -len(g.items)))
