"""Run-level figures computed from a run record and its items (pure functions).

* :func:`aggregate` — passRate (passed / all snapshotted items), avgScore, counts;
* :func:`comparison` — ``GET /preprod-evals/{id}/comparison``: regressions, newPasses, matrix,
  deltas, traits;
* :func:`gate_rows` — per-eval-gate rows;
* :func:`gate_verdict` — ``GET /preprod-evals/{id}/gate``: passes unless no item was scored,
  the run failed, an enforced eval gate fails or has no data, or a server-side ``gate.cost``
  rule fails;
* :func:`metrics` — ``GET /preprod-evals/{id}/metrics``: per-metric rollup.

A run record and items are the dicts produced by ``runs_api.load_run``. ``cohort`` is the
baseline verdict per item from ``baselines.cohort``.
"""

from __future__ import annotations

from typing import Any

from neens_sandbox.scoring import PASS_MARK

TERMINAL = ("completed", "completed_with_regressions", "failed", "cancelled")


def _mean(values: list[float]) -> float | None:
    return round(sum(values) / len(values), 6) if values else None


def aggregate(items: list[dict[str, Any]]) -> dict[str, Any]:
    total = len(items)
    scored = [i for i in items if i["passed"] is not None]
    passed = sum(1 for i in scored if i["passed"])
    return {
        "total": total,
        "scored": len(scored),
        "passed": passed,
        "failed": len(scored) - passed,
        "errored": sum(1 for i in items if i["passed"] is None and i["error"]),
        "pending": sum(1 for i in items if i["passed"] is None and not i["error"]),
        "passRate": round(passed / total, 6) if total else None,
        "avgScore": _mean([i["score"] for i in scored if i["score"] is not None]),
    }


def compared_items(run: dict[str, Any], items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Items a baseline is compared on: the dataset items (gate items are graded alone)."""
    return [i for i in items if i["gate_id"] is None] if run["dataset_id"] else []


def traits(sessions: list[dict[str, Any]]) -> dict[str, Any]:
    costs = [s["costUsd"] for s in sessions if isinstance(s.get("costUsd"), (int, float))]
    lat = [s["latencyMs"] for s in sessions if isinstance(s.get("latencyMs"), (int, float))]
    steps = [s["steps"] for s in sessions if isinstance(s.get("steps"), (int, float))]
    unpriced = sorted({m for s in sessions for m in (s.get("unpricedModels") or [])})
    return {
        "n": len(sessions),
        "avg_cost": round(sum(costs) / len(costs), 10) if costs else None,
        "avg_latency": round(sum(lat) / len(lat), 3) if lat else None,
        "avg_steps": round(sum(steps) / len(steps), 4) if steps else None,
        "unpricedModels": unpriced,
        "pricedN": len(costs),
        "noUsageCases": sum(1 for s in sessions if s.get("noUsage")),
        "unknownModelCases": sum(1 for s in sessions if s.get("unknownModel")),
    }


def _delta(before: Any, after: Any, present: bool) -> dict[str, Any]:
    if not present or before is None or after is None:
        return {"before": None, "after": None, "delta": None}
    return {"before": before, "after": after, "delta": round(after - before, 10)}


def comparison(run: dict[str, Any], items: list[dict[str, Any]],
               cohort: dict[str, dict[str, Any]], baseline: dict[str, Any] | None) -> dict:
    graded = compared_items(run, items)
    matched = [i for i in graded if i["item_id"] in cohort]
    compared = None if baseline is None or not graded else bool(matched)
    regressions, new_passes = [], []
    matrix = {"passPass": 0, "passFail": 0, "passUnscored": 0, "failPass": 0, "failFail": 0,
              "failUnscored": 0}
    for item in matched:
        final = item["passed"] is not None or bool(item["error"])
        if not final:
            continue
        before = cohort[item["item_id"]]["passed"]
        after = item["passed"]
        after_word = "unscored" if after is None else ("pass" if after else "fail")
        key = ("pass" if before else "fail") + after_word.capitalize()
        matrix[key] += 1
        entry = {"itemId": item["item_id"], "input": item["input"],
                 "before": "pass" if before else "fail", "after": after_word,
                 "error": item["error"]}
        if before and after is not True:
            regressions.append(entry)
        elif not before and after is True:
            new_passes.append(entry)
    cand_sessions = [i["session"] for i in (graded or items) if i["session"]]
    base_sessions = [cohort[i["item_id"]]["session"] for i in matched]
    cand, base = traits(cand_sessions), traits(base_sessions)
    present = bool(base_sessions) and bool(cand_sessions)
    base_scored = [cohort[i["item_id"]] for i in matched]
    base_pass = sum(1 for b in base_scored if b["passed"])
    agg = aggregate(graded or items)
    return {
        "runId": run["id"],
        "baseline": {
            **(baseline or {}),
            "resolution": run.get("resolution"),
            "compared": compared,
            "matchedItems": len(matched),
            "totalItems": len(graded),
            "passRate": round(base_pass / len(matched), 6) if matched else None,
        },
        "candidate": {
            "passRate": agg["passRate"], "avgScore": agg["avgScore"], "passed": agg["passed"],
            "failed": agg["failed"], "errored": agg["errored"], "total": agg["total"],
        },
        "matrix": matrix,
        "regressions": regressions,
        "newPasses": new_passes,
        "deltas": {
            "cost": _delta(base["avg_cost"], cand["avg_cost"], present),
            "latencyMs": _delta(base["avg_latency"], cand["avg_latency"], present),
            "steps": _delta(base["avg_steps"], cand["avg_steps"], present),
        },
        "traits": {"candidate": cand, "baseline": base},
    }


def gate_rows(run: dict[str, Any], items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    rows = []
    terminal = run["status"] in TERMINAL
    for sel in run["gates"]:
        mine = [i for i in items if i["gate_id"] == sel["gateId"]]
        scored = [i for i in mine if i["passed"] is not None]
        passed = sum(1 for i in scored if i["passed"])
        rate = round(passed / len(mine), 6) if mine else None
        threshold = sel["threshold"]
        done = terminal or all(i["passed"] is not None or i["error"] for i in mine)
        if not done:
            verdict = "pending"
        elif not scored:
            verdict = "no_data"
        elif rate is not None and rate >= threshold - 1e-9:
            verdict = "pass"
        else:
            verdict = "fail"
        rows.append({
            "gateId": sel["gateId"], "name": sel["name"], "enforced": sel["enforced"],
            "passed": verdict == "pass", "passRate": rate if scored else None,
            "threshold": threshold, "passThreshold": sel["passThreshold"],
            "thresholdSource": sel["thresholdSource"], "nScored": len(scored),
            "nItems": len(mine), "verdict": verdict,
            "failureModeName": sel.get("failureModeName"),
            "guardrailOutcome": None, "guardrails": [],
        })
    return rows


def cost_rules(cfg: dict[str, Any], cmp: dict[str, Any]) -> list[dict[str, Any]]:
    cand, base = cmp["traits"]["candidate"], cmp["traits"]["baseline"]
    cand_unpriced = cand["n"] > 0 and cand["avg_cost"] is None
    base_unpriced = base["n"] > 0 and base["avg_cost"] is None
    delta = cmp["deltas"]["cost"]
    out = []

    def unpriced_reason(side: dict[str, Any], who: str) -> str:
        models = ", ".join(side["unpricedModels"]) or "no model/usage recorded"
        return (f"skipped: no {who} session ran on a priced model (unpriced: {models}); "
                "add a rate to the pricing table")

    for key in ("max_avg_usd", "max_delta", "max_delta_pct"):
        if key not in cfg:
            continue
        threshold = cfg[key]
        rule = {"rule": key, "threshold": threshold, "observed": None}
        if cand["n"] == 0:
            rule.update(status="skipped", reason="skipped: no candidate session was captured")
        elif cand_unpriced:
            rule.update(status="skipped", reason=unpriced_reason(cand, "candidate"))
        elif key == "max_avg_usd":
            obs = cand["avg_cost"]
            rule.update(observed=obs, status="fail" if obs > threshold else "pass",
                        reason=f"avg cost ${obs:.6f} vs max ${threshold}")
        elif base["n"] == 0:
            rule.update(status="skipped", reason="skipped: no baseline to compare cost with")
        elif base_unpriced:
            rule.update(status="skipped", reason=unpriced_reason(base, "baseline"))
        elif key == "max_delta":
            obs = delta["delta"]
            rule.update(observed=obs, status="fail" if obs > threshold else "pass",
                        reason=f"cost delta ${obs:+.6f} vs max ${threshold}")
        elif not delta["before"]:
            rule.update(status="skipped",
                        reason="skipped: baseline cost is zero; no percentage delta")
        else:
            obs = round(delta["delta"] / delta["before"] * 100, 2)
            rule.update(observed=obs, status="fail" if obs > threshold else "pass",
                        reason=f"cost delta {obs:+.2f}% vs max {threshold}%")
        out.append(rule)
    return out


def gate_verdict(run: dict[str, Any], items: list[dict[str, Any]],
                 cmp: dict[str, Any]) -> dict[str, Any]:
    cfg = run["gate"] or {}
    agg = aggregate(items)
    rows = gate_rows(run, items)
    reasons: list[str] = []
    failed = False
    terminal = run["status"] in TERMINAL
    if not terminal:
        failed = True
        reasons.append(f"run is not finished (status {run['status']})")
    if run["status"] == "failed":
        failed = True
        reasons.append("the run failed" + (f": {run['error']}" if run.get("error") else ""))
    if terminal and agg["scored"] == 0:
        failed = True
        reasons.append("no item was scored")
    compared = cmp["baseline"]["compared"]
    regressions = len(cmp["regressions"]) if compared else None
    if "max_regressions" in cfg:
        if regressions is None:
            reasons.append("regressions: not compared (no baseline)")
        elif regressions > cfg["max_regressions"]:
            failed = True
            reasons.append(f"regressions {regressions} > {cfg['max_regressions']}")
    if "min_pass_rate" in cfg:
        rate = agg["passRate"] or 0.0
        if rate < cfg["min_pass_rate"] - 1e-9:
            failed = True
            reasons.append(f"pass rate {rate * 100:.2f}% < {cfg['min_pass_rate'] * 100:.2f}%")
    rules = cost_rules(cfg["cost"], cmp) if cfg.get("cost") else None
    for rule in rules or []:
        if rule["status"] == "fail":
            failed = True
            reasons.append(f"cost {rule['rule']}: {rule['reason']}")
    for row in rows:
        if not row["enforced"] or row["passed"]:
            continue
        if row["verdict"] == "no_data":
            reasons.append(f"eval gate {row['name']}: NO DATA (nothing scored)")
        elif row["verdict"] == "fail":
            reasons.append(f"eval gate {row['name']}: pass rate below its threshold")
        else:
            reasons.append(f"eval gate {row['name']}: {row['verdict']}")
        failed = True
    if not failed and not reasons:
        reasons.append("all gate checks passed")
    body: dict[str, Any] = {
        "runId": run["id"], "status": run["status"], "passed": not failed,
        "reasons": reasons, "regressions": regressions, "passRate": agg["passRate"],
        "gate": cfg, "baseline": cmp["baseline"], "gates": rows, "guardrailWarnings": False,
    }
    if rules is not None:
        body["costRules"] = rules
    return body


def metrics(run: dict[str, Any], items: list[dict[str, Any]]) -> dict[str, Any]:
    per: dict[str, list[float]] = {}
    for item in items:
        for key, value in (item["scores"] or {}).items():
            per.setdefault(key, []).append(value)
    rows = [{
        "metricKey": key, "avgScore": _mean(vals),
        "passRate": round(sum(1 for v in vals if v >= PASS_MARK - 1e-9) / len(vals), 6),
        "scored": len(vals),
    } for key, vals in sorted(per.items())]
    scored = sum(1 for i in items if i["passed"] is not None)
    return {"runId": run["id"], "scored": scored, "metrics": rows}
