"""What a reviewer reads first: the headline (the verdict and the checks that decided it),
the header line (what was tested, against what, with deltas), and the caveats (a rule that
could not be evaluated, a ``no-gate`` waiver). Only failing checks are named as reasons.
"""

from __future__ import annotations

import re
from typing import Any

from neens_action.api.answers import Baseline, Gate, Run, describe_baseline
from neens_action.api.comparison import Traits
from neens_action.api.values import real
from neens_action.outcome import Outcome
from neens_action.policy.result import RuleResult
from neens_action.report.fmt import (
    change_pct,
    finite,
    ms,
    number,
    plural,
    rate,
    rate_vs,
    readable_reason,
    usd,
)
from neens_action.report.fmt import score as fmt_score
from neens_action.report.model import AgentFailure
from neens_action.verdict import gate_passed, policy_results

NOT_COMPARED = "not compared (no baseline)"
_KEY = re.compile(r"^\S+ (max_\w+|min_\w+)")


def baseline_block(outcome: Outcome) -> Baseline | None:
    """The gate's baseline block, else the comparison's (None without either)."""
    base = outcome.gate.baseline if outcome.gate is not None else None
    if base is None and outcome.comparison is not None:
        base = outcome.comparison.baseline
    return base


def not_compared(outcome: Outcome) -> bool:
    base = baseline_block(outcome)
    return (base is not None and base.compared is False) or (
        outcome.gate is not None and outcome.gate.regressions_null)


def regression_count(outcome: Outcome) -> int | None:
    """The server's regression count (None: not compared)."""
    if not_compared(outcome):
        return None
    run = outcome.run or Run()
    gate = outcome.gate or Gate()
    for value in (gate.regressions, run.regressions, run.aggregate.regressions):
        if value is not None:
            return int(value)
    listed = outcome.comparison.regressions if outcome.comparison is not None else None
    return 0 if listed is None else len(listed)


def pass_rate(outcome: Outcome) -> float | None:
    value = real(outcome.gate.pass_rate if outcome.gate is not None else None)
    return value if value is not None else real(
        outcome.run.aggregate.pass_rate if outcome.run is not None else None)


def _unit(label: str, key: str) -> tuple[str, str]:
    """(formatter kind, bound word) of a policy check."""
    if key.endswith("pct"):
        return "pct", "max"
    if label == "cost":
        return "usd", "max"
    if label == "latency":
        return "ms", "max"
    if label in ("pass_rate", "avg_score"):
        return "rate", "min"
    return "num", "max" if key.startswith("max") or not key else "min"


def _fmt(kind: str, value: object) -> str:
    n = finite(value)
    if kind == "pct":
        return "n/a" if n is None else f"{'+' if n >= 0 else '-'}{number(abs(n), 0)} %"
    return {"usd": usd, "ms": ms, "rate": rate}.get(kind, number)(value)


def policy_phrase(result: RuleResult) -> str:
    """``cost +1,567 % (max 20 %)`` / ``latency 401 ms (max 300 ms)`` for one rule result."""
    label = result.dimension or "?"
    reason = result.reason or ""
    observed, threshold = result.observed, result.threshold
    if finite(observed) is None or finite(threshold) is None:
        return reason or label
    match = _KEY.match(reason)
    key = match.group(1) if match else ""
    kind, bound = _unit(label, key)
    if label == "regressions":
        return f"{plural(int(finite(observed) or 0), 'regression')} (max {number(threshold)})"
    name = label.replace("_", " ")
    if key.startswith("max_avg"):
        name = f"average {name}"
    elif key.startswith("max_delta") and not key.endswith("pct"):
        kind = "delta-" + kind
    text = _fmt(kind.removeprefix("delta-"), observed)
    if kind.startswith("delta-") and (finite(observed) or 0) >= 0:
        text = "+" + text
    return f"{name} {text} ({bound} {_fmt(kind.removeprefix('delta-'), threshold)})"


def _policy(outcome: Outcome, status: str) -> list[str]:
    return [policy_phrase(r) for r in policy_results(outcome.policy_eval)
            if r.status == status]


def caveats(outcome: Outcome) -> list[str]:
    """Rules that could not be evaluated and waivers: shown with a ⚠️, never as a pass."""
    out = []
    limits = outcome.gate.limits if outcome.gate is not None else frozenset()
    if not_compared(outcome):
        why = ("`max-regressions` could not be evaluated" if "max_regressions" in limits
               else "regressions were not compared")
        out.append(f"{why}: no baseline run matched these items. Run the job on your default "
                   "branch too, so pull requests have a run to compare with.")
    for r in policy_results(outcome.policy_eval):
        if r.status == "skipped" and r.severity == "block":
            out.append(f"Policy rule not evaluated: {r.reason}")
    if not outcome.enforced and (gate_passed(outcome) is not True or _policy(outcome, "fail")):
        out.append("The gate failed but `no-gate` waived it: this build is not blocked.")
    return out


def _gate_reasons(outcome: Outcome, agent_only: bool) -> list[str]:
    reasons = [readable_reason(r) for r in (outcome.gate or Gate()).reasons if r]
    if agent_only:  # the "regressions" are agents that never answered: said once, as such
        reasons = [r for r in reasons if "regression" not in r.lower()]
    return reasons


def headline(outcome: Outcome, code: int, verdict: str, failures: list[AgentFailure],
             failure_text: str, net_regressions: int | None) -> str:
    if outcome.interrupted:
        return "Interrupted: the agents were stopped and nothing was gated."
    if outcome.error:
        return "The run did not finish, so nothing was gated."
    agent_only = bool(failures) and not net_regressions
    why: list[str] = [failure_text] if failures else []
    if gate_passed(outcome) is not True:
        why += _gate_reasons(outcome, agent_only) or ([] if failures else ["the gate failed"])
    blocking = _policy(outcome, "fail")
    if code != 0:
        parts = ["; ".join(why)] if why else []
        if blocking:
            parts.append("policy: " + ", ".join(blocking) if why else ", ".join(blocking))
        lead = "Blocked by policy" if blocking and not why else "Blocked"
        return f"{lead}: {'; '.join(parts)}."
    if not outcome.enforced and (why or blocking):
        return f"Not enforced (`no-gate`): the gate failed: {'; '.join(why + blocking)}."
    warns = _policy(outcome, "warn")
    rate_text = rate(pass_rate(outcome))
    regs = (NOT_COMPARED.replace("not compared", "regressions not compared")
            if net_regressions is None else plural(net_regressions, "regression"))
    if verdict == "warned" and warns:
        return f"Passed with warnings: {', '.join(warns)} (pass rate {rate_text}, {regs})."
    if verdict == "warned":
        return f"Passed with warnings: guardrail warnings (pass rate {rate_text}, {regs})."
    return f"Passed: pass rate {rate_text}, {regs}."


def _traits(outcome: Outcome, side: str) -> Traits:
    traits = outcome.comparison.traits(side) if outcome.comparison is not None else None
    return traits or Traits()


def _with_change(text: str, before: object, after: object, fmt: Any) -> str:
    change = change_pct(before, after)
    if not change or finite(before) is None:
        return text
    return f"{text} ({change} vs {fmt(before)})"


def header(outcome: Outcome, failure_text: str, net_regressions: int | None) -> list[
        tuple[str, str]]:
    """The header line: dataset, candidate, baseline, pass rate, score, regressions, cost."""
    run = outcome.run or Run()
    out: list[tuple[str, str]] = []
    dataset = run.dataset_id
    if dataset:
        version = run.dataset_version_id
        out.append(("dataset", f"{dataset} ({version})" if version else dataset))
    elif run.gates:
        out.append(("dataset", "eval gates only"))
    label, sha = run.version_label, run.git_sha[:7]
    if label or sha:
        out.append(("candidate", " @ ".join(p for p in (label, sha) if p)))
    base = baseline_block(outcome)
    if base is not None and dataset:
        out.append(("baseline", describe_baseline(base, base.resolution)))
    before_rate = real(base.pass_rate if base is not None else None)
    out.append(("pass rate", rate_vs(pass_rate(outcome), before_rate)))
    avg = real(run.aggregate.avg_score)
    if avg is not None:
        out.append(("mean score", fmt_score(avg)))
    if net_regressions is not None and not (failure_text and net_regressions == 0):
        out.append(("regressions", str(net_regressions)))  # agents that never answered
        # are agent failures, said once as such
    elif dataset and not_compared(outcome):
        out.append(("regressions", NOT_COMPARED))
    if failure_text:
        out.append(("agent failures", failure_text))
    cand, before = _traits(outcome, "candidate"), _traits(outcome, "baseline")
    if cand.avg_cost is not None:
        out.append(("cost / item", _with_change(usd(cand.avg_cost), before.avg_cost,
                                                cand.avg_cost, usd)))
    if cand.avg_latency is not None:
        out.append(("latency", _with_change(ms(cand.avg_latency), before.avg_latency,
                                            cand.avg_latency, ms)))
    return out
