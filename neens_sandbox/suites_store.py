"""Scenario suites in the sandbox's database: create, generate (a background thread), view,
launch. The HTTP handlers in ``routes/suites.py`` are thin wrappers over these functions.

Each suite owns a dataset ``ds_<suite id>`` (origin ``suite``, so reseeding keeps it); every
successful (re)generation materialises a fresh immutable golden version of it whose items are
the scenarios (item id = scenario id, item body = the whole scenario). A launch is an ordinary
pre-prod run over the suite's current version, each scenario scored by its own failure mode's
judges unless the launch names ``judge_deployment_ids``.

Other route modules may call :func:`suite_version` to resolve a suite to its golden version
(e.g. a sweep targeting ``scenarioSuiteId``).
"""

from __future__ import annotations

import os
import secrets
from datetime import datetime, timezone
from typing import Any

from neens_sandbox import runs_api
from neens_sandbox import suites_gen as gen
from neens_sandbox.context import Context
from neens_sandbox.db import dumps, loads, register_schema
from neens_sandbox.http import ApiError

register_schema("suites", [
    """CREATE TABLE IF NOT EXISTS scenario_suites (
        id TEXT PRIMARY KEY, name TEXT NOT NULL, status TEXT NOT NULL, error TEXT,
        failure_mode_ids TEXT NOT NULL, options TEXT NOT NULL, dataset_id TEXT NOT NULL,
        version_id TEXT, version INTEGER NOT NULL DEFAULT 0,
        attempt INTEGER NOT NULL DEFAULT 0, progress_done INTEGER NOT NULL DEFAULT 0,
        progress_total INTEGER NOT NULL DEFAULT 0, skipped TEXT NOT NULL DEFAULT '[]',
        created_at REAL NOT NULL, updated_at REAL NOT NULL, generated_at REAL)""",
    """CREATE TABLE IF NOT EXISTS scenario_suite_versions (
        suite_id TEXT NOT NULL, version INTEGER NOT NULL, version_id TEXT NOT NULL,
        scenario_count INTEGER NOT NULL, created_at REAL NOT NULL,
        PRIMARY KEY (suite_id, version))""",
    """CREATE TABLE IF NOT EXISTS scenario_suite_runs (
        suite_id TEXT NOT NULL, run_id TEXT NOT NULL, version_id TEXT NOT NULL,
        created_at REAL NOT NULL, PRIMARY KEY (suite_id, run_id))""",
])

LLM_CONNECTION_ID = "llm"  # the seed's `llm` section, as a connection id
LAUNCH_REFUSED = ("dataset_id", "dataset_version_id", "gates", "gates_policy")
# what a launch passes on to the run create (``POST /preprod-evals`` field names)
LAUNCH_FIELDS = ("version_label", "name", "runner_mode", "agent_connection_id",
                 "judge_deployment_ids", "baseline", "gate", "git_sha", "branch", "pr_number",
                 "pr_url", "repo", "source")


def _iso(ts: float | None) -> str | None:
    if ts is None:
        return None
    return datetime.fromtimestamp(ts, timezone.utc).isoformat().replace("+00:00", "Z")


# --- configuration the suite reads ----------------------------------------------------------


def failure_modes(ctx: Context, ids: list[str]) -> list[dict[str, Any]]:
    """The named failure modes (seed bodies), in order; 404 naming every unknown id."""
    marks = ",".join("?" * len(ids))
    rows = {r["id"]: loads(r["body"], {}) for r in ctx.db.all(
        f"SELECT id, body FROM failure_modes WHERE id IN ({marks})", ids)}
    missing = [i for i in ids if i not in rows]
    if missing:
        raise ApiError(404, f"failure mode(s) not found: {', '.join(missing)}")
    return [rows[i] for i in ids]


def llm_config(ctx: Context) -> dict[str, Any] | None:
    """The seeded LLM connection with its key resolved from ``api_key_env`` (never stored)."""
    row = ctx.db.one("SELECT value FROM settings WHERE key = 'llm'")
    cfg = loads(row["value"], None) if row else None
    if not cfg or not cfg.get("base_url"):
        return None
    out = dict(cfg)
    key_env = out.pop("api_key_env", None)
    if key_env and os.environ.get(key_env):
        out["api_key"] = os.environ[key_env]
    return out


def check_connection(ctx: Context, connection_id: str | None) -> None:
    """A pinned ``connection_id`` must name an LLM connection this sandbox has."""
    if connection_id is None or connection_id == LLM_CONNECTION_ID:
        if connection_id is not None and llm_config(ctx) is None:
            raise ApiError(422, "connection_id llm: no LLM connection is configured "
                                "(add an 'llm' section to the seed)")
        return
    if ctx.db.one("SELECT id FROM connections WHERE id = ?", (connection_id,)) is not None:
        raise ApiError(422, f"connection {connection_id} is an agent_http connection, not an "
                            "LLM connection")
    raise ApiError(404, f"LLM connection {connection_id} not found (this sandbox has: "
                        f"{LLM_CONNECTION_ID})")


def _union_judges(modes: list[dict[str, Any]]) -> list[str]:
    out: list[str] = []
    for mode in modes:
        for j in mode.get("judges") or []:
            if j not in out:
                out.append(j)
    return out


# --- create / regenerate / generate ----------------------------------------------------------


def _load(ctx: Context, suite_id: str) -> dict[str, Any]:
    row = ctx.db.one("SELECT * FROM scenario_suites WHERE id = ?", (suite_id,))
    if row is None:
        raise ApiError(404, f"scenario suite {suite_id} not found")
    suite = dict(row)
    suite["failure_mode_ids"] = loads(suite["failure_mode_ids"], [])
    suite["options"] = gen.SuiteOptions.from_json(loads(suite["options"], {}))
    suite["skipped"] = loads(suite["skipped"], [])
    return suite


def create_suite(ctx: Context, body: Any) -> str:
    try:
        name, ids, opts = gen.parse_create(body)
    except gen.SuiteInputError as exc:
        raise ApiError(exc.status, exc.detail) from None
    modes = failure_modes(ctx, ids)
    check_connection(ctx, opts.connection_id)
    suite_id = "sts_" + secrets.token_hex(6)
    dataset_id = f"ds_{suite_id}"
    now = ctx.now()
    with ctx.db.tx() as con:
        con.execute(
            "INSERT INTO datasets (id, name, judges, golden_version_id, origin, body)"
            " VALUES (?,?,?,NULL,'suite',?)",
            (dataset_id, f"Scenario suite: {name}", dumps(_union_judges(modes)),
             dumps({"scenarioSuiteId": suite_id})),
        )
        con.execute(
            "INSERT INTO scenario_suites (id, name, status, failure_mode_ids, options,"
            " dataset_id, attempt, progress_total, created_at, updated_at)"
            " VALUES (?,?,'generating',?,?,?,1,?,?,?)",
            (suite_id, name, dumps(ids), dumps(opts.to_json()), dataset_id,
             gen.plan_steps(modes, opts), now, now),
        )
    ctx.log(f"created scenario suite {suite_id} ({len(ids)} failure mode(s))")
    _spawn(ctx, suite_id, 1)
    return suite_id


def regenerate_suite(ctx: Context, suite_id: str, body: dict[str, Any]) -> None:
    suite = _load(ctx, suite_id)
    if suite["status"] == "generating":
        raise ApiError(409, f"scenario suite {suite_id} is still generating; wait until it is "
                            "ready or failed")
    try:
        opts = gen.parse_options(body, suite["options"])
    except gen.SuiteInputError as exc:
        raise ApiError(exc.status, exc.detail) from None
    modes = failure_modes(ctx, suite["failure_mode_ids"])
    check_connection(ctx, opts.connection_id)
    attempt = suite["attempt"] + 1
    with ctx.db.tx() as con:
        con.execute(
            "UPDATE scenario_suites SET status='generating', error=NULL, options=?, attempt=?,"
            " progress_done=0, progress_total=?, skipped='[]', version_id=NULL, updated_at=?"
            " WHERE id = ?",
            (dumps(opts.to_json()), attempt, gen.plan_steps(modes, opts), ctx.now(), suite_id),
        )
    ctx.log(f"regenerating scenario suite {suite_id}")
    _spawn(ctx, suite_id, attempt)


def _spawn(ctx: Context, suite_id: str, attempt: int) -> None:
    ctx.spawn(f"suite-{suite_id}-{attempt}", lambda: generate_suite(ctx, suite_id, attempt))


def _still_mine(con: Any, suite_id: str, attempt: int) -> bool:
    row = con.execute("SELECT status, attempt FROM scenario_suites WHERE id = ?",
                      (suite_id,)).fetchone()
    return row is not None and row["status"] == "generating" and row["attempt"] == attempt


def _fail(ctx: Context, suite_id: str, attempt: int, error: str, skipped: list) -> None:
    with ctx.db.tx() as con:
        if _still_mine(con, suite_id, attempt):
            con.execute(
                "UPDATE scenario_suites SET status='failed', error=?, skipped=?, updated_at=?"
                " WHERE id = ?", (error, dumps(skipped), ctx.now(), suite_id))
    ctx.log(f"scenario suite {suite_id} failed: {error}")


def generate_suite(ctx: Context, suite_id: str, attempt: int) -> None:
    """The background generation of one attempt; writes only while the attempt is current."""
    try:
        suite = _load(ctx, suite_id)
        modes = failure_modes(ctx, suite["failure_mode_ids"])
    except ApiError as exc:
        _fail(ctx, suite_id, attempt, exc.detail, [])
        return
    opts: gen.SuiteOptions = suite["options"]
    llm = llm_config(ctx)

    def progress(done: int) -> None:
        with ctx.db.tx() as con:
            if _still_mine(con, suite_id, attempt):
                con.execute("UPDATE scenario_suites SET progress_done=?, updated_at=? WHERE"
                            " id = ?", (done, ctx.now(), suite_id))

    try:
        result = gen.generate(modes, opts, llm, progress=progress)
    except Exception as exc:  # never leave a suite generating forever
        _fail(ctx, suite_id, attempt, f"generation crashed ({type(exc).__name__})", [])
        raise
    if result.error is not None:
        _fail(ctx, suite_id, attempt, result.error, result.skipped)
        return
    with ctx.db.tx() as con:
        if not _still_mine(con, suite_id, attempt):
            return
        version = 1 + (con.execute("SELECT COALESCE(MAX(version), 0) FROM"
                                   " scenario_suite_versions WHERE suite_id = ?",
                                   (suite_id,)).fetchone()[0])
        version_id = f"{suite['dataset_id']}-v{version}"
        runs_api.create_dataset_version(
            ctx.db, version_id=version_id, dataset_id=suite["dataset_id"],
            items=result.scenarios, label=f"v{version}", golden=True, origin="suite")
        now = ctx.now()
        con.execute("INSERT INTO scenario_suite_versions VALUES (?,?,?,?,?)",
                    (suite_id, version, version_id, len(result.scenarios), now))
        con.execute(
            "UPDATE scenario_suites SET status='ready', error=NULL, version_id=?, version=?,"
            " skipped=?, progress_done=progress_total, generated_at=?, updated_at=?"
            " WHERE id = ?",
            (version_id, version, dumps(result.skipped), now, now, suite_id))
    ctx.log(f"scenario suite {suite_id} ready: {len(result.scenarios)} scenario(s), "
            f"version {version_id}")


def resume(ctx: Context) -> None:
    """After a restart: generations that were in flight start again."""
    for row in ctx.db.all("SELECT id, attempt FROM scenario_suites WHERE status='generating'"):
        _spawn(ctx, row["id"], row["attempt"])


# --- views ----------------------------------------------------------------------------------


def scenarios(ctx: Context, version_id: str | None) -> list[dict[str, Any]]:
    if not version_id:
        return []
    rows = ctx.db.all("SELECT item_id, input, expected_output, body FROM dataset_items"
                      " WHERE version_id = ? ORDER BY position", (version_id,))
    out = []
    for r in rows:
        body = loads(r["body"], {}) or {}
        out.append({
            "id": r["item_id"], "input": r["input"], "expected_output": r["expected_output"],
            "strategy": body.get("strategy"), "failure_mode_id": body.get("failure_mode_id"),
            "failure_mode_name": body.get("failure_mode_name"),
        })
    return out


def suite_view(ctx: Context, suite_id: str) -> dict[str, Any]:
    with ctx.db.lock:
        suite = _load(ctx, suite_id)
        names = {r["id"]: r["name"] for r in ctx.db.all("SELECT id, name FROM failure_modes")}
        versions = ctx.db.all("SELECT * FROM scenario_suite_versions WHERE suite_id = ?"
                              " ORDER BY version", (suite_id,))
        runs = ctx.db.all("SELECT run_id FROM scenario_suite_runs WHERE suite_id = ?"
                          " ORDER BY created_at", (suite_id,))
        rows = scenarios(ctx, suite["version_id"]) if suite["status"] == "ready" else []
    opts: gen.SuiteOptions = suite["options"]
    return {
        "id": suite["id"], "name": suite["name"], "status": suite["status"],
        "error": suite["error"],
        "failureModeIds": suite["failure_mode_ids"],
        "failureModes": [{"id": i, "name": names.get(i, i)} for i in suite["failure_mode_ids"]],
        **opts.to_json(),
        "progress": {"done": suite["progress_done"], "total": suite["progress_total"]},
        "scenarioCount": len(rows), "scenarios": rows,
        "skippedStrategies": suite["skipped"],
        "datasetId": suite["dataset_id"], "datasetVersionId": suite["version_id"],
        "version": suite["version"],
        "versions": [{"version": v["version"], "datasetVersionId": v["version_id"],
                      "scenarioCount": v["scenario_count"], "createdAt": _iso(v["created_at"])}
                     for v in versions],
        "runIds": [r["run_id"] for r in runs],
        "createdAt": _iso(suite["created_at"]), "updatedAt": _iso(suite["updated_at"]),
        "generatedAt": _iso(suite["generated_at"]),
    }


def suite_version(ctx: Context, suite_id: str) -> tuple[str, str]:
    """``(dataset id, golden version id)`` of a ready suite; 404 unknown, 409 not ready."""
    suite = _load(ctx, suite_id)
    if suite["status"] != "ready" or not suite["version_id"]:
        raise ApiError(409, f"scenario suite {suite_id} is {suite['status']}, not ready: "
                            "wait for generation to finish (or regenerate a failed suite)")
    return suite["dataset_id"], suite["version_id"]


# --- launch ---------------------------------------------------------------------------------


def launch_suite(ctx: Context, suite_id: str, body: dict[str, Any]) -> str:
    """``POST /scenario-suites/{id}/launch``: an ordinary pre-prod run over the suite's golden
    version; returns the run id."""
    for key in LAUNCH_REFUSED:
        if key in body:
            raise ApiError(422, f"{key} cannot be set on a launch: a stress test runs over "
                                "the suite's own golden version")
    suite = _load(ctx, suite_id)
    dataset_id, version_id = suite_version(ctx, suite_id)
    run_body = {k: body[k] for k in LAUNCH_FIELDS if body.get(k) is not None}
    if "runner_mode" not in run_body:
        run_body["runner_mode"] = "push" if run_body.get("agent_connection_id") else "runner"
    if run_body["runner_mode"] not in ("push", "runner"):
        raise ApiError(422, "runner_mode must be push or runner")
    if run_body["runner_mode"] == "runner" and run_body.get("agent_connection_id"):
        raise ApiError(422, "agent_connection_id is only for runner_mode push")
    if isinstance(run_body.get("version_label"), str):
        run_body.setdefault("name", f"{suite['name']} @ {run_body['version_label']}")
    run_body.update(dataset_id=dataset_id, dataset_version_id=version_id)
    own_judges = "judge_deployment_ids" not in run_body
    modes = {}
    if own_judges:
        modes = {m["id"]: m for m in failure_modes(ctx, suite["failure_mode_ids"])}
        if not _union_judges(list(modes.values())):
            raise ApiError(422, "the suite's failure modes declare no judges: pass "
                                "judge_deployment_ids")
    extra = {"scenarioSuiteId": suite_id, "scenarioSuiteVersion": suite["version"]}
    with ctx.db.tx() as con:
        run_id = runs_api.create_run(ctx, run_body, extra=extra)
        if own_judges:  # each scenario is scored by its own failure mode's judges
            for sc in scenarios(ctx, version_id):
                judges = (modes.get(sc["failure_mode_id"]) or {}).get("judges")
                if judges:
                    con.execute("UPDATE run_items SET judges = ? WHERE run_id = ? AND"
                                " item_id = ?", (dumps(judges), run_id, sc["id"]))
        con.execute("INSERT INTO scenario_suite_runs VALUES (?,?,?,?)",
                    (suite_id, run_id, version_id, ctx.now()))
    ctx.log(f"launched scenario suite {suite_id} as run {run_id}")
    return run_id
