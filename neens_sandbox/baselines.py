"""Baselines: validate the wire object, resolve and pin it at creation, and look up the
baseline verdict of each candidate item.

Wire (request): ``{"kind": "branch", "value": NAME}``, ``{"kind": "preprod_run", "value": ID}``,
``{"kind": "prod_window", "range": "7d"}``; the comparison's ``?baseline=`` takes the CLI spelling
(``branch:main``, ``run:ID``, ``prod``, ``prod:30d``). Resolved:
``{"kind": "preprod_run", "runId": ID, "value": ID}`` or ``{"kind": "prod_window",
"range": R}``, with ``baselineResolution = {requested, resolved, resolvedRunId, detail}``
for branch and run requests (null for production windows).

``branch:NAME`` = the newest run on that branch over the same dataset version whose status
is completed or completed_with_regressions and whose own gate passed; none => the 7-day
production window, ``detail`` says why. Production sessions match items by prompt text
(whitespace-normalised); the newest session in the window wins.
"""

from __future__ import annotations

from typing import Any

from neens_sandbox.db import Database, loads
from neens_sandbox.http import ApiError
from neens_sandbox.scoring import PASS_MARK, load_pricing, price
from neens_sandbox.seed import parse_age

DEFAULT_RANGE = "7d"
GOOD = ("completed", "completed_with_regressions")


def parse_spec(text: str) -> dict[str, Any]:
    """CLI spelling -> wire object (the comparison's ``?baseline=``). 422 when unrecognised."""
    text = text.strip()
    if text.startswith("run:"):
        return {"kind": "preprod_run", "value": text[4:]}
    if text.startswith("branch:"):
        return {"kind": "branch", "value": text[7:].strip()}
    if text == "prod":
        return {"kind": "prod_window", "range": DEFAULT_RANGE}
    if text.startswith("prod:"):
        return {"kind": "prod_window", "range": text[5:]}
    raise ApiError(422, f"unrecognised baseline '{text}' (use run:ID, branch:NAME, prod or "
                        "prod:RANGE)")


def validate(raw: Any) -> dict[str, Any] | None:
    """Check a request's ``baseline`` object; returns a cleaned copy (422 when invalid)."""
    if raw is None:
        return None
    if not isinstance(raw, dict):
        raise ApiError(422, "baseline must be an object {kind, value|range}")
    kind = raw.get("kind")
    if kind in ("branch", "preprod_run"):
        value = raw.get("value")
        if not isinstance(value, str) or not value.strip():
            what = "branch name" if kind == "branch" else "run id"
            raise ApiError(422, f"baseline {kind}: the {what} is empty")
        return {"kind": kind, "value": value.strip() if kind == "branch" else value}
    if kind == "prod_window":
        rng = raw.get("range", DEFAULT_RANGE)
        if not isinstance(rng, str) or parse_age(rng) is None:
            raise ApiError(422, f"baseline prod_window: invalid range {rng!r} (e.g. 7d, 30d)")
        return {"kind": "prod_window", "range": rng.strip()}
    raise ApiError(422, "baseline kind must be branch, preprod_run or prod_window")


def _spec_text(req: dict[str, Any]) -> str:
    if req["kind"] == "branch":
        return f"branch:{req['value']}"
    if req["kind"] == "preprod_run":
        return f"run:{req['value']}"
    return f"prod:{req['range']}"


def resolve(db: Database, req: dict[str, Any] | None, *, dataset_version_id: str | None,
            exclude_run_id: str | None = None) -> tuple[dict | None, dict | None]:
    """Pin a baseline for a run over ``dataset_version_id`` (None = gates-only: no baseline)."""
    if dataset_version_id is None:
        return None, None
    if req is None:
        return {"kind": "prod_window", "range": DEFAULT_RANGE}, None
    requested = _spec_text(req)
    if req["kind"] == "prod_window":
        return {"kind": "prod_window", "range": req["range"]}, None
    if req["kind"] == "preprod_run":
        row = db.one("SELECT id, status FROM runs WHERE id = ?", (req["value"],))
        if row is None:
            raise ApiError(422, f"baseline run {req['value']} not found")
        resolution = {"requested": requested, "resolved": "preprod_run",
                      "resolvedRunId": row["id"], "detail": f"pinned run {row['id']}"}
        return {"kind": "preprod_run", "runId": row["id"], "value": row["id"]}, resolution
    branch = req["value"]
    row = db.one(
        "SELECT id FROM runs WHERE branch = ? AND dataset_version_id = ? AND gate_passed = 1"
        " AND status IN (?, ?) AND id != ? ORDER BY finished_at DESC, created_at DESC LIMIT 1",
        (branch, dataset_version_id, *GOOD, exclude_run_id or ""),
    )
    if row is not None:
        resolution = {
            "requested": requested, "resolved": "preprod_run", "resolvedRunId": row["id"],
            "detail": f"newest completed run on branch '{branch}' for this dataset version",
        }
        return {"kind": "preprod_run", "runId": row["id"], "value": row["id"]}, resolution
    resolution = {
        "requested": requested, "resolved": "prod_window", "resolvedRunId": None,
        "detail": f"no completed run with a passing gate on branch '{branch}' for this dataset "
                  f"version; using the {DEFAULT_RANGE} production window",
    }
    return {"kind": "prod_window", "range": DEFAULT_RANGE}, resolution


def norm(text: str) -> str:
    return " ".join(text.split()).casefold()


def cohort(db: Database, baseline: dict[str, Any] | None,
           items: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Baseline verdict per candidate item id: ``{passed, score, session}`` (matched only).

    ``items`` are candidate item rows (``item_id``, ``input``). Items whose baseline has no
    verdict (unscored, unmatched) are absent.
    """
    if baseline is None:
        return {}
    out: dict[str, dict[str, Any]] = {}
    if baseline["kind"] == "preprod_run":
        rows = db.all(
            "SELECT item_id, passed, score, session FROM run_items WHERE run_id = ?"
            " AND gate_id IS NULL AND passed IS NOT NULL", (baseline["runId"],),
        )
        by_id = {r["item_id"]: r for r in rows}
        for item in items:
            r = by_id.get(item["item_id"])
            if r is not None:
                out[item["item_id"]] = {"passed": bool(r["passed"]), "score": r["score"],
                                        "session": loads(r["session"], {}) or {}}
        return out
    window = parse_age(baseline.get("range") or DEFAULT_RANGE) or 7 * 86400
    pricing = load_pricing(db)
    newest: dict[str, Any] = {}
    for r in db.all("SELECT * FROM production WHERE age_s <= ? ORDER BY age_s DESC", (window,)):
        newest[norm(r["input"])] = r  # ordered oldest first: the newest wins
    for item in items:
        r = newest.get(norm(item["input"]))
        if r is None:
            continue
        passed = r["passed"]
        if passed is None and r["score"] is not None:
            passed = r["score"] >= PASS_MARK
        if passed is None:
            continue
        out[item["item_id"]] = {"passed": bool(passed), "score": r["score"],
                                "session": production_session(loads(r["body"], {}), pricing)}
    return out


def production_session(body: dict[str, Any], pricing: dict[str, dict[str, float]]) -> dict:
    """A seeded production session's traits (cost, latency, steps, model)."""
    usage = body.get("usage") if isinstance(body.get("usage"), dict) else {}
    model = body.get("model")
    cost = body.get("cost_usd")
    if not isinstance(cost, (int, float)) or isinstance(cost, bool):
        cost = price(pricing, model, usage.get("input_tokens"), usage.get("output_tokens"))
    has_usage = bool(usage) or isinstance(body.get("cost_usd"), (int, float))
    return {
        "model": model, "costUsd": cost,
        "latencyMs": body.get("latency_ms"), "steps": body.get("steps"),
        "unpricedModels": [model] if (model and has_usage and cost is None) else [],
        "noUsage": not has_usage, "unknownModel": model is None and not has_usage,
    }
