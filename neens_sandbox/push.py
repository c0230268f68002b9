"""Push mode: the sandbox calls the run's ``agent_http`` connection per item.

Request: ``POST <url>`` JSON ``{"input", "item_id", "run_id", "version_label", "model"?}``
with the connection's headers, a 60 s timeout (``timeout_s`` in the seed). Reply:
``application/json`` ``{"output": str, "model"?: str, "usage"?: {"input_tokens",
"output_tokens"}}`` or ``text/plain`` (the body is the output). The latency is measured here.
A non-2xx, a timeout or a malformed reply makes that item unscored with the error; every item
failing => the run ``failed``.

``trigger`` (``POST /preprod-evals/{id}/run``) answers the terminal run (inline, default) or
``running`` with the work in a background thread (``serve --push-async``); ``resume`` restarts
unfinished push runs after a server restart. 409 for a pull run or a run not
``awaiting_traces``.
"""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from neens_sandbox import runs_api
from neens_sandbox.context import Context
from neens_sandbox.db import loads
from neens_sandbox.http import ApiError
from neens_sandbox.scoring import load_pricing, session_from_reply
from neens_sandbox.seed import expand_env

REPLY_CAP = 1024 * 1024


def trigger(ctx: Context, run_id: str) -> dict[str, Any]:
    run, _ = runs_api.load_run(ctx, run_id)
    if run["runner_mode"] != "push":
        raise ApiError(409, f"run {run_id} is a pull run: POST /run only drives push runs "
                            "(use /start)")
    with ctx.db.tx() as con:
        cur = con.execute("UPDATE runs SET status = 'running', started_at = ? WHERE id = ? AND"
                          " status = 'awaiting_traces'", (ctx.now(), run_id))
        if cur.rowcount != 1:
            status = con.execute("SELECT status FROM runs WHERE id = ?", (run_id,)).fetchone()
            raise ApiError(409, f"run {run_id} is {status['status']}, not awaiting_traces")
    ctx.log(f"push run {run_id} triggered")
    if ctx.options.push_async:
        ctx.spawn(f"push-{run_id}", lambda: drive(ctx, run_id))
    else:
        drive(ctx, run_id)
    return runs_api.run_view(ctx, run_id)


def resume(ctx: Context) -> None:
    for row in ctx.db.all("SELECT id FROM runs WHERE status = 'running' AND"
                          " runner_mode = 'push'"):
        ctx.log(f"resuming push run {row['id']}")
        ctx.spawn(f"push-{row['id']}", lambda rid=row["id"]: drive(ctx, rid))


def _call(conn: dict[str, Any], run: dict[str, Any], item: dict[str, Any],
          pricing: dict[str, dict[str, float]]) -> tuple[dict | None, str | None]:
    import requests

    body = {"input": item["input"], "item_id": item["item_id"], "run_id": run["id"],
            "version_label": run["version_label"]}
    if conn.get("model"):
        body["model"] = conn["model"]
    headers = {"Content-Type": "application/json", "Accept": "application/json, text/plain",
               "User-Agent": "neens-sandbox/1"}
    headers.update({k: expand_env(v) for k, v in (conn.get("headers") or {}).items()})
    url = expand_env(conn["url"])
    started = time.monotonic()
    try:
        resp = requests.post(url, json=body, headers=headers, timeout=conn.get("timeout_s", 60))
    except requests.Timeout:
        return None, f"agent endpoint timed out after {conn.get('timeout_s', 60)} s"
    except requests.RequestException as exc:
        return None, f"agent endpoint unreachable ({type(exc).__name__})"
    latency = (time.monotonic() - started) * 1000
    if not 200 <= resp.status_code < 300:
        return None, f"agent endpoint answered HTTP {resp.status_code}"
    ctype = resp.headers.get("Content-Type", "").split(";")[0].strip().lower()
    text = resp.content[:REPLY_CAP].decode("utf-8", "replace")
    model, usage = conn.get("model"), None
    if ctype == "application/json" or ctype.endswith("+json"):
        try:
            data = resp.json()
        except ValueError:
            return None, "agent endpoint sent malformed JSON"
        if not isinstance(data, dict) or not isinstance(data.get("output"), str):
            return None, "agent endpoint reply has no text 'output'"
        text = data["output"]
        if isinstance(data.get("model"), str) and data["model"]:
            model = data["model"]
        usage = data.get("usage") if isinstance(data.get("usage"), dict) else None
    return session_from_reply(text, model, usage, latency, pricing), None


def drive(ctx: Context, run_id: str) -> None:
    """Call the connection for every item not yet done, score, then finish the run."""
    run, items = runs_api.load_run(ctx, run_id)
    if run["status"] != "running":
        return
    row = ctx.db.one("SELECT body FROM connections WHERE id = ?", (run["connection_id"],))
    pending = [i for i in items if i["passed"] is None and not i["error"]]
    if row is None:
        for item in pending:
            runs_api.record_error(ctx, run_id, item["item_id"], "agent connection is gone")
    else:
        conn = loads(row["body"], {})
        pricing = load_pricing(ctx.db)

        def one(item: dict[str, Any]) -> None:
            current = ctx.db.one("SELECT status FROM runs WHERE id = ?", (run_id,))
            if current is None or current["status"] != "running":
                return
            session, error = _call(conn, run, item, pricing)
            if error is not None:
                runs_api.record_error(ctx, run_id, item["item_id"], error)
            else:
                runs_api.record_session(ctx, run_id, item["item_id"], session or {})

        workers = max(1, min(ctx.options.push_concurrency, len(pending) or 1))
        with ThreadPoolExecutor(workers, thread_name_prefix=f"push-{run_id}") as pool:
            list(pool.map(one, pending))
    _wait_and_finish(ctx, run_id)


def _wait_and_finish(ctx: Context, run_id: str) -> None:
    """Honour ``--score-delay`` (blocking: an inline /run still answers a terminal run)."""
    row = ctx.db.one("SELECT started_at FROM runs WHERE id = ?", (run_id,))
    if row is not None and row["started_at"] is not None:
        wait = row["started_at"] + ctx.options.score_delay - ctx.now()
        if wait > 0:
            time.sleep(wait)
    runs_api.advance(ctx, run_id)
