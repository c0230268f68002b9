"""The saving a sweep's winner brings: "16x cheaper than big", from the comparison's per-arm
cost per case against the baseline arm.

Only priced arms are compared: an arm without a rate (``priced: false`` or no cost) is never
claimed cheaper, and neither is a winner that costs as much as the baseline or more.
"""

from __future__ import annotations

from typing import Any

from neens_action.report.fmt import finite, number, usd


def _label(arm: dict[str, Any]) -> str:
    return str(arm.get("label") or arm.get("armId") or "")


def arm_cost(arm: dict[str, Any]) -> float | None:
    """The arm's cost per case in USD, or None when it is unpriced."""
    cost = arm.get("cost") if isinstance(arm.get("cost"), dict) else {}
    value = finite(cost.get("costPerCaseUsd"))
    if cost.get("priced") is False or value is None or value < 0:
        return None
    return value


def _find(arms: list[dict[str, Any]], label: str, arm_id: object = None) -> dict[str, Any]:
    for arm in arms:
        if (arm_id is not None and arm.get("armId") == arm_id) or (label and _label(arm) == label):
            return arm
    return {}


def saving(comparison: dict[str, Any], winner: str) -> str:
    """``16x cheaper than big ($0.0000021 vs $0.0000336 per case)``, ``40 % cheaper than
    big (...)``, or "" when no saving can be claimed."""
    arms = [a for a in comparison.get("arms") or [] if isinstance(a, dict)]
    base_ref = comparison.get("baseline") if isinstance(comparison.get("baseline"), dict) else {}
    base = _find(arms, str(base_ref.get("label") or ""), base_ref.get("armId"))
    win = _find(arms, winner)
    if not win or not base or win is base or _label(win) == _label(base):
        return ""
    after, before = arm_cost(win), arm_cost(base)
    if after is None or before is None or before <= 0 or after >= before:
        return ""
    per_case = f"({usd(after)} vs {usd(before)} per case)"
    if after == 0:
        return f"free where {_label(base)} costs {usd(before)} per case"
    ratio = before / after
    if ratio >= 2:
        times = number(ratio, 0 if ratio >= 10 else 1)
        return f"{times}x cheaper than {_label(base)} {per_case}"
    return f"{number((1 - after / before) * 100, 0)} % cheaper than {_label(base)} {per_case}"
