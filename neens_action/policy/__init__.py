"""Gate-as-code policy: load (JSON/YAML), validate, evaluate (docs/policy.md).

The server gate stays authoritative; a policy only ever *adds* blocking conditions on top of
it. Layout: the user's file is read and checked in the settings layer
(``settings/policy_read``, ``settings/policy_document``, ``settings/policy_file`` for
``gate``/``rules``, ``settings/policy_gates`` for the eval-gates block) into typed rules;
``model`` is :class:`GatePolicy`, ``evaluate`` turns the server's answers into a
:class:`PolicyEval` (pure).
"""

from __future__ import annotations

from neens_action.errors import PolicyError
from neens_action.policy.evaluate import PolicyEval, RuleResult, apply_policy, evaluate
from neens_action.policy.model import GatePolicy, build_policy, merge_server_gate
from neens_action.settings.policy_file import DIMENSIONS, Rule

GatePolicyError = PolicyError  # the vendor library's name for the same error

__all__ = [
    "DIMENSIONS",
    "GatePolicy",
    "GatePolicyError",
    "PolicyError",
    "PolicyEval",
    "Rule",
    "RuleResult",
    "apply_policy",
    "build_policy",
    "evaluate",
    "merge_server_gate",
]
