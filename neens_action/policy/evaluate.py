"""Evaluating a policy against what the server returned (docs/policy.md). Pure: no I/O.

Inputs are the server's own payloads: the terminal run, the comparison and the
metrics rollup. ``comparison`` / ``metrics`` are None when their fetch failed: the
affected absolute checks are then ``skipped`` and baseline-relative ones degrade to at most
a warning (a failed fetch never blocks, and never passes silently).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from neens_action.api.answers import Baseline, Run
from neens_action.api.comparison import Comparison, Delta, Metrics, Traits
from neens_action.outcome import Outcome
from neens_action.policy.result import PolicyEval, RuleResult
from neens_action.settings.policy_file import NESTED, Rule, fmt

if TYPE_CHECKING:
    from neens_action.policy.model import GatePolicy

AVG_TRAIT = {"cost": "avg_cost", "latency": "avg_latency", "steps": "avg_steps"}
DELTA_SIGNAL = {"cost": "cost", "latency": "latencyMs", "steps": "steps"}
PRICING_HINT = "set a rate under Settings → Model pricing"


def count(value: int | float) -> int | float:
    return int(value) if float(value).is_integer() else value


class Signals:
    """Read-only access to the three answers, with the documented fallbacks."""

    def __init__(self, run: Run, comparison: Comparison | None,
                 metrics: Metrics | None) -> None:
        self.run = run
        self.aggregate = run.aggregate
        self.comparison = comparison
        self.metrics = metrics

    def traits(self, side: str) -> Traits | None:
        return None if self.comparison is None else self.comparison.traits(side)

    def unpriced_models(self, side: str) -> list[str] | None:
        """The side's unpriced model names when it is unpriced (n > 0, avg_cost null)."""
        traits = self.traits(side)
        if traits is None or not traits.n or not traits.avg_cost_null:
            return None
        return list(traits.unpriced_models)

    def delta(self, dim: str, pct: bool) -> tuple[int | float | None, str]:
        """(observed delta or percentage, why it is missing)."""
        if self.comparison is None:
            return None, "the comparison could not be fetched"
        baseline = self.traits("baseline")
        if baseline is not None and baseline.n_said and not baseline.n:
            return None, "the baseline cohort has no sessions"
        block = self.comparison.deltas.get(DELTA_SIGNAL[dim]) or Delta()
        delta = block.delta
        if delta is None:
            return None, "the delta is null: no baseline cohort was matched"
        if not pct:
            return delta, ""
        before = block.before
        if before is None:
            return None, "the baseline average is null"
        if before == 0:
            return None, "the baseline average is 0, so a percentage change is undefined"
        return round(delta / before * 100, 2), ""

    def matched_nothing(self) -> bool:
        """The baseline matched no item: ``compared`` first, then ``matchedItems == 0``,
        then the run aggregate's ``baselineCompared``."""
        base = (self.comparison.baseline if self.comparison is not None else None) or Baseline()
        if base.compared_said:
            return base.compared is False
        if base.matched_items is not None:
            return base.matched_items == 0
        return self.aggregate.baseline_compared is False

    def regressions(self) -> int | float | None:
        if self.comparison is not None and self.comparison.regressions is not None:
            return len(self.comparison.regressions)
        for value in (self.aggregate.regressions, self.run.regressions):
            if value is not None:
                return count(value)
        return None

    def pass_rate(self) -> int | float | None:
        rate = self.aggregate.pass_rate
        if rate is None and self.comparison is not None:
            rate = self.comparison.candidate_pass_rate
        return rate

    def metric(self, key: str) -> int | float | None:
        return None if self.metrics is None else self.metrics.averages.get(key)


def evaluate(
    policy: GatePolicy, *, run: Run, comparison: Comparison | None = None,
    metrics: Metrics | None = None
) -> PolicyEval:
    """Evaluate every rule (then every gate-drift item) of ``policy``. Pure."""
    data = Signals(run, comparison, metrics)
    results: list[RuleResult] = []
    for rule in policy.rules:
        results.extend(evaluate_rule(rule, data, policy.on_missing_baseline))
    results.extend(drift_results(policy.gates_block(), data.run))
    return PolicyEval(
        blocked=any(r.status == "fail" for r in results),
        warned=any(r.status == "warn" for r in results),
        results=results,
    )


def apply_policy(policy: GatePolicy | None, outcome: Outcome) -> None:
    """The one place a policy meets an outcome: once the flow fetched the gate (and, with a
    policy, the comparison and metrics), evaluate it into ``outcome.policy_eval``."""
    if policy is None or outcome.gate is None:
        return
    outcome.policy_eval = evaluate(policy, run=outcome.run or Run(),
                                   comparison=outcome.comparison, metrics=outcome.metrics)


def evaluate_rule(rule: Rule, data: Signals, mode: str) -> list[RuleResult]:
    dim = rule.dimension
    if dim in NESTED:
        return _nested(rule, data, mode)
    if dim == "metric":
        return [_metric(rule, data)]
    label, thr = rule.label, rule.threshold
    if dim == "max_regressions":
        if data.matched_nothing():
            why = "the baseline matched none of the run's items, so nothing was compared"
            return [_missing(rule, label, why, mode, thr)]
        observed = data.regressions()
        if observed is None:
            why = "no regression count (no comparison list and no run aggregate)"
            return [_missing(rule, label, why, mode, thr, capped=data.comparison is None)]
        return [_check(rule, label, observed, thr, "max")]
    if dim == "max_abs_failures":
        failed = data.aggregate.failed
        observed = count(failed) if failed is not None else None
        return [_absolute(rule, label, observed, thr, "max", "the run has no aggregate.failed")]
    if dim == "min_pass_rate":
        why = "the run has no pass rate"
        return [_absolute(rule, label, data.pass_rate(), thr, "min", why)]
    why = "the run has no aggregate.avgScore"
    return [_absolute(rule, label, data.aggregate.avg_score, thr, "min", why)]


def _nested(rule: Rule, data: Signals, mode: str) -> list[RuleResult]:
    dim, spec = rule.dimension, rule.threshold
    avg_key, _, pct_key = NESTED[dim]
    out = []
    for key, thr in spec.items():
        name = f"{rule.label} {key}"
        unit = "%" if key == pct_key else ""
        if dim == "cost":
            skip = _unpriced(rule, name, thr, data, baseline_too=key != avg_key)
            if skip is not None:
                out.append(skip)
                continue
        if key == avg_key:
            cand = data.traits("candidate")
            observed = None if cand is None else cand.average(AVG_TRAIT[dim])
            why = (
                "the comparison could not be fetched" if data.comparison is None
                else f"the comparison has no candidate {AVG_TRAIT[dim]}"
            )
            out.append(_absolute(rule, name, observed, thr, "max", why))
            continue
        observed, why = data.delta(dim, pct=key == pct_key)
        if observed is None:
            capped = data.comparison is None
            out.append(_missing(rule, name, why, mode, dict(spec), capped=capped))
        else:
            out.append(_check(rule, name, observed, thr, "max", unit=unit))
    return out


def _unpriced(
    rule: Rule, name: str, thr: Any, data: Signals, *, baseline_too: bool
) -> RuleResult | None:
    models = data.unpriced_models("candidate")
    whose = "no session"
    if models is None and baseline_too:
        models = data.unpriced_models("baseline")
        whose = "no baseline session"
    if models is None:
        return None
    named = ", ".join(models) if models else "unknown models"
    reason = (
        f"{name}: unavailable — {whose} ran on a priced model (unpriced: {named}); "
        f"{PRICING_HINT}"
    )
    return RuleResult(rule.label, rule.severity, "skipped", None, thr, reason)


def _check(
    rule: Rule, name: str, observed: int | float, thr: Any, op: str, *, unit: str = ""
) -> RuleResult:
    breach = observed > thr if op == "max" else observed < thr
    if breach:
        status = "fail" if rule.severity == "block" else "warn"
        sign = ">" if op == "max" else "<"
    else:
        status, sign = "pass", "<=" if op == "max" else ">="
    reason = f"{name} {fmt(observed)}{unit} {sign} {fmt(thr)}{unit}"
    return RuleResult(rule.label, rule.severity, status, observed, thr, reason)


def _absolute(
    rule: Rule, name: str, observed: int | float | None, thr: Any, op: str, why: str
) -> RuleResult:
    if observed is None:
        reason = f"{name}: no data ({why}); not evaluated"
        return RuleResult(rule.label, rule.severity, "skipped", None, thr, reason)
    return _check(rule, name, observed, thr, op)


def _missing(
    rule: Rule, name: str, why: str, mode: str, thr: Any, *, capped: bool = False
) -> RuleResult:
    """A baseline-relative check with no baseline signal: ``on_missing_baseline`` decides."""
    if mode == "pass":
        status = "skipped"
    elif mode == "warn":
        status = "warn"
    else:
        status = "fail" if rule.severity == "block" else "warn"
    reason = f"{name}: no baseline to compare against ({why}); on_missing_baseline={mode}"
    if capped and status == "fail":
        status = "warn"
        reason += " (downgraded to a warning: the data could not be fetched)"
    return RuleResult(rule.label, rule.severity, status, None, thr, reason)


def _metric(rule: Rule, data: Signals) -> RuleResult:
    spec = dict(rule.threshold)
    key, label = spec["metric"], rule.label
    if data.metrics is None:
        why = "the metrics rollup could not be fetched"
        return RuleResult(rule.label, rule.severity, "skipped", None, spec,
                          f"{label}: no data ({why}); not evaluated")
    observed = data.metric(key)
    if observed is None:
        reason = f"{label}: no data (no score for metric {key!r} in this run); not evaluated"
        return RuleResult(rule.label, rule.severity, "skipped", None, spec, reason)
    lo, hi = spec.get("min_avg"), spec.get("max_avg")
    if lo is not None and observed < lo:
        breach = f"{label} {fmt(observed)} < min_avg {fmt(lo)}"
    elif hi is not None and observed > hi:
        breach = f"{label} {fmt(observed)} > max_avg {fmt(hi)}"
    else:
        bounds = [f"{b} {fmt(spec[b])}" for b in ("min_avg", "max_avg") if b in spec]
        reason = f"{label} {fmt(observed)} within {' and '.join(bounds)}"
        return RuleResult(rule.label, rule.severity, "pass", observed, spec, reason)
    status = "fail" if rule.severity == "block" else "warn"
    return RuleResult(rule.label, rule.severity, status, observed, spec, breach)


def drift_results(gates: Mapping[str, Any] | None, run: Run) -> list[RuleResult]:
    """One ``gate_drift:<id>`` result per server drift item, when the policy declared a
    ``gates`` block and the server acknowledged it (``gatesPolicy`` echoed)."""
    if not gates or not run.gates_policy_said:
        return []
    severity = gates.get("severity", "block")
    status = "fail" if severity == "block" else "warn"
    out = []
    for item in run.gate_drift:
        message = item.message or (f"gate {item.gate_id} differs between the repo and Neens "
                                   f"({item.kind or 'drift'})")
        out.append(RuleResult(f"gate_drift:{item.gate_id}", severity, status, item.kind, None,
                              message))
    return out
