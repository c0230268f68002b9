"""Model-sweep request validation and the cost estimate (``POST /model-sweeps/preview``,
and the pre-flight of ``POST /model-sweeps``).

:func:`resolve_request` validates a preview/create body (camelCase) completely and returns
a :class:`SweepPlan`; :func:`estimate` prices it with the seeded pricing table. A model with
no rate is *unpriced*: its arm's ``usd`` is null, the total covers the priced arms only and
the estimate is ``partial`` (a floor, never the cost).

Token basis (the sandbox has no history to learn from): input tokens per call = prompt
characters / 4 + 100, output tokens per call = 200. Deterministic judges cost nothing.
"""

from __future__ import annotations

import hashlib
import json
import math
from dataclasses import dataclass, field
from typing import Any

from neens_sandbox.context import Context
from neens_sandbox.create import validate_gate
from neens_sandbox.db import loads
from neens_sandbox.http import ApiError
from neens_sandbox.scoring import load_pricing, price
from neens_sandbox.sweeps_stats import DEFAULT_BAR

DEFAULT_PASS_K = 3
MAX_PASS_K = 10
MAX_ARMS = 10
MAX_CALLS = 20_000  # per-sweep ceiling on agent calls
OUTPUT_TOKENS = 200
PROMPT_OVERHEAD_TOKENS = 100


@dataclass
class SweepPlan:
    arms: list[dict[str, Any]]  # {label, model, connectionId, runnerMode}
    runner_mode: str  # "runner" | "push"
    pass_k: int
    dataset_id: str | None
    version_id: str
    scenario_suite_id: str | None
    judges: list[str]
    gate: dict[str, Any]
    items: list[dict[str, Any]] = field(default_factory=list)  # {item_id, input}
    notes: list[str] = field(default_factory=list)  # e.g. passK clamped


def _text(body: dict[str, Any], key: str) -> str | None:
    value = body.get(key)
    if value is None:
        return None
    if not isinstance(value, str) or not value.strip():
        raise ApiError(422, f"{key} must be a non-empty string")
    return value.strip()


def _arms(ctx: Context, raw: Any) -> tuple[list[dict[str, Any]], str]:
    if not isinstance(raw, list) or not raw:
        raise ApiError(422, "arms must be a non-empty list")
    if len(raw) > MAX_ARMS:
        raise ApiError(422, f"at most {MAX_ARMS} arms per sweep")
    arms, labels, targets, modes = [], set(), set(), set()
    for i, arm in enumerate(raw):
        if not isinstance(arm, dict):
            raise ApiError(422, f"arms[{i}] must be an object")
        label = arm.get("label")
        if not isinstance(label, str) or not label.strip():
            raise ApiError(422, f"arms[{i}] needs a non-empty label")
        label = label.strip()
        if label in labels:
            raise ApiError(422, f"two arms are labelled {label!r}: labels must be distinct")
        labels.add(label)
        runner = arm.get("runnerMode") == "runner"
        modes.add("runner" if runner else "push")
        if runner:
            model = arm.get("model")
            if not isinstance(model, str) or not model.strip():
                raise ApiError(422, f"runner arm {label!r} needs a model")
            model = model.strip()
            if model in targets:
                raise ApiError(422, f"two arms run model {model!r}: that is the same model "
                                    "twice, not a comparison")
            targets.add(model)
            arms.append({"label": label, "model": model, "connectionId": None,
                         "runnerMode": "runner"})
            continue
        conn_id = arm.get("agentConnectionId")
        if not isinstance(conn_id, str) or not conn_id.strip():
            raise ApiError(422, f"push arm {label!r} needs an agentConnectionId (or "
                                "runnerMode: runner with a model)")
        conn_id = conn_id.strip()
        if conn_id in targets:
            raise ApiError(422, f"two arms use connection {conn_id!r}: that is the same model "
                                "twice, not a comparison")
        targets.add(conn_id)
        row = ctx.db.one("SELECT body FROM connections WHERE id = ?", (conn_id,))
        if row is None:
            raise ApiError(404, f"agent connection {conn_id} not found")
        conn = loads(row["body"], {})
        arms.append({"label": label, "model": conn.get("model"), "connectionId": conn_id,
                     "runnerMode": "push"})
    if len(modes) > 1:
        raise ApiError(422, "a sweep's arms are all runner arms or all push arms, not both")
    return arms, modes.pop()


def _target(ctx: Context, body: dict[str, Any]) -> tuple[str | None, str, str | None, list]:
    """-> (dataset id, version id, suite id, default judges)."""
    given = [k for k in ("datasetId", "datasetVersionId", "scenarioSuiteId")
             if body.get(k) is not None]
    if len(given) != 1:
        raise ApiError(422, "give exactly one of datasetId, datasetVersionId, scenarioSuiteId")
    suite_id = None
    if given[0] == "scenarioSuiteId":
        from neens_sandbox import suites_store  # owner of scenario suites

        suite_id = _text(body, "scenarioSuiteId")
        dsid, vid = suites_store.suite_version(ctx, suite_id or "")
        suite = ctx.db.one("SELECT failure_mode_ids FROM scenario_suites WHERE id = ?",
                           (suite_id,))
        modes = suites_store.failure_modes(ctx, loads(suite["failure_mode_ids"], []))
        judges = list(dict.fromkeys(j for m in modes for j in m.get("judges") or []))
        return dsid, vid, suite_id, judges
    if given[0] == "datasetVersionId":
        vid = _text(body, "datasetVersionId")
        ver = ctx.db.one("SELECT * FROM dataset_versions WHERE id = ?", (vid,))
        if ver is None or ver["dataset_id"] is None:
            raise ApiError(404, f"dataset version {vid} not found")
        dsid = ver["dataset_id"]
    else:
        dsid = _text(body, "datasetId")
        vid = None
    ds = ctx.db.one("SELECT * FROM datasets WHERE id = ?", (dsid,))
    if ds is None:
        raise ApiError(404, f"dataset {dsid} not found")
    if vid is None:
        vid = ds["golden_version_id"]
        if vid is None:
            raise ApiError(422, f"dataset {dsid} has no golden version")
    return dsid, vid, None, loads(ds["judges"], [])


def resolve_request(ctx: Context, body: Any) -> SweepPlan:
    """Validate a sweep preview/create body (camelCase) and pin everything the arms will share."""
    if not isinstance(body, dict):
        raise ApiError(422, "the request body must be a JSON object")
    arms, mode = _arms(ctx, body.get("arms"))
    dsid, vid, suite_id, default_judges = _target(ctx, body)
    notes = []
    k = body.get("passK")
    if k is None:
        k = DEFAULT_PASS_K
    elif isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise ApiError(422, "passK must be a whole number >= 1")
    if k > MAX_PASS_K:
        notes.append(f"passK {k} is above the cap of {MAX_PASS_K}: clamped to {MAX_PASS_K}")
        k = MAX_PASS_K
    judges = body.get("judgeDeploymentIds")
    if judges is None:
        judges = default_judges
    elif not isinstance(judges, list) or not all(isinstance(j, str) for j in judges):
        raise ApiError(422, "judgeDeploymentIds must be a list of judge ids")
    known = {r["id"] for r in ctx.db.all("SELECT id FROM judges")}
    unknown = [j for j in judges if j not in known]
    if unknown:
        raise ApiError(422, f"unknown judge(s): {', '.join(unknown)}")
    if not judges:
        raise ApiError(422, "no judges to score the sweep with: pass judgeDeploymentIds")
    items = [{"item_id": r["item_id"], "input": r["input"]} for r in ctx.db.all(
        "SELECT item_id, input FROM dataset_items WHERE version_id = ? ORDER BY position",
        (vid,))]
    if not items:
        raise ApiError(422, f"dataset version {vid} has no items")
    return SweepPlan(arms=arms, runner_mode=mode, pass_k=k, dataset_id=dsid, version_id=vid,
                     scenario_suite_id=suite_id, judges=list(dict.fromkeys(judges)),
                     gate=validate_gate(body.get("gate")), items=items, notes=notes)


def child_gate(gate: dict[str, Any]) -> dict[str, Any]:
    """Each child run's gate: the sweep's, with the default bar when it sets no pass rate
    (a repetition is green when its run's gate passed)."""
    return {**gate, "min_pass_rate": gate.get("min_pass_rate", DEFAULT_BAR)}


def judge_bodies(ctx: Context, ids: list[str]) -> dict[str, Any]:
    rows = {r["id"]: loads(r["body"]) for r in ctx.db.all("SELECT * FROM judges")}
    return {j: rows.get(j) for j in sorted(set(ids))}


def conditions(ctx: Context, *, version_id: str | None, item_ids: list[str],
               judges: list[str], gate: dict[str, Any]) -> dict[str, Any]:
    """What must be identical for every arm x rep (judges by definition, not just by id)."""
    return {"datasetVersionId": version_id, "itemIds": list(item_ids),
            "judges": judge_bodies(ctx, judges), "gate": validate_gate(gate)}


def fingerprint(cond: dict[str, Any]) -> str:
    text = json.dumps(cond, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode()).hexdigest()


def estimate(ctx: Context, plan: SweepPlan, budget: Any = None) -> tuple[dict, list[str]]:
    """(estimate, refusals) for ``plan``; refusals are the reasons a create would get 422."""
    pricing = load_pricing(ctx.db)
    in_tokens = [math.ceil(len(i["input"]) / 4) + PROMPT_OVERHEAD_TOKENS for i in plan.items]
    k, n = plan.pass_k, len(plan.items)
    per_arm, total, unpriced_models, unpriced_arms = [], 0.0, [], []
    any_priced = False
    for arm in plan.arms:
        model = arm.get("model")
        per_call = [price(pricing, model, t, OUTPUT_TOKENS) for t in in_tokens]
        usd = None
        if per_call and all(p is not None for p in per_call):
            usd = round(sum(p for p in per_call if p is not None) * k, 6)
            total += usd
            any_priced = True
        else:
            unpriced_arms.append(arm["label"])
            name = model or f"(no model declared: {arm['label']})"
            if name not in unpriced_models:
                unpriced_models.append(name)
        per_arm.append({"label": arm["label"], "model": model, "runs": k, "calls": k * n,
                        "usd": usd})
    est = {
        "totalRuns": k * len(plan.arms), "totalCalls": k * n * len(plan.arms), "itemCount": n,
        "passK": k, "perArm": per_arm, "totalUsd": round(total, 6) if any_priced else None,
        "unpricedModels": unpriced_models, "unpricedArms": unpriced_arms,
        "partial": bool(unpriced_arms),
        "basis": {"inputTokensPerCall": round(sum(in_tokens) / n) if n else 0,
                  "outputTokensPerCall": OUTPUT_TOKENS, "source": "prompt length",
                  "judges": "deterministic (no cost)"},
    }
    if plan.notes:
        est["basis"]["note"] = "; ".join(plan.notes)
    refusals: list[str] = []
    if est["totalCalls"] > MAX_CALLS:
        refusals.append(f"{est['totalCalls']} agent calls is above the per-sweep ceiling of "
                        f"{MAX_CALLS}")
    if budget is not None:
        if isinstance(budget, bool) or not isinstance(budget, (int, float)) or budget < 0:
            raise ApiError(422, "budgetUsd must be a number >= 0")
        floor = est["totalUsd"] or 0.0
        if floor > budget + 1e-12:
            what = "a floor: some arms are unpriced" if est["partial"] else "the estimate"
            refusals.append(
                f"the estimated cost ${floor:.4f} ({what}) is above the budget of "
                f"${float(budget):.4f}: raise budgetUsd or drop arms / lower passK")
    return est, refusals
