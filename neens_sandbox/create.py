"""``POST /preprod-evals``: validate the request completely, then write the run and its
frozen items in one transaction (a rejected request writes nothing).

Errors: 404 unknown dataset / dataset version / connection; 422 no golden version, invalid
baseline (e.g. empty branch), malformed ``gate`` / ``gates`` / ``gates_policy`` / provenance,
unknown gate ids, ``"active"`` with no active gate ("no active eval gates"), missing
``version_label``, neither dataset nor gates.
"""

from __future__ import annotations

import secrets
from typing import Any

from neens_sandbox import baselines
from neens_sandbox.context import Context
from neens_sandbox.db import dumps, loads
from neens_sandbox.http import ApiError

MAX_GATES = 50
_STR_FIELDS = ("git_sha", "branch", "pr_url", "repo", "name", "dataset_id",
               "dataset_version_id", "agent_connection_id")


def _num(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def validate_gate(raw: Any) -> dict[str, Any]:
    """The stored server-gate config; ``cost: null`` / ``{}`` are normalised away."""
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        raise ApiError(422, "gate must be an object")
    unknown = sorted(set(raw) - {"max_regressions", "min_pass_rate", "cost"})
    if unknown:
        raise ApiError(422, f"gate: unknown key(s) {', '.join(unknown)}")
    out: dict[str, Any] = {}
    if raw.get("max_regressions") is not None:
        v = raw["max_regressions"]
        if not _num(v) or v < 0 or int(v) != v:
            raise ApiError(422, "gate.max_regressions must be a whole number >= 0")
        out["max_regressions"] = int(v)
    if raw.get("min_pass_rate") is not None:
        v = raw["min_pass_rate"]
        if not _num(v) or not 0 <= v <= 1:
            raise ApiError(422, "gate.min_pass_rate must be a number in [0, 1]")
        out["min_pass_rate"] = float(v)
    cost = raw.get("cost")
    if cost:
        if not isinstance(cost, dict):
            raise ApiError(422, "gate.cost must be an object")
        unknown = sorted(set(cost) - {"max_avg_usd", "max_delta", "max_delta_pct"})
        if unknown:
            raise ApiError(422, f"gate.cost: unknown key(s) {', '.join(unknown)}")
        for key, value in cost.items():
            if not _num(value):
                raise ApiError(422, f"gate.cost.{key} must be a number")
        out["cost"] = {k: float(v) for k, v in cost.items()}
    return out


def _gate_row(ctx: Context, gid: str) -> dict[str, Any] | None:
    row = ctx.db.one("SELECT * FROM eval_gates WHERE id = ?", (gid,))
    return dict(row) if row else None


def _selection(row: dict[str, Any], enforced: bool, threshold: float | None = None) -> dict:
    body = loads(row["body"], {})
    return {
        "gateId": row["id"], "name": row["name"], "enforced": enforced,
        "threshold": row["threshold"] if threshold is None else threshold,
        "passThreshold": row["threshold"],
        "thresholdSource": "server" if threshold is None else "repo",
        "failureModeName": body.get("failure_mode_name"), "judges": loads(row["judges"], []),
        "versionId": row["version_id"], "status": row["status"],
    }


def select_gates(ctx: Context, gates: Any, policy: Any) -> tuple[list[dict], Any, list[dict]]:
    """-> (selected gates, gatesPolicy echo or None, gateDrift)."""
    if gates is not None and policy is not None:
        raise ApiError(422, "send either gates or gates_policy, not both")
    if gates is None and policy is None:
        return [], None, []
    active = [dict(r) for r in ctx.db.all(
        "SELECT * FROM eval_gates WHERE status = 'active' ORDER BY id")]
    if gates is not None:
        if isinstance(gates, str):
            if gates.strip().lower() != "active":
                raise ApiError(422, "gates must be \"active\" or a list of gate ids")
            if not active:
                raise ApiError(422, "no active eval gates")
            return [_selection(r, True) for r in active], None, []
        if not isinstance(gates, list) or not gates or not all(
            isinstance(g, str) and g.strip() for g in gates
        ):
            raise ApiError(422, "gates must be \"active\" or a non-empty list of gate ids")
        if len(gates) > MAX_GATES:
            raise ApiError(422, f"at most {MAX_GATES} eval gates per run")
        ids = list(dict.fromkeys(g.strip() for g in gates))
        rows = {g: _gate_row(ctx, g) for g in ids}
        missing = [g for g, r in rows.items() if r is None]
        if missing:
            raise ApiError(422, f"unknown eval gate(s): {', '.join(missing)}")
        return [_selection(r, r["status"] == "active") for r in rows.values()], None, []
    return _policy_gates(ctx, policy, active)


def _policy_gates(ctx: Context, policy: Any, active: list[dict]) -> tuple[list, Any, list]:
    if not isinstance(policy, dict):
        raise ApiError(422, "gates_policy must be an object")
    mode = policy.get("mode", "exact")
    severity = policy.get("severity", "block")
    enforce = policy.get("enforce")
    if mode not in ("exact", "include") or severity not in ("block", "warn"):
        raise ApiError(422, "gates_policy: mode must be exact|include, severity block|warn")
    if not isinstance(enforce, list) or len(enforce) > MAX_GATES:
        raise ApiError(422, f"gates_policy.enforce must be a list of at most {MAX_GATES}")
    entries = []
    for entry in enforce:
        entry = {"id": entry} if isinstance(entry, str) else entry
        if not isinstance(entry, dict) or not isinstance(entry.get("id"), str):
            raise ApiError(422, "gates_policy.enforce entries need an 'id'")
        mpr = entry.get("min_pass_rate")
        if mpr is not None and (not _num(mpr) or not 0 <= mpr <= 1):
            raise ApiError(422, f"gates_policy: min_pass_rate of {entry['id']} must be in [0,1]")
        entries.append(entry)
    selected, drift, seen = [], [], set()
    for entry in entries:
        gid = entry["id"]
        seen.add(gid)
        row = _gate_row(ctx, gid)
        if row is None:
            drift.append({"gateId": gid, "kind": "missing",
                          "message": f"gate {gid} is declared in the repo but not in Neens"})
            continue
        if row["status"] != "active":
            drift.append({"gateId": gid, "name": row["name"], "kind": "paused",
                          "message": f"gate {row['name']} is declared in the repo but paused"})
        selected.append(_selection(row, row["status"] == "active", entry.get("min_pass_rate")))
    for row in active:
        if row["id"] in seen:
            continue
        if mode == "include":
            selected.append(_selection(row, True))
        else:
            drift.append({"gateId": row["id"], "name": row["name"], "kind": "unlisted_active",
                          "message": f"gate {row['name']} is active in Neens but not declared"})
    echo = {"mode": mode, "severity": severity, "enforce": entries}
    return selected, echo, drift


def _validate_scalars(body: dict[str, Any]) -> None:
    for key in _STR_FIELDS:
        if body.get(key) is not None and not isinstance(body[key], str):
            raise ApiError(422, f"{key} must be a string")
    label = body.get("version_label")
    if not isinstance(label, str) or not label.strip():
        raise ApiError(422, "version_label is required")
    prn = body.get("pr_number")
    if prn is not None and (isinstance(prn, bool) or not isinstance(prn, int)):
        raise ApiError(422, "pr_number must be an integer")
    if body.get("source") not in (None, "ci", "manual"):
        raise ApiError(422, "source must be ci or manual")
    if body.get("repo") is not None and len(body["repo"]) > 255:
        raise ApiError(422, "repo is longer than 255 characters")
    jids = body.get("judge_deployment_ids")
    if jids is not None and (not isinstance(jids, list) or not all(
        isinstance(j, str) for j in jids
    )):
        raise ApiError(422, "judge_deployment_ids must be a list of strings")


def _dataset_version(ctx: Context, body: dict[str, Any]) -> tuple[str | None, str | None, list]:
    """-> (dataset id, version id, dataset judge ids)."""
    dsid, vid = body.get("dataset_id"), body.get("dataset_version_id")
    if vid is not None:
        ver = ctx.db.one("SELECT * FROM dataset_versions WHERE id = ?", (vid,))
        if ver is None or ver["dataset_id"] is None:
            raise ApiError(404, f"dataset version {vid} not found")
        if dsid is not None and ver["dataset_id"] != dsid:
            raise ApiError(422, f"dataset version {vid} does not belong to dataset {dsid}")
        dsid = ver["dataset_id"]
    if dsid is None:
        return None, None, []
    ds = ctx.db.one("SELECT * FROM datasets WHERE id = ?", (dsid,))
    if ds is None:
        raise ApiError(404, f"dataset {dsid} not found")
    if vid is None:
        vid = ds["golden_version_id"]
        if vid is None:
            raise ApiError(422, f"dataset {dsid} has no golden version")
    return dsid, vid, loads(ds["judges"], [])


def create_run(ctx: Context, body: dict[str, Any], *, extra: dict | None = None) -> str:
    """Validate ``body`` (run create, snake_case) and create the run; returns the new run id."""
    if not isinstance(body, dict):
        raise ApiError(422, "the request body must be a JSON object")
    _validate_scalars(body)
    dsid, vid, ds_judges = _dataset_version(ctx, body)
    mode = body.get("runner_mode") or "runner"
    if mode not in ("runner", "pull", "push"):
        raise ApiError(422, "runner_mode must be push or runner")
    mode = "push" if mode == "push" else "runner"
    conn_id = body.get("agent_connection_id")
    if mode == "push":
        if not conn_id:
            raise ApiError(422, "a push run needs agent_connection_id")
        if ctx.db.one("SELECT id FROM connections WHERE id = ?", (conn_id,)) is None:
            raise ApiError(404, f"agent connection {conn_id} not found")
    judges = body.get("judge_deployment_ids") or ds_judges
    known = {r["id"] for r in ctx.db.all("SELECT id FROM judges")}
    unknown = [j for j in judges if j not in known]
    if unknown:
        raise ApiError(422, f"unknown judge(s): {', '.join(unknown)}")
    gate_cfg = validate_gate(body.get("gate"))
    selected, policy_echo, drift = select_gates(ctx, body.get("gates"), body.get("gates_policy"))
    if dsid is None and not selected:
        raise ApiError(422, "dataset_id (or eval gates) is required")
    requested = baselines.validate(body.get("baseline"))
    run_id = "ppr_" + secrets.token_hex(6)
    now = ctx.now()
    with ctx.db.tx() as con:
        baseline, resolution = baselines.resolve(ctx.db, requested, dataset_version_id=vid)
        items: list[tuple] = []
        seen: set[str] = set()
        if vid is not None:
            for r in con.execute("SELECT * FROM dataset_items WHERE version_id = ? ORDER BY"
                                 " position", (vid,)):
                seen.add(r["item_id"])
                items.append((r["item_id"], r["input"], r["expected_output"], None, judges))
        for sel in selected:
            for r in con.execute("SELECT * FROM dataset_items WHERE version_id = ? ORDER BY"
                                 " position", (sel["versionId"],)):
                iid = r["item_id"]
                if iid in seen:
                    iid = f"{sel['gateId']}:{iid}"
                seen.add(iid)
                items.append((iid, r["input"], r["expected_output"], sel["gateId"],
                              sel["judges"]))
        stored = {k: v for k, v in body.items() if k not in ("gate", "baseline")}
        con.execute(
            "INSERT INTO runs (id, created_at, status, name, version_label, dataset_id,"
            " dataset_version_id, runner_mode, connection_id, branch, request, gate, gates,"
            " gates_policy, gate_drift, baseline_request, baseline, resolution, extra)"
            " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
            (run_id, now, "awaiting_traces", body.get("name") or body["version_label"],
             body["version_label"], dsid, vid, mode, conn_id, body.get("branch"),
             dumps(stored), dumps(gate_cfg), dumps(selected), dumps(policy_echo),
             dumps(drift), dumps(requested), dumps(baseline), dumps(resolution),
             dumps(extra or {})),
        )
        con.executemany(
            "INSERT INTO run_items (run_id, position, item_id, input, expected_output, gate_id,"
            " judges) VALUES (?,?,?,?,?,?,?)",
            [(run_id, pos, iid, inp, exp, gid, dumps(j))
             for pos, (iid, inp, exp, gid, j) in enumerate(items)],
        )
    ctx.log(f"created run {run_id} ({len(items)} items, mode {mode})")
    return run_id
