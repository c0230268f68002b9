"""The gate-as-code policy object: load, override, and what goes on the wire.

A :class:`GatePolicy` is immutable and fully validated. ``server_gate()`` is the ``gate``
block sent on the run create (never ``cost: null``), ``gates_block()`` the ``gates_policy`` object,
``identity()`` the ``policy`` object of the ci-result report.
"""

from __future__ import annotations

import copy
import hashlib
import os
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from neens_action.settings.policy_document import parse_document
from neens_action.settings.policy_file import (
    Checker,
    Document,
    Rule,
    describe,
    parse_scalar,
)
from neens_action.settings.policy_read import decode_policy, read_policy_bytes

# override key -> (flag, dimension); order = order the injected rules are appended
OVERRIDES: dict[str, tuple[str, str]] = {
    "max_cost_delta_pct": ("--max-cost-delta-pct", "cost"),
    "max_latency_delta_pct": ("--max-latency-delta-pct", "latency"),
    "min_avg_score": ("--min-avg-score", "min_avg_score"),
    "max_abs_failures": ("--max-abs-failures", "max_abs_failures"),
}


@dataclass(frozen=True)
class GatePolicy:
    """A validated policy. Build it with :meth:`from_file`, :meth:`from_dict` or
    :func:`build_policy`; evaluate it with :func:`neens_action.policy.evaluate`."""

    rules: tuple[Rule, ...] = ()
    on_missing_baseline: str = "warn"
    gate: dict[str, Any] | None = None
    gates: dict[str, Any] | None = None
    name: str | None = None  # file base name (None without a file)
    sha256: str | None = None  # hex SHA-256 of the file's raw bytes
    source: str = "<dict>"
    overridden: bool = False

    @classmethod
    def from_file(cls, path: str | os.PathLike[str]) -> GatePolicy:
        shown = str(path)
        raw = read_policy_bytes(shown)
        policy = cls.from_document(parse_document(decode_policy(raw, shown), Checker(shown)),
                                   source=shown)
        return replace(
            policy, name=Path(shown).name, sha256=hashlib.sha256(raw).hexdigest()
        )

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], *, source: str = "<dict>") -> GatePolicy:
        return cls.from_document(parse_document(data, Checker(source)), source=source)

    @classmethod
    def from_document(cls, doc: Document, *, source: str = "<dict>") -> GatePolicy:
        """The policy of a checked document (:mod:`neens_action.settings.policy_document`)."""
        return cls(
            rules=doc.rules,
            on_missing_baseline=doc.on_missing_baseline,
            gate=doc.gate,
            gates=doc.gates,
            source=source,
        )

    def server_gate(self) -> dict[str, Any] | None:
        """The cleaned ``gate`` block for the create, or None (``cost`` is omitted, never null)."""
        return copy.deepcopy(self.gate) if self.gate else None

    def gates_block(self) -> dict[str, Any] | None:
        """The normalised ``gates`` block (sent as ``gates_policy``), or None."""
        return copy.deepcopy(self.gates) if self.gates is not None else None

    def identity(self) -> dict[str, Any] | None:
        """``{name, sha256, overridden}`` for the ci-result; None with no file and no flag."""
        if self.name is None and not self.overridden:
            return None
        return {"name": self.name, "sha256": self.sha256, "overridden": self.overridden}

    def with_overrides(self, overrides: Mapping[str, Any]) -> GatePolicy:
        """Apply the override flags: each one replaces every rule of its dimension."""
        injected = parse_overrides(overrides)
        if not injected:
            return self
        dims = {rule.dimension for rule in injected}
        kept = tuple(rule for rule in self.rules if rule.dimension not in dims)
        return replace(self, rules=kept + tuple(injected), overridden=True)

    def to_dict(self) -> dict[str, Any]:
        """The normalised policy document (round-trips through :meth:`from_dict`)."""
        out: dict[str, Any] = {
            "rules": [rule.to_dict() for rule in self.rules],
            "on_missing_baseline": self.on_missing_baseline,
        }
        if self.gate:
            out["gate"] = copy.deepcopy(self.gate)
        if self.gates is not None:
            out["gates"] = copy.deepcopy(self.gates)
        return out


def parse_overrides(overrides: Mapping[str, Any]) -> list[Rule]:
    """Validate the override values (None / "" = unset) into block rules, in flag order."""
    unknown = [key for key in overrides if key not in OVERRIDES]
    if unknown:
        raise ValueError(f"unknown policy override {unknown[0]!r}")
    rules = []
    for key, (flag, dim) in OVERRIDES.items():
        value = overrides.get(key)
        if value is None or (isinstance(value, str) and not value.strip()):
            continue
        chk = Checker("<flags>", prefix="invalid policy override")
        value = _coerce(value, flag, chk)
        if dim in ("cost", "latency"):
            rules.append(Rule(dim, "block", {"max_delta_pct": chk.number(flag, value)}))
        else:
            rules.append(Rule(dim, "block", parse_scalar(flag, dim, value, chk)))
    return rules


def _coerce(value: Any, flag: str, chk: Checker) -> Any:
    """Flags and CI inputs may arrive as text: accept a decimal number written as a string."""
    if not isinstance(value, str):
        return value
    text = value.strip()
    try:
        number = float(text)
    except ValueError:
        chk.fail(flag, f"expected a number, got {describe(value)}")
    if number.is_integer() and text.lstrip("+-").isdigit():
        return int(number)
    return number


def build_policy(
    path: str | os.PathLike[str] | None, overrides: Mapping[str, Any] | None = None
) -> GatePolicy | None:
    """The policy in play: the file (if any) with the override flags applied.

    None when there is neither a file nor any flag (``policy=None``: server gate only).
    """
    given = {k: v for k, v in (overrides or {}).items() if v is not None and v != ""}
    base = GatePolicy.from_file(path) if path is not None and str(path).strip() else None
    if not given:
        return base
    if base is None:
        base = GatePolicy(source="<flags>")
    return base.with_overrides(given)


def merge_server_gate(
    policy: GatePolicy | None,
    max_regressions: int | None = None,
    min_pass_rate: float | None = None,
) -> dict[str, Any] | None:
    """The create ``gate`` object: the policy's block, then the CLI knobs on top; None if empty."""
    gate = (policy.server_gate() if policy is not None else None) or {}
    if max_regressions is not None:
        gate["max_regressions"] = max_regressions
    if min_pass_rate is not None:
        gate["min_pass_rate"] = min_pass_rate
    if not gate.get("cost"):
        gate.pop("cost", None)
    return gate or None
