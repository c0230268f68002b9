"""Validation of a gate-as-code policy document (docs/policy.md).

Everything a policy can get wrong is caught here, at parse time, with one precise line:
``gate policy <source>: <key path>: <what was expected>``. Thresholds are type-checked (the
reference crashes on a non-numeric threshold at evaluation time; we refuse it up front).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, NoReturn

from neens_action.errors import PolicyError

SEVERITIES = ("block", "warn")
MISSING_BASELINE_MODES = ("block", "warn", "pass")
TOP_KEYS = ("gate", "gates", "rules", "on_missing_baseline")
GATE_KEYS = ("max_regressions", "min_pass_rate", "cost")
COST_KEYS = ("max_avg_usd", "max_delta", "max_delta_pct")

# nested dimension -> sub-keys in evaluation order: average, absolute delta, percentage delta
NESTED: dict[str, tuple[str, str, str]] = {
    "cost": COST_KEYS,
    "latency": ("max_avg_ms", "max_delta_ms", "max_delta_pct"),
    "steps": ("max_avg", "max_delta", "max_delta_pct"),
}
SCALARS = ("max_abs_failures", "max_regressions", "min_pass_rate", "min_avg_score")
DIMENSIONS = (*NESTED, *SCALARS, "metric")
METRIC_BOUNDS = ("min_avg", "max_avg")

# dimension -> result label
LABELS = {
    "cost": "cost",
    "latency": "latency",
    "steps": "steps",
    "max_abs_failures": "abs_failures",
    "max_regressions": "regressions",
    "min_pass_rate": "pass_rate",
    "min_avg_score": "avg_score",
}


@dataclass(frozen=True)
class Rule:
    """One validated rule.

    ``threshold`` is a number for scalar dimensions, a dict of the sub-keys present (in
    evaluation order) for nested ones, and ``{"metric", "min_avg"?, "max_avg"?}`` for metric.
    """

    dimension: str
    severity: str
    threshold: Any

    @property
    def label(self) -> str:
        if self.dimension == "metric":
            return f"metric[{self.threshold['metric']}]"
        return LABELS[self.dimension]

    def to_dict(self) -> dict[str, Any]:
        """The rule as it would be written in a policy file."""
        if self.dimension == "metric":
            return {**self.threshold, "severity": self.severity}
        value = dict(self.threshold) if isinstance(self.threshold, dict) else self.threshold
        return {self.dimension: value, "severity": self.severity}


@dataclass(frozen=True)
class Document:
    """The validated parts of a policy document."""

    gate: dict[str, Any] | None
    gates: dict[str, Any] | None
    rules: tuple[Rule, ...]
    on_missing_baseline: str


class Checker:
    """Raises :class:`PolicyError` naming the source and the key path."""

    def __init__(self, source: str, *, prefix: str | None = None) -> None:
        self.source = source
        self.prefix = prefix or f"gate policy {source}"

    def fail(self, path: str, message: str) -> NoReturn:
        where = f"{path}: " if path else ""
        raise PolicyError(f"{self.prefix}: {where}{message}")

    def number(
        self,
        path: str,
        value: Any,
        *,
        lo: float | None = None,
        hi: float | None = None,
        integer: bool = False,
        what: str = "a number",
    ) -> int | float:
        """A finite int/float (never a boolean), optionally in [lo, hi] / whole."""
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            self.fail(path, f"expected {what}, got {describe(value)}")
        if not math.isfinite(value):
            self.fail(path, f"expected {what}, got a non-finite number ({value})")
        if integer:
            if isinstance(value, float) and not value.is_integer():
                self.fail(path, f"expected {what}, got {describe(value)}")
            value = int(value)
        if lo is not None and value < lo:
            self.fail(path, f"expected {what}, got {describe(value)} (below {fmt(lo)})")
        if hi is not None and value > hi:
            self.fail(path, f"expected {what}, got {describe(value)} (above {fmt(hi)})")
        return value

    def obj(self, path: str, value: Any, expected: str) -> dict[str, Any]:
        if not isinstance(value, dict):
            self.fail(path, f"expected {expected}, got {describe(value)}")
        for key in value:
            if not isinstance(key, str):
                self.fail(path, f"keys must be strings, got {describe(key)}")
        return value

    def known_keys(self, path: str, value: dict[str, Any], allowed: tuple[str, ...]) -> None:
        for key in value:
            if key not in allowed:
                self.fail(join(path, key), f"unknown key (expected {one_of(allowed)})")

    def choice(self, path: str, value: Any, allowed: tuple[str, ...]) -> str:
        if not isinstance(value, str) or value not in allowed:
            self.fail(path, f"expected {one_of(allowed)}, got {describe(value)}")
        return value


def fmt(value: float) -> str:
    """A number as a short human string (whole floats without the ``.0``)."""
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e15:
        return str(int(value))
    if isinstance(value, float):
        text = f"{value:.6g}"
        if "e" in text:  # never e-notation: 0.000001, not 1e-06
            text = f"{value:.12f}".rstrip("0").rstrip(".") if abs(value) < 1 else f"{value:.0f}"
        return text
    return str(value)


def describe(value: Any) -> str:
    """A short, one-line description of an unexpected value."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return f"a boolean ({'true' if value else 'false'})"
    if isinstance(value, (int, float)):
        return f"the number {fmt(value)}" if math.isfinite(value) else f"the number {value}"
    if isinstance(value, str):
        text = value if len(value) <= 40 else value[:39] + "…"
        return f"the string {text!r}" if value else "an empty string"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "an object"
    return f"a value of type {type(value).__name__}"


def one_of(allowed: tuple[str, ...]) -> str:
    quoted = [repr(a) for a in allowed]
    if len(quoted) == 1:
        return quoted[0]
    return "one of " + ", ".join(quoted)


def join(path: str, key: str) -> str:
    shown = key if key.replace("_", "").isalnum() else repr(key)
    return f"{path}.{shown}" if path else shown


def parse_gate(value: Any, chk: Checker) -> dict[str, Any] | None:
    """The server-gate block, cleaned: ``cost`` dropped when null/{}; None when empty."""
    if value is None:
        return None
    block = chk.obj("gate", value, "an object with max_regressions, min_pass_rate or cost")
    chk.known_keys("gate", block, GATE_KEYS)
    out: dict[str, Any] = {}
    if block.get("max_regressions") is not None:
        out["max_regressions"] = chk.number(
            "gate.max_regressions", block["max_regressions"], lo=0, integer=True,
            what="a whole number >= 0",
        )
    if block.get("min_pass_rate") is not None:
        out["min_pass_rate"] = chk.number(
            "gate.min_pass_rate", block["min_pass_rate"], lo=0, hi=1,
            what="a number between 0 and 1",
        )
    cost = block.get("cost")
    if cost is not None:
        cost = chk.obj("gate.cost", cost, f"an object with {', '.join(COST_KEYS)}")
        chk.known_keys("gate.cost", cost, COST_KEYS)
        clean = {
            key: chk.number(f"gate.cost.{key}", cost[key])
            for key in COST_KEYS
            if key in cost and cost[key] is not None
        }
        if clean:
            out["cost"] = clean
    return out or None


def parse_rules(value: Any, chk: Checker) -> tuple[Rule, ...]:
    if value is None:
        return ()
    if not isinstance(value, list):
        chk.fail("rules", f"expected a list of rule objects, got {describe(value)}")
    return tuple(parse_rule(f"rules[{i}]", entry, chk) for i, entry in enumerate(value))


def parse_rule(path: str, entry: Any, chk: Checker) -> Rule:
    rule = chk.obj(path, entry, "a rule object such as {\"max_regressions\": 0}")
    dims = [k for k in rule if k in DIMENSIONS]
    if len(dims) > 1:
        chk.fail(path, f"has {len(dims)} dimensions ({', '.join(dims)}); put each in its own rule")
    allowed = ("severity", *(METRIC_BOUNDS if dims == ["metric"] else ()))
    extra = [k for k in rule if k not in DIMENSIONS and k not in allowed]
    if not dims:
        if extra:
            chk.fail(join(path, extra[0]), f"unknown dimension (expected {one_of(DIMENSIONS)})")
        chk.fail(path, f"no dimension key (expected one of {', '.join(DIMENSIONS)})")
    dim = dims[0]
    if extra:
        chk.fail(
            join(path, extra[0]),
            f"unknown key beside dimension {dim!r} (allowed: {', '.join(allowed)})",
        )
    severity = rule.get("severity", "block")
    severity = chk.choice(join(path, "severity"), severity, SEVERITIES)
    where = join(path, dim)
    if dim in NESTED:
        keys = NESTED[dim]
        spec = chk.obj(where, rule[dim], f"an object with {', '.join(keys)}")
        chk.known_keys(where, spec, keys)
        threshold = {k: chk.number(f"{where}.{k}", spec[k]) for k in keys if k in spec}
        return Rule(dim, severity, threshold)
    if dim == "metric":
        return Rule(dim, severity, _parse_metric(path, rule, chk))
    return Rule(dim, severity, parse_scalar(where, dim, rule[dim], chk))


def parse_scalar(path: str, dim: str, value: Any, chk: Checker) -> int | float:
    if dim in ("min_pass_rate", "min_avg_score"):
        return chk.number(path, value, lo=0, hi=1, what="a number between 0 and 1")
    return chk.number(path, value, lo=0, what="a number >= 0")


def _parse_metric(path: str, rule: dict[str, Any], chk: Checker) -> dict[str, Any]:
    name = rule["metric"]
    if not isinstance(name, str):
        chk.fail(join(path, "metric"), f"expected a metric key (string), got {describe(name)}")
    if not name.strip():
        chk.fail(join(path, "metric"), "the metric name is empty (expected a metric key)")
    spec: dict[str, Any] = {"metric": name}
    for bound in METRIC_BOUNDS:
        if bound in rule:
            spec[bound] = chk.number(
                join(path, bound), rule[bound], lo=0, hi=1, what="a number between 0 and 1"
            )
    if len(spec) == 1:
        chk.fail(path, f"metric {name!r} has neither min_avg nor max_avg (expected at least one)")
    if "min_avg" in spec and "max_avg" in spec and spec["min_avg"] > spec["max_avg"]:
        chk.fail(path, f"min_avg {fmt(spec['min_avg'])} is above max_avg {fmt(spec['max_avg'])}")
    return spec
