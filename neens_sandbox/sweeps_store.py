"""Model sweeps in the sandbox's database: create, reconcile (live view), compare, cancel.

A sweep pins its conditions at creation (dataset version and items, judges *by definition*,
k, the gate) and creates one ordinary pre-prod run per arm x rep, each ``awaiting_traces``
and listed in ``arms[].runs`` at once. Runner sweeps are driven by the client (``sweep run``);
push sweeps by a background thread that triggers every child run (rep-major, arms
round-robin), the run API calling each arm's connection per item.

Reading a sweep reconciles it with its child runs: when a child run turns terminal its
conditions are fingerprinted (judge definitions as they are *now*); a fingerprint that differs
from the sweep's makes the sweep ``void`` — e.g. a judge was edited (the sandbox restarted
with another seed) while the sweep ran. Statuses: ``pending``, ``running``, then
``completed`` / ``completed_with_failures`` (some child runs failed or were cancelled) /
``failed`` (all did) / ``cancelled`` / ``void``. Tables are declared in ``routes/sweeps.py``.
"""

from __future__ import annotations

import contextlib
import secrets
from datetime import datetime, timezone
from typing import Any

from neens_sandbox import runs_api
from neens_sandbox import sweeps_estimate as est
from neens_sandbox import sweeps_stats as stats
from neens_sandbox.context import Context
from neens_sandbox.db import dumps, loads
from neens_sandbox.http import ApiError

TERMINAL = ("completed", "completed_with_failures", "failed", "cancelled", "void")
RUN_TERMINAL = tuple(runs_api.TERMINAL)
BROKEN = ("failed", "cancelled")


def _iso(ts: float | None) -> str | None:
    if ts is None:
        return None
    return datetime.fromtimestamp(ts, timezone.utc).isoformat().replace("+00:00", "Z")


def _required_text(body: dict[str, Any], key: str) -> str:
    value = body.get(key)
    if not isinstance(value, str) or not value.strip():
        raise ApiError(422, f"{key} is required")
    return value.strip()


# --- create ---------------------------------------------------------------------------------


def preview(ctx: Context, body: Any) -> dict[str, Any]:
    plan = est.resolve_request(ctx, body)
    estimate, refusals = est.estimate(ctx, plan, body.get("budgetUsd"))
    return {"estimate": estimate, "refusals": refusals}


def create(ctx: Context, body: Any) -> str:
    """``POST /model-sweeps``: validate, refuse over budget / ceiling (422), create the sweep
    and its runs."""
    if not isinstance(body, dict):
        raise ApiError(422, "the request body must be a JSON object")
    name = _required_text(body, "name")
    label = _required_text(body, "versionLabel")
    plan = est.resolve_request(ctx, body)
    estimate, refusals = est.estimate(ctx, plan, body.get("budgetUsd"))
    if refusals:
        raise ApiError(422, f"sweep refused: {refusals[0]}")
    sweep_id = "msw-" + secrets.token_hex(6)
    gate = est.child_gate(plan.gate)
    cond = est.conditions(ctx, version_id=plan.version_id,
                          item_ids=[i["item_id"] for i in plan.items], judges=plan.judges,
                          gate=gate)
    now = ctx.now()
    with ctx.db.tx() as con:
        con.execute(
            "INSERT INTO sweeps (id, created_at, name, version_label, runner_mode, pass_k,"
            " status, dataset_id, dataset_version_id, scenario_suite_id, judges, gate,"
            " explicit_gate, conditions, fingerprint, budget_usd, estimate)"
            " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
            (sweep_id, now, name, label, plan.runner_mode, plan.pass_k, "pending",
             plan.dataset_id, plan.version_id, plan.scenario_suite_id, dumps(plan.judges),
             dumps(gate), dumps(plan.gate), dumps(cond), est.fingerprint(cond),
             body.get("budgetUsd"), dumps(estimate)),
        )
        arm_ids = []
        for pos, arm in enumerate(plan.arms):
            arm_id = "arm_" + secrets.token_hex(4)
            arm_ids.append(arm_id)
            con.execute(
                "INSERT INTO sweep_arms (sweep_id, position, arm_id, label, model,"
                " connection_id, runner_mode) VALUES (?,?,?,?,?,?,?)",
                (sweep_id, pos, arm_id, arm["label"], arm["model"], arm["connectionId"],
                 arm["runnerMode"]),
            )
        for rep in range(1, plan.pass_k + 1):
            for arm, arm_id in zip(plan.arms, arm_ids, strict=True):
                run_body = {
                    "name": f"{name} · {arm['label']} rep {rep}", "version_label": label,
                    "dataset_version_id": plan.version_id, "dataset_id": plan.dataset_id,
                    "judge_deployment_ids": plan.judges, "gate": gate,
                    "runner_mode": arm["runnerMode"],
                    "agent_connection_id": arm["connectionId"],
                }
                extra = {"sweepId": sweep_id, "armId": arm_id, "arm": arm["label"],
                         "rep": rep, "model": arm["model"]}
                run_id = runs_api.create_run(
                    ctx, {k: v for k, v in run_body.items() if v is not None}, extra=extra)
                con.execute("INSERT INTO sweep_runs (sweep_id, arm_id, rep, run_id)"
                            " VALUES (?,?,?,?)", (sweep_id, arm_id, rep, run_id))
    ctx.log(f"created sweep {sweep_id} ({len(plan.arms)} arms x k={plan.pass_k}, "
            f"{plan.runner_mode})")
    if plan.runner_mode == "push":
        ctx.spawn(f"sweep-{sweep_id}", lambda: drive_push(ctx, sweep_id))
    return sweep_id


# --- state ----------------------------------------------------------------------------------


def _load(ctx: Context, sweep_id: str) -> dict[str, Any]:
    row = ctx.db.one("SELECT * FROM sweeps WHERE id = ?", (sweep_id,))
    if row is None:
        raise ApiError(404, f"sweep {sweep_id} not found")
    sweep = dict(row)
    for key, default in (("judges", []), ("gate", {}), ("explicit_gate", {}),
                         ("conditions", {}), ("estimate", None)):
        sweep[key] = loads(sweep[key], default)
    sweep["arms"] = [dict(r) for r in ctx.db.all(
        "SELECT * FROM sweep_arms WHERE sweep_id = ? ORDER BY position", (sweep_id,))]
    runs = [dict(r) for r in ctx.db.all(
        "SELECT * FROM sweep_runs WHERE sweep_id = ? ORDER BY rep", (sweep_id,))]
    for arm in sweep["arms"]:
        arm["runs"] = [r for r in runs if r["arm_id"] == arm["arm_id"]]
    return sweep


def _differences(pinned: dict[str, Any], actual: dict[str, Any]) -> str:
    what = []
    if pinned.get("datasetVersionId") != actual.get("datasetVersionId"):
        what.append(f"dataset version ({actual.get('datasetVersionId')} instead of "
                    f"{pinned.get('datasetVersionId')})")
    if pinned.get("itemIds") != actual.get("itemIds"):
        what.append("items")
    pj, aj = pinned.get("judges") or {}, actual.get("judges") or {}
    if sorted(pj) != sorted(aj):
        what.append(f"judges ({', '.join(sorted(aj)) or 'none'} instead of "
                    f"{', '.join(sorted(pj))})")
    elif pj != aj:
        changed = [j for j in sorted(pj) if pj[j] != aj.get(j)]
        what.append(f"judge definitions ({', '.join(changed)} changed after the sweep was "
                    "created)")
    if pinned.get("gate") != actual.get("gate"):
        what.append("gate")
    return ", ".join(what) or "conditions"


def reconcile(ctx: Context, sweep_id: str) -> dict[str, Any]:
    """Load the sweep with its child runs (decoded, with items) and bring its status up to
    date; returns the sweep dict with ``arms[].runs[].run`` / ``.items`` filled in."""
    sweep = _load(ctx, sweep_id)
    void_reason = None
    for arm in sweep["arms"]:
        for link in arm["runs"]:
            runs_api.advance(ctx, link["run_id"])
            run, items = runs_api.load_run(ctx, link["run_id"])
            link["run"], link["items"] = run, items
            if run["status"] in RUN_TERMINAL and link["fingerprint"] is None:
                judges = list(dict.fromkeys(j for i in items for j in i["judges"]))
                cond = est.conditions(ctx, version_id=run["dataset_version_id"],
                                      item_ids=[i["item_id"] for i in items], judges=judges,
                                      gate=run["gate"])
                link["fingerprint"] = est.fingerprint(cond)
                link["conditions"] = dumps(cond)
                with ctx.db.tx() as con:
                    con.execute("UPDATE sweep_runs SET fingerprint = ?, conditions = ? WHERE"
                                " run_id = ?", (link["fingerprint"], link["conditions"],
                                                link["run_id"]))
            if (void_reason is None and link["fingerprint"] is not None
                    and link["fingerprint"] != sweep["fingerprint"]):
                what = _differences(sweep["conditions"], loads(link["conditions"], {}))
                void_reason = (f"the arms did not run under identical conditions: run "
                               f"{link['run_id']} ({arm['label']} rep {link['rep']}) differs in "
                               f"{what}")
    status = sweep["status"]
    if status not in TERMINAL:
        links = [link for arm in sweep["arms"] for link in arm["runs"]]
        statuses = [link["run"]["status"] for link in links]
        if void_reason:
            status = "void"
        elif statuses and all(s in RUN_TERMINAL for s in statuses):
            broken = sum(1 for s in statuses if s in BROKEN)
            status = ("failed" if broken == len(statuses) else
                      "completed_with_failures" if broken else "completed")
        elif any(s != "awaiting_traces" for s in statuses) or status == "running":
            status = "running"
        if status != sweep["status"]:
            finished = ctx.now() if status in TERMINAL else None
            with ctx.db.tx() as con:
                con.execute("UPDATE sweeps SET status = ?, void_reason = ?, finished_at = ?"
                            " WHERE id = ? AND status NOT IN (?,?,?,?,?)",
                            (status, void_reason, finished, sweep_id, *TERMINAL))
            sweep["status"], sweep["void_reason"], sweep["finished_at"] = (
                status, void_reason, finished)
            if status in TERMINAL:
                ctx.log(f"sweep {sweep_id} finished: {status}")
    return sweep


def _arm_state(arm: dict[str, Any], k: int) -> dict[str, Any]:
    runs = arm["runs"]
    statuses = [link["run"]["status"] for link in runs]
    terminal = [link for link in runs if link["run"]["status"] in RUN_TERMINAL]
    greens = sum(1 for link in terminal if link["run"].get("gate_passed") == 1)
    scored = any(i["passed"] is not None for link in runs for i in link["items"])
    all_done = bool(runs) and len(terminal) == len(runs)
    broken = [link for link in terminal if link["run"]["status"] in BROKEN]
    if not all_done:
        status = "running" if any(s != "awaiting_traces" for s in statuses) else "pending"
    elif len(broken) == len(runs):
        status = "failed"
    else:
        status = "completed_with_failures" if broken else "completed"
    error = None
    if broken:
        first = broken[0]["run"]
        error = (f"{len(broken)} of {len(runs)} run(s) {first['status']}"
                 + (f": {first['error']}" if first.get("error") else ""))
    return {
        "status": status, "greens": greens, "k": k, "runsTerminal": len(terminal),
        "runsTotal": len(runs), "error": error,
        "passed": (greens == k) if all_done and scored else None,
    }


def view(ctx: Context, sweep_id: str, sweep: dict[str, Any] | None = None) -> dict[str, Any]:
    """``GET /model-sweeps/{id}``: the sweep object, reconciled with its child runs."""
    sweep = sweep or reconcile(ctx, sweep_id)
    k = sweep["pass_k"]
    arms = []
    for arm in sweep["arms"]:
        item = {"armId": arm["arm_id"], "label": arm["label"], "model": arm["model"],
                "runnerMode": arm["runner_mode"], **_arm_state(arm, k),
                "runs": [{"runId": link["run_id"], "status": link["run"]["status"],
                          "rep": link["rep"], "gatePassed": (
                              None if link["run"].get("gate_passed") is None
                              else bool(link["run"]["gate_passed"]))} for link in arm["runs"]]}
        if arm["connection_id"]:
            item["agentConnectionId"] = arm["connection_id"]
        arms.append(item)
    return {
        "id": sweep["id"], "name": sweep["name"], "status": sweep["status"],
        "voidReason": sweep["void_reason"], "error": sweep["error"], "passK": k,
        "versionLabel": sweep["version_label"], "runnerMode": sweep["runner_mode"],
        "datasetId": sweep["dataset_id"], "datasetVersionId": sweep["dataset_version_id"],
        "scenarioSuiteId": sweep["scenario_suite_id"], "judgeDeploymentIds": sweep["judges"],
        "gate": sweep["explicit_gate"], "budgetUsd": sweep["budget_usd"],
        "estimate": sweep["estimate"], "createdAt": _iso(sweep["created_at"]),
        "finishedAt": _iso(sweep["finished_at"]), "arms": arms,
    }


# --- comparison -----------------------------------------------------------------------------


def _bar(sweep: dict[str, Any], raw: str | None) -> dict[str, Any]:
    if raw is not None and raw != "":
        try:
            value = float(raw)
        except ValueError:
            raise ApiError(422, f"bar must be a number in [0, 1], got {raw[:40]!r}") from None
        if not 0 <= value <= 1:
            raise ApiError(422, f"bar must be a number in [0, 1], got {raw[:40]!r}")
        return {"passRate": value, "source": "query"}
    pinned = sweep["explicit_gate"].get("min_pass_rate")
    if pinned is not None:
        return {"passRate": float(pinned), "source": "gate"}
    return {"passRate": stats.DEFAULT_BAR, "source": "default"}


def _baseline(sweep: dict[str, Any], raw: str | None) -> dict[str, Any]:
    arms = sweep["arms"]
    if raw:
        for arm in arms:
            if raw in (arm["arm_id"], arm["label"]):
                return {"armId": arm["arm_id"], "label": arm["label"]}
        raise ApiError(422, f"baselineArm {raw[:60]!r} is not an arm of sweep {sweep['id']}")
    return {"armId": arms[0]["arm_id"], "label": arms[0]["label"]}


def comparison(ctx: Context, sweep_id: str, query: dict[str, str]) -> dict[str, Any]:
    """``GET /model-sweeps/{id}/comparison``: per-arm figures, the verdict, per-agent
    verdicts, warnings."""
    sweep = reconcile(ctx, sweep_id)
    bar = _bar(sweep, query.get("bar"))
    baseline = _baseline(sweep, query.get("baselineArm"))
    n_items = len(sweep["conditions"].get("itemIds") or [])
    k = sweep["pass_k"]
    out: dict[str, Any] = {
        "sweepId": sweep_id, "status": sweep["status"], "comparable": True,
        "voidReason": None, "bar": bar, "baseline": baseline, "itemCount": n_items,
        "passK": k,
    }
    if sweep["status"] == "void":
        out.update(comparable=False, voidReason=sweep["void_reason"], arms=[], agents=[],
                   pricing=None, warnings=[],
                   verdict={"outcome": "unavailable", "excluded": [], "tiedWith": [],
                            "winner": None,
                            "reason": f"the sweep is void: {sweep['void_reason']}"})
        return out
    arms = [{"armId": a["arm_id"], "label": a["label"], "model": a["model"]}
            for a in sweep["arms"]]
    cases = [
        {"armId": arm["arm_id"], "rep": link["rep"], "itemId": item["item_id"],
         "passed": item["passed"], "session": item["session"]}
        for arm in sweep["arms"] for link in arm["runs"] for item in link["items"]
    ]
    rows = stats.arm_rows(arms, cases, k=k, n_items=n_items, baseline_id=baseline["armId"],
                          trials_per_arm=n_items * k)
    for row, arm in zip(rows, sweep["arms"], strict=True):
        state = _arm_state(arm, k)
        row["passK"] = {"greens": state["greens"], "k": k, "passed": state["passed"]}
    out["arms"] = rows
    out["verdict"] = stats.verdict(rows, bar=bar["passRate"], baseline_id=baseline["armId"])
    out["agents"] = stats.agents(arms, cases, bar=bar["passRate"],
                                 baseline_id=baseline["armId"], k=k)
    out["pricing"] = stats.pricing(rows, cases)
    out["warnings"] = stats.warnings(rows)
    return out


# --- cancel and push driving ----------------------------------------------------------------


def cancel(ctx: Context, sweep_id: str) -> dict[str, Any]:
    """``POST /model-sweeps/{id}/cancel``: the sweep and every non-terminal child run =>
    cancelled (409 when terminal)."""
    sweep = reconcile(ctx, sweep_id)
    if sweep["status"] in TERMINAL:
        raise ApiError(409, f"sweep {sweep_id} is already {sweep['status']}")
    with ctx.db.tx() as con:
        con.execute("UPDATE sweeps SET status = 'cancelled', finished_at = ? WHERE id = ?",
                    (ctx.now(), sweep_id))
    for arm in sweep["arms"]:
        for link in arm["runs"]:
            with contextlib.suppress(ApiError):  # already terminal
                runs_api.cancel_run(ctx, link["run_id"])
    ctx.log(f"sweep {sweep_id} cancelled")
    return view(ctx, sweep_id)


def drive_push(ctx: Context, sweep_id: str) -> None:
    """Trigger every awaiting child run of a push sweep, rep-major and arms round-robin."""
    from neens_sandbox import push  # the run API's push support

    sweep = _load(ctx, sweep_id)
    if sweep["status"] in TERMINAL:
        return
    with ctx.db.tx() as con:
        con.execute("UPDATE sweeps SET status = 'running' WHERE id = ? AND status = 'pending'",
                    (sweep_id,))
    order = sorted(((link["rep"], pos, link["run_id"])
                    for pos, arm in enumerate(sweep["arms"]) for link in arm["runs"]))
    for _, _, run_id in order:
        row = ctx.db.one("SELECT status FROM sweeps WHERE id = ?", (sweep_id,))
        if row is None or row["status"] in TERMINAL:
            return
        try:
            push.trigger(ctx, run_id)
        except ApiError as exc:  # not awaiting_traces any more (cancelled, resumed ...)
            ctx.log(f"sweep {sweep_id}: run {run_id} not triggered: {exc.detail}")


def resume(ctx: Context) -> None:
    """After a restart: keep driving push sweeps that still have runs to trigger."""
    for row in ctx.db.all("SELECT id FROM sweeps WHERE runner_mode = 'push' AND status IN"
                          " ('pending', 'running')"):
        ctx.spawn(f"sweep-{row['id']}", lambda sid=row["id"]: drive_push(ctx, sid))
