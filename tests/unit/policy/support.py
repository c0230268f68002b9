"""Shared builders for the policy evaluation tests (payloads shaped as spec 4.7/4.8)."""

from __future__ import annotations

from typing import Any

from neens_action.api.answers import Run
from neens_action.api.comparison import Comparison, Metrics
from neens_action.policy import GatePolicy, PolicyEval, evaluate


def policy(*rules: dict[str, Any], mode: str = "warn") -> GatePolicy:
    return GatePolicy.from_dict({"rules": list(rules), "on_missing_baseline": mode})


def comparison(
    *,
    cost: tuple[Any, Any, Any] = (0.010, 0.012, 0.002),
    latency: tuple[Any, Any, Any] = (1000, 1500, 500),
    steps: tuple[Any, Any, Any] = (4, 5, 1),
    cand: dict[str, Any] | None = None,
    base: dict[str, Any] | None = None,
    regressions: Any = (),
    compared: Any = True,
    matched: Any = 3,
) -> dict[str, Any]:
    def delta(t: tuple[Any, Any, Any]) -> dict[str, Any]:
        return {"before": t[0], "after": t[1], "delta": t[2]}

    baseline: dict[str, Any] = {}
    if compared != "absent":
        baseline["compared"] = compared
    if matched != "absent":
        baseline["matchedItems"] = matched
    return {
        "runId": "ppr_1",
        "baseline": baseline,
        "candidate": {"passRate": 0.75},
        "regressions": list(regressions) if isinstance(regressions, tuple) else regressions,
        "newPasses": [],
        "deltas": {"cost": delta(cost), "latencyMs": delta(latency), "steps": delta(steps)},
        "traits": {
            "candidate": {"avg_cost": 0.012, "avg_latency": 1500, "avg_steps": 5, "n": 3,
                          "unpricedModels": [], **(cand or {})},
            "baseline": {"avg_cost": 0.010, "avg_latency": 1000, "avg_steps": 4, "n": 3,
                         "unpricedModels": [], **(base or {})},
        },
    }


RUN = {"aggregate": {"passRate": 0.8, "avgScore": 0.82, "passed": 8, "failed": 2, "errored": 0,
                     "regressions": 1, "baselineCompared": True}}
METRICS = {"runId": "ppr_1", "scored": 10, "metrics": [
    {"metricKey": "correctness", "avgScore": 0.8, "passRate": 0.8, "scored": 10},
    {"metricKey": "toxicity_safety", "avgScore": 0.95, "passRate": 1.0, "scored": 10},
]}


def run_eval(pol: GatePolicy, *, run: Any = RUN, comp: Any = None, metrics: Any = METRICS,
             default_comp: bool = True) -> PolicyEval:
    if comp is None and default_comp:
        comp = comparison()
    # decoded as the client decodes them; an answer that is no object never gets here
    return evaluate(pol, run=Run.decode(run),
                    comparison=Comparison.decode(comp) if isinstance(comp, dict) else None,
                    metrics=Metrics.decode(metrics) if isinstance(metrics, dict) else None)


def statuses(result: PolicyEval) -> list[tuple[str, str]]:
    return [(r.dimension, r.status) for r in result.results]
