"""The gate's noise-aware rules, judged on a :class:`RunVerdict`: ``max-regressions`` counts
the items the method holds regressed, ``min-pass-rate`` is judged on the interval of the
repetitions' mean, and ``on-inconclusive`` says whether an inconclusive verdict warns or
blocks (it never reads as a plain pass). Pure functions, no I/O."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from neens_action.noise.verdict import RunOutcome, RunVerdict

__all__ = ["GateDecision", "NoiseRules", "RuleResult", "inconclusive_outcome", "judge"]

RuleOutcome = Literal["pass", "fail", "inconclusive"]
GateOutcome = Literal["pass", "warn", "block"]


@dataclass(frozen=True)
class NoiseRules:
    max_regressions: int | None = None
    min_pass_rate: float | None = None
    on_inconclusive: Literal["warn", "block"] = "warn"


@dataclass(frozen=True)
class RuleResult:
    """One rule, as the build verdict reports it: observed value, threshold, outcome."""

    rule: str
    observed: str
    threshold: str
    outcome: RuleOutcome


@dataclass(frozen=True)
class GateDecision:
    outcome: GateOutcome
    rules: tuple[RuleResult, ...]


def inconclusive_outcome(on_inconclusive: str) -> GateOutcome:
    """``warn`` (the default) or ``block``; anything else is bad input."""
    if on_inconclusive not in ("warn", "block"):
        raise ValueError(f"on-inconclusive must be warn or block, not {on_inconclusive!r}")
    return "block" if on_inconclusive == "block" else "warn"


def judge(verdict: RunVerdict, rules: NoiseRules) -> GateDecision:
    """Every configured rule, then the verdict itself: a failed rule blocks; an inconclusive
    rule or verdict warns or blocks per ``on_inconclusive``; else the gate passes."""
    on_inc = inconclusive_outcome(rules.on_inconclusive)
    results: list[RuleResult] = []
    if rules.max_regressions is not None:
        held = len(verdict.regressed)
        results.append(RuleResult("max-regressions", str(held), str(rules.max_regressions),
                                  "fail" if held > rules.max_regressions else "pass"))
    if rules.min_pass_rate is not None:
        rate, floor = verdict.pass_rate, rules.min_pass_rate
        outcome: RuleOutcome = ("pass" if rate.low >= floor else
                                "fail" if rate.high < floor else "inconclusive")
        observed = f"{rate.now:.4f} [{rate.low:.4f}, {rate.high:.4f}]"
        results.append(RuleResult("min-pass-rate", observed, f"{floor:g}", outcome))
    results.append(RuleResult("noise verdict", verdict.outcome.value, "no regression",
                              "inconclusive" if verdict.outcome is RunOutcome.INCONCLUSIVE
                              else "pass"))
    if any(r.outcome == "fail" for r in results):
        return GateDecision("block", tuple(results))
    if any(r.outcome == "inconclusive" for r in results):
        return GateDecision(on_inc, tuple(results))
    return GateDecision("pass", tuple(results))
