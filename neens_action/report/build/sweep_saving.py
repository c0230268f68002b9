"""The saving a sweep's winner brings: "16x cheaper than big", from the comparison's per-arm
cost per case against the baseline arm.

Only priced arms are compared: an arm without a rate (``priced: false`` or no cost) is never
claimed cheaper, and neither is a winner that costs as much as the baseline or more.
"""

from __future__ import annotations

from neens_action.api.sweep_comparison import ComparedArm, SweepComparison
from neens_action.report.fmt import finite, number, usd


def arm_cost(arm: ComparedArm) -> float | None:
    """The arm's cost per case in USD, or None when it is unpriced."""
    value = finite(arm.cost.per_case_usd)
    if arm.cost.priced is False or value is None or value < 0:
        return None
    return value


def _find(arms: tuple[ComparedArm, ...], label: str,
          arm_id: str | None = None) -> ComparedArm | None:
    for arm in arms:
        if (arm_id is not None and arm.ref.arm_id == arm_id) or (label and arm.name == label):
            return arm
    return None


def saving(comparison: SweepComparison, winner: str) -> str:
    """``16x cheaper than big ($0.0000021 vs $0.0000336 per case)``, ``40 % cheaper than
    big (...)``, or "" when no saving can be claimed."""
    arms, base_ref = comparison.arms, comparison.baseline
    base = _find(arms, base_ref.label or "", base_ref.arm_id)
    win = _find(arms, winner)
    if win is None or base is None or win is base or win.name == base.name:
        return ""
    after, before = arm_cost(win), arm_cost(base)
    if after is None or before is None or before <= 0 or after >= before:
        return ""
    per_case = f"({usd(after)} vs {usd(before)} per case)"
    if after == 0:
        return f"free where {base.name} costs {usd(before)} per case"
    ratio = before / after
    if ratio >= 2:
        times = number(ratio, 0 if ratio >= 10 else 1)
        return f"{times}x cheaper than {base.name} {per_case}"
    return f"{number((1 - after / before) * 100, 0)} % cheaper than {base.name} {per_case}"
