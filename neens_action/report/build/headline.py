"""What a reviewer reads first: the headline (the verdict and the checks that decided it),
the header line (what was tested, against what, with deltas), and the gate reasons. Only
failing checks are named as reasons; an agent that never answered is an agent failure, never
a regression; a pass with caveats (report/build/caveats.py) says so and names them.
"""

from __future__ import annotations

import re
from typing import Any

from neens_action.api.answers import Gate, Run, describe_baseline
from neens_action.api.comparison import Traits
from neens_action.api.values import real
from neens_action.outcome import Outcome
from neens_action.policy.result import RuleResult
from neens_action.report.build.caveats import (
    Caveat,
    baseline_block,
    fell_back,
    newcomer_branch,
    newcomer_text,
    not_compared,
    pass_rate_of,
)
from neens_action.report.fmt import (
    change_pct,
    finite,
    ms,
    number,
    plural,
    rate,
    rate_vs,
    readable_reason,
    relative,
    usd,
)
from neens_action.report.fmt import score as fmt_score
from neens_action.report.model import AgentFailure
from neens_action.settings.names import phrase
from neens_action.settings.run import RUN_NAMES
from neens_action.verdict import gate_passed, policy_results

NOT_COMPARED = "not compared (no baseline)"
_KEY = re.compile(r"^\S+ (max_\w+|min_\w+)")
_REGRESSIONS = re.compile(r"^regressions (\d+) > (?:max_regressions )?(\d+)$")
# server reasons that name no breach: never given as why a build was blocked
NOT_A_BREACH = ("all gate checks passed", "regressions: not compared")
__all__ = ["baseline_block", "not_compared"]
pass_rate = pass_rate_of


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
    if kind == "pct":
        return relative(value)
    return {"usd": usd, "ms": ms, "rate": rate}.get(kind, number)(value)


def _bound(kind: str, value: object) -> str:
    """A threshold in its rule's unit (a percentage change without a sign: ``20 %``)."""
    n = finite(value)
    if kind == "pct" and n is not None:
        return f"{number(n, 1)} %"
    return _fmt(kind, value)


def _rule_unit(result: RuleResult) -> tuple[str, str, str, bool]:
    """(name, formatter kind, bound word, signed delta) of a policy rule result."""
    label = result.dimension or "?"
    match = _KEY.match(result.reason or "")
    key = match.group(1) if match else ""
    kind, bound = _unit(label, key)
    name = label.replace("_", " ")
    if key.startswith("max_avg"):
        name = f"average {name}"
    return name, kind, bound, key.startswith("max_delta") and not key.endswith("pct")


def rule_values(result: RuleResult) -> tuple[str, str] | None:
    """(observed, threshold) of a numeric rule in its unit: ``+1,567 %`` / ``20 %``,
    ``$0.000021`` / ``$0.000001``, ``401 ms`` / ``300 ms``; None for any other rule."""
    observed, threshold = result.observed, result.threshold
    if finite(observed) is None or finite(threshold) is None:
        return None
    _, kind, _, delta = _rule_unit(result)
    text = _fmt(kind, observed)
    if delta and (finite(observed) or 0) >= 0:
        text = "+" + text
    return text, _bound(kind, threshold)


def policy_phrase(result: RuleResult) -> str:
    """``cost +1,567 % (max 20 %)`` / ``latency 401 ms (max 300 ms)`` for one rule result."""
    label = result.dimension or "?"
    values = rule_values(result)
    if values is None:
        return result.reason or label
    if label == "regressions":
        return (f"{plural(int(finite(result.observed) or 0), 'regression')} "
                f"(max {number(result.threshold)})")
    name, _, bound, _ = _rule_unit(result)
    return f"{name} {values[0]} ({bound} {values[1]})"


def _policy(outcome: Outcome, status: str) -> list[str]:
    return [policy_phrase(r) for r in policy_results(outcome.policy_eval)
            if r.status == status]


def breaches(outcome: Outcome, net_regressions: int | None) -> list[str]:
    """The server gate's reasons that name a breach, raw: "all gate checks passed" and
    "regressions: not compared" are no breach (the latter is a caveat), and the regression
    count is the one without agent failures (dropped when that count is within the max)."""
    out = []
    for reason in (outcome.gate or Gate()).reasons:
        text = reason.strip()
        if not text or text.lower().startswith(NOT_A_BREACH):
            continue
        m = _REGRESSIONS.match(text)
        if m and net_regressions is not None and net_regressions != int(m.group(1)):
            if net_regressions <= int(m.group(2)):
                continue  # the "regressions" were agents that never answered
            text = f"regressions {net_regressions} > max_regressions {m.group(2)}"
        out.append(text)
    return out


def headline(outcome: Outcome, code: int, verdict: str, failures: list[AgentFailure],
             failure_text: str, net_regressions: int | None,
             caveats: list[Caveat] | None = None) -> str:
    if outcome.interrupted:
        return "Interrupted: the agents were stopped and nothing was gated."
    if outcome.error:
        return "The run did not finish, so nothing was gated."
    why: list[str] = [failure_text] if failures else []
    if gate_passed(outcome) is not True:
        why += [readable_reason(r) for r in breaches(outcome, net_regressions)] or (
            [] if failures else ["the gate failed"])
    blocking = _policy(outcome, "fail")
    if code != 0:
        parts = ["; ".join(why)] if why else []
        if blocking:
            parts.append("policy: " + ", ".join(blocking) if why else ", ".join(blocking))
        lead = "Blocked by policy" if blocking and not why else "Blocked"
        return f"{lead}: {'; '.join(parts)}."
    if not outcome.enforced and (why or blocking):
        return (f"Not enforced ({phrase('no_gate', RUN_NAMES)}): the gate failed: "
                f"{'; '.join(why + blocking)}.")
    warns = _policy(outcome, "warn")
    rate_text = rate(pass_rate(outcome))
    regs = ("regressions " + NOT_COMPARED if net_regressions is None
            else plural(net_regressions, "regression"))
    if failures:
        regs += f", {failure_text}"
    labels = ", ".join(dict.fromkeys(c.label for c in caveats or ()))
    if verdict == "warned":
        what = ", ".join(warns) or "guardrail warnings"
        more = f"; caveats: {labels}" if labels else ""
        return f"Passed with warnings: {what} (pass rate {rate_text}, {regs}){more}."
    if labels:
        return f"Passed, with caveats ({labels}): pass rate {rate_text}, {regs}."
    return f"Passed: pass rate {rate_text}, {regs}."


def _traits(outcome: Outcome, side: str) -> Traits:
    traits = outcome.comparison.traits(side) if outcome.comparison is not None else None
    return traits or Traits()


def _with_change(text: str, before: object, after: object, fmt: Any) -> str:
    """``401 ms (+6 % vs 380 ms)``: the change only when both sides were measured."""
    change = change_pct(before, after)
    if not change:
        return text
    return f"{text} ({change} vs {fmt(before)})"


def header(outcome: Outcome, failure_text: str, net_regressions: int | None, *,
           graded_alone: bool = False) -> list[tuple[str, str]]:
    """The header line: dataset, candidate, baseline, pass rate, score, regressions, agent
    failures, cost, latency. ``graded_alone`` (a stress suite): a baseline that matched
    nothing is not mentioned."""
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
    newcomer = newcomer_branch(outcome)
    unmatched = graded_alone and not_compared(outcome)
    if newcomer and dataset and not unmatched:
        out.append(("baseline", newcomer_text(newcomer)))
    elif base is not None and dataset and not unmatched:
        requested = fell_back(outcome)  # why it fell back is a caveat: said there, once
        out.append(("baseline", f"{describe_baseline(base)} (fell back from {requested})"
                     if requested else describe_baseline(base, base.resolution)))
    before_rate = real(base.pass_rate if base is not None else None)
    out.append(("pass rate", rate_vs(pass_rate(outcome), None if newcomer else before_rate)))
    avg = real(run.aggregate.avg_score)
    if avg is not None:
        out.append(("mean score", fmt_score(avg)))
    nothing = bool(outcome.error) and bool(failure_text)  # every agent failed: no count
    if net_regressions is not None and not (newcomer or nothing) or net_regressions:
        out.append(("regressions", str(net_regressions)))
    elif dataset and not_compared(outcome) and not newcomer and not unmatched:
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
