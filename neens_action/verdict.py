"""Exit code and build verdict (spec 8.2) and the ci-result body (spec 4.9). Pure functions.

Order of the build verdict (first match wins): interrupted or run error => ``errored``;
exit != 0 => ``blocked``; a policy rule ended ``warn`` => ``warned``; the gate response has
truthy ``guardrailWarnings`` => ``warned``; ``--no-gate`` let a failed gate or a blocking
policy through => ``warned``; otherwise ``passed``. Measuring nothing is never a pass: an
outcome without a gate response is a run error.
"""

from __future__ import annotations

import math
from typing import Any

from neens_action import __version__
from neens_action.errors import EXIT_ERROR, EXIT_FAILED, EXIT_INTERRUPTED, EXIT_PASSED
from neens_action.outcome import Outcome

SDK = {"name": "neens-action", "version": __version__, "language": "python"}


def gate_passed(outcome: Outcome) -> bool | None:
    """The server gate's ``passed`` as read: True/False, None when absent or not a bool."""
    if not isinstance(outcome.gate, dict):
        return None
    value = outcome.gate.get("passed")
    return value if isinstance(value, bool) else None


def _policy_flags(policy_eval: Any) -> tuple[bool, bool]:
    if policy_eval is None:
        return False, False
    if isinstance(policy_eval, dict):
        return bool(policy_eval.get("blocked")), bool(policy_eval.get("warned"))
    return bool(getattr(policy_eval, "blocked", False)), bool(getattr(policy_eval, "warned", False))


def decide(outcome: Outcome) -> tuple[int, str]:
    """(exit code, build verdict) for an eval-style outcome."""
    if outcome.interrupted:
        return EXIT_INTERRUPTED, "errored"
    if outcome.error:
        return EXIT_ERROR, "errored"
    if not isinstance(outcome.gate, dict):
        return EXIT_ERROR, "errored"
    blocked, warned = _policy_flags(outcome.policy_eval)
    failed = gate_passed(outcome) is not True or blocked
    if failed and outcome.enforced:
        return EXIT_FAILED, "blocked"
    if warned or outcome.gate.get("guardrailWarnings"):
        return EXIT_PASSED, "warned"
    if failed:  # --no-gate let a breach through
        return EXIT_PASSED, "warned"
    return EXIT_PASSED, "passed"


def _finite(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_finite(v) for v in value]
    return value


def policy_results(policy_eval: Any) -> list[Any]:
    """The rule results of a PolicyEval (or of its ``to_json()`` dict); [] without one."""
    if policy_eval is None:
        return []
    if isinstance(policy_eval, dict):
        return list(policy_eval.get("results") or [])
    return list(getattr(policy_eval, "results", None) or [])


def result_field(result: Any, name: str) -> Any:
    """One field of a rule result, whether it is an object or a dict."""
    if isinstance(result, dict):
        return result.get(name)
    return getattr(result, name, None)


def rule_entries(policy_eval: Any) -> list[dict[str, Any]]:
    """Policy results as ci-result ``rules[]`` entries."""
    rules = []
    for r in policy_results(policy_eval):
        rules.append({
            "rule": result_field(r, "dimension"),
            "observed": _finite(result_field(r, "observed")),
            "threshold": _finite(result_field(r, "threshold")),
            "severity": result_field(r, "severity"),
            "outcome": result_field(r, "status"),
            "message": result_field(r, "reason") or "",
        })
    return rules


def ci_result_payload(outcome: Outcome) -> dict[str, Any]:
    """The E10 body for an outcome whose verdict has been decided."""
    if outcome.build_verdict is None:
        code, verdict = decide(outcome)
    else:
        code, verdict = outcome.exit_code, outcome.build_verdict
    return {
        "verdict": verdict,
        "exit_code": code,
        "enforced": bool(outcome.enforced),
        "gate_passed": gate_passed(outcome),
        "rules": rule_entries(outcome.policy_eval),
        "policy": outcome.policy_identity,
        "sdk": dict(SDK),
    }
