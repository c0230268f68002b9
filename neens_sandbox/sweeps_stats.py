"""Model-sweep figures and the verdict of ``GET /model-sweeps/{id}/comparison``: pure functions.

Input is plain data read by ``sweeps_store``: the arms in position order, and one *case* per
arm x rep x item ``{armId, rep, itemId, passed, session}`` (``session`` as stored by the run
API, or None when nothing was captured).

* quality: ``rate = passed / (items x k)`` over every rep (unscored = not passed), ``n`` =
  items, Wilson 95 % interval over the ``items x k`` trials; ``rate`` is null while no case
  of the arm has been scored;
* cost per case: mean ``costUsd`` over the priced captured cases; ``partial`` when only some
  captured cases are priced; unpriced (``priced: false``) when none is — never $0;
* regressions vs the baseline arm: items the baseline passes (in a majority of its reps) and
  this arm does not;
* verdict: the cheapest fully priced arm whose rate clears the bar wins; unpriced / partially
  priced arms are judged but excluded from the cost ranking; when only they clear, the highest
  rate wins with ``reasonCode: "no_priced_arm_clears"``; arms whose interval overlaps the
  winner's are ``tiedWith``; ``none_clear`` when no arm clears.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

Z95 = 1.959963984540054
DEFAULT_BAR = 0.9


def wilson(successes: int, trials: int, z: float = Z95) -> tuple[float | None, float | None]:
    """Wilson score interval (95 % by default); (None, None) for zero trials."""
    if trials <= 0:
        return None, None
    p = successes / trials
    denom = 1 + z * z / trials
    centre = (p + z * z / (2 * trials)) / denom
    half = z * math.sqrt(p * (1 - p) / trials + z * z / (4 * trials * trials)) / denom
    return round(max(0.0, centre - half), 6), round(min(1.0, centre + half), 6)


def _pct(rate: float) -> str:
    return f"{rate * 100:.1f}".rstrip("0").rstrip(".") + "%"


def _usd(value: float) -> str:
    return f"${value:.6f}"


def quality(cases: list[dict[str, Any]], trials: int, n_items: int) -> dict[str, Any]:
    passed = sum(1 for c in cases if c["passed"] is True)
    scored = sum(1 for c in cases if c["passed"] is not None)
    if scored == 0 or trials <= 0:
        return {"rate": None, "n": n_items, "ciLow": None, "ciHigh": None, "passed": passed,
                "trials": trials, "scored": scored}
    low, high = wilson(passed, trials)
    return {"rate": round(passed / trials, 6), "n": n_items, "ciLow": low, "ciHigh": high,
            "passed": passed, "trials": trials, "scored": scored}


def cost(cases: list[dict[str, Any]]) -> dict[str, Any]:
    captured = [c["session"] for c in cases if c.get("session")]
    priced = [s["costUsd"] for s in captured if isinstance(s.get("costUsd"), (int, float))]
    if not priced:
        return {"costPerCaseUsd": None, "priced": False, "partial": False,
                "pricedCases": 0, "cases": len(captured)}
    return {"costPerCaseUsd": round(sum(priced) / len(priced), 10), "priced": True,
            "partial": len(priced) < len(captured), "pricedCases": len(priced),
            "cases": len(captured)}


def item_passes(cases: list[dict[str, Any]]) -> dict[str, bool]:
    """Per item: passed in more than half of its reps."""
    votes: dict[str, list[bool]] = {}
    for case in cases:
        votes.setdefault(case["itemId"], []).append(case["passed"] is True)
    return {item: sum(v) * 2 > len(v) for item, v in votes.items()}


def observed_models(cases: Iterable[dict[str, Any]]) -> set[str]:
    models: set[str] = set()
    for case in cases:
        session = case.get("session") or {}
        models.update(str(m) for m in session.get("models") or [] if m)
    return models


def overlaps(a: dict[str, Any], b: dict[str, Any]) -> bool | None:
    if None in (a.get("ciLow"), a.get("ciHigh"), b.get("ciLow"), b.get("ciHigh")):
        return None
    return not (a["ciHigh"] < b["ciLow"] or b["ciHigh"] < a["ciLow"])


def arm_rows(arms: list[dict[str, Any]], cases: list[dict[str, Any]], *, k: int,
             n_items: int, baseline_id: str, trials_per_arm: int | None = None
             ) -> list[dict[str, Any]]:
    """The comparison's ``arms[]`` (without ``passK``, which comes from the child runs)."""
    by_arm = {a["armId"]: [c for c in cases if c["armId"] == a["armId"]] for a in arms}
    base_passes = item_passes(by_arm.get(baseline_id, []))
    rows = []
    for arm in arms:
        mine = by_arm[arm["armId"]]
        trials = trials_per_arm if trials_per_arm is not None else len(mine)
        rows.append({
            "armId": arm["armId"], "label": arm["label"], "model": arm.get("model"),
            "quality": quality(mine, trials, n_items), "cost": cost(mine),
            "observedModels": sorted(observed_models(mine)),
        })
    base_row = next((r for r in rows if r["armId"] == baseline_id), None)
    for row in rows:
        mine_passes = item_passes(by_arm[row["armId"]])
        if row["quality"]["rate"] is None:
            row["regressions"] = {"count": None}
        else:
            count = sum(1 for item, ok in base_passes.items() if ok and not mine_passes.get(item))
            row["regressions"] = {"count": 0 if row["armId"] == baseline_id else count}
        if row["armId"] == baseline_id or base_row is None:
            row["distinguishableFromBaseline"] = None
        else:
            overlap = overlaps(row["quality"], base_row["quality"])
            row["distinguishableFromBaseline"] = None if overlap is None else not overlap
    return rows


def verdict(rows: list[dict[str, Any]], *, bar: float, baseline_id: str,
            scope: str = "") -> dict[str, Any]:
    """The server's ranking. ``scope`` (e.g. " for refund-bot") is woven into the sentence."""
    bar_text = _pct(bar)
    if all(r["quality"]["rate"] is None for r in rows):
        return {"outcome": "unavailable", "reason": f"no arm has a scored case yet{scope}",
                "excluded": [], "tiedWith": [], "winner": None}
    clearing = [r for r in rows if r["quality"]["rate"] is not None
                and r["quality"]["rate"] >= bar - 1e-9]
    excluded = []
    for r in rows:
        if not r["cost"]["priced"]:
            excluded.append({"armId": r["armId"], "label": r["label"], "reasonCode": "unpriced"})
        elif r["cost"]["partial"]:
            excluded.append({"armId": r["armId"], "label": r["label"],
                             "reasonCode": "partially_priced"})
    if not clearing:
        best = max((r for r in rows if r["quality"]["rate"] is not None),
                   key=lambda r: r["quality"]["rate"])
        return {"outcome": "none_clear", "excluded": excluded, "tiedWith": [], "winner": None,
                "reason": f"no arm clears the {bar_text} bar{scope} (best: {best['label']} at "
                          f"{_pct(best['quality']['rate'])})"}
    position = {r["armId"]: i for i, r in enumerate(rows)}
    ranked = [r for r in clearing if r["cost"]["priced"] and not r["cost"]["partial"]]
    reason_code = None
    if ranked:
        winner = min(ranked, key=lambda r: (r["cost"]["costPerCaseUsd"],
                                            -r["quality"]["rate"], position[r["armId"]]))
        reason = (f"{winner['label']} clears the {bar_text} bar{scope} at "
                  f"{_usd(winner['cost']['costPerCaseUsd'])} per case"
                  + _saving(winner, rows, baseline_id))
    else:
        winner = max(clearing, key=lambda r: (r["quality"]["rate"], -position[r["armId"]]))
        reason_code = "no_priced_arm_clears"
        reason = (f"{winner['label']} clears the {bar_text} bar{scope} with the highest pass "
                  f"rate ({_pct(winner['quality']['rate'])}); no fully priced arm clears, so "
                  "cost was not compared")
    tied = [r["label"] for r in clearing
            if r is not winner and overlaps(r["quality"], winner["quality"])]
    out = {"outcome": "winner", "reason": reason, "excluded": excluded, "tiedWith": tied,
           "winner": {"armId": winner["armId"], "label": winner["label"]}}
    if reason_code:
        out["reasonCode"] = reason_code
    return out


def _saving(winner: dict[str, Any], rows: list[dict[str, Any]], baseline_id: str) -> str:
    base = next((r for r in rows if r["armId"] == baseline_id), None)
    if base is None:
        return ""
    if base is winner:
        return f" — {winner['label']} is the baseline"
    base_cost = base["cost"]
    if not base_cost["priced"] or base_cost["partial"] or not base_cost["costPerCaseUsd"]:
        return f" — the baseline {base['label']} is unpriced, so no saving is computed"
    saving = 1 - winner["cost"]["costPerCaseUsd"] / base_cost["costPerCaseUsd"]
    if saving >= 0:
        return f" — {round(saving * 100)}% cheaper than {base['label']}"
    return (f" — {round(-saving * 100)}% more expensive than {base['label']}, "
            "which does not clear the bar")


def agents(arms: list[dict[str, Any]], cases: list[dict[str, Any]], *, bar: float,
           baseline_id: str, k: int) -> list[dict[str, Any]]:
    """One verdict per agent: cases grouped by their traces' ``service.name``."""
    groups: dict[str | None, list[dict[str, Any]]] = {}
    for case in cases:
        session = case.get("session") or {}
        groups.setdefault(session.get("serviceName") or None, []).append(case)
    out = []
    for name in sorted(groups, key=lambda n: (n is None, n or "")):
        group = groups[name]
        items = {c["itemId"] for c in group}
        rows = arm_rows(arms, group, k=k, n_items=len(items), baseline_id=baseline_id)
        scope = f" for {name}" if name else " for unattributed cases"
        out.append({"agent": name, "itemCount": len(items),
                    "verdict": verdict(rows, bar=bar, baseline_id=baseline_id, scope=scope)})
    return out


def pricing(rows: list[dict[str, Any]], cases: list[dict[str, Any]]) -> dict[str, Any]:
    sessions = [c["session"] for c in cases if c.get("session")]
    unpriced = sorted({m for s in sessions for m in s.get("unpricedModels") or []})
    return {
        "partial": any(not r["cost"]["priced"] or r["cost"]["partial"] for r in rows),
        "unpricedModels": unpriced,
        "noUsageCases": sum(1 for s in sessions if s.get("noUsage")),
        "unknownModelCases": sum(1 for s in sessions if s.get("unknownModel")),
    }


def warnings(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out = []
    seen = [r for r in rows if r["observedModels"]]
    models = {m for r in seen for m in r["observedModels"]}
    if len(rows) > 1 and len(seen) == len(rows) and len(models) == 1:
        model = next(iter(models))
        out.append({
            "code": "arms_same_observed_model",
            "arms": [r["label"] for r in rows],
            "message": f"every arm's traces report the same model ({model}): the agent is "
                       "probably ignoring NEENS_EVAL_MODEL, so this compares one model with "
                       "itself",
        })
    return out
