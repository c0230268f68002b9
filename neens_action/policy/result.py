"""What evaluating a policy produced: one :class:`RuleResult` per check and the
:class:`PolicyEval` over them. Plain data below the outcome (the outcome carries one), read
by the verdict (blocked / warned), the ci-result body and the reports."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from neens_action.api.values import json_safe


@dataclass(frozen=True)
class RuleResult:
    """One evaluated check. ``dimension`` holds the result label (``cost``,
    ``regressions``, ``metric[faithfulness]``, ``gate_drift:<id>`` ...)."""

    dimension: str
    severity: str  # block | warn
    status: str  # pass | fail | warn | skipped
    observed: Any
    threshold: Any
    reason: str

    def to_json(self) -> dict[str, Any]:
        return {
            "dimension": self.dimension,
            "severity": self.severity,
            "status": self.status,
            "observed": json_safe(self.observed),
            "threshold": json_safe(self.threshold),
            "reason": self.reason,
        }

    def to_ci_rule(self) -> dict[str, Any]:
        """The ``rules[]`` entry of the ci-result report."""
        return {
            "rule": self.dimension,
            "observed": json_safe(self.observed),
            "threshold": json_safe(self.threshold),
            "severity": self.severity,
            "outcome": self.status,
            "message": self.reason,
        }


@dataclass(frozen=True)
class PolicyEval:
    blocked: bool
    warned: bool
    results: list[RuleResult] = field(default_factory=list)

    @property
    def failures(self) -> list[RuleResult]:
        return [r for r in self.results if r.status == "fail"]

    @property
    def warnings(self) -> list[RuleResult]:
        return [r for r in self.results if r.status == "warn"]

    def reasons(self) -> list[str]:
        """Why the policy blocks (each failing rule), then what it warns about."""
        return [r.reason for r in self.failures] + [f"warning: {r.reason}" for r in self.warnings]

    def to_json(self) -> dict[str, Any]:
        return {
            "blocked": self.blocked,
            "warned": self.warned,
            "results": [r.to_json() for r in self.results],
        }
