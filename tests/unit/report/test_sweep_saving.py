"""The saving stated for a sweep's winner, against the baseline arm; unpriced arms never
claimed cheaper."""

from __future__ import annotations

import pytest

from neens_action.api.sweep_comparison import SweepComparison
from neens_action.report.build.sweep_saving import saving
from tests.unit.report.cases import CASES


def _cmp(win: float | None, base: float | None, *, priced: bool = True) -> SweepComparison:
    def arm(label: str, usd: float | None, ok: bool = True) -> dict:
        return {"armId": f"a_{label}", "label": label,
                "cost": {"costPerCaseUsd": usd, "priced": ok and usd is not None}}
    return SweepComparison.decode({"baseline": {"armId": "a_big", "label": "big"},
                                   "arms": [arm("small", win, priced), arm("big", base)]})


@pytest.mark.parametrize(("win", "base", "priced", "said"), [
    (0.0000021, 0.0000336, True, "16x cheaper than big ($0.0000021 vs $0.0000336 per case)"),
    (0.6, 1.0, True, "40 % cheaper than big ($0.60 vs $1.00 per case)"),
    (0.4, 1.0, True, "2.5x cheaper than big ($0.40 vs $1.00 per case)"),
    (0.0, 1.0, True, "free where big costs $1.00 per case"),
    (1.0, 1.0, True, ""),  # as dear: nothing saved
    (2.0, 1.0, True, ""),  # dearer
    (0.1, 1.0, False, ""),  # the winner has no rate: never claimed cheaper
    (None, 1.0, True, ""),
    (0.1, None, True, ""),  # the baseline has no rate: nothing to compare with
])
def test_saving_against_the_baseline_arm(win, base, priced, said) -> None:
    assert saving(_cmp(win, base, priced=priced), "small") == said


def test_no_saving_for_the_baseline_itself_or_an_unknown_winner() -> None:
    assert saving(_cmp(0.1, 1.0), "big") == ""
    assert saving(_cmp(0.1, 1.0), "nope") == ""


def test_the_sweep_headline_and_facts_state_the_saving() -> None:
    report = CASES["sweep"]()
    assert report.headline == "cheapest arm above the bar — small is 16x cheaper than big"
    assert ("saving", "16x cheaper than big ($0.0000021 vs $0.0000336 per case)") in report.facts
    assert not any(label == "saving" for label, _ in CASES["sweep_no_winner"]().facts)
