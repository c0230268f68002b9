"""Drive the real sandbox with the real example agent (OpenTelemetry SDK) as processes."""

from __future__ import annotations

import subprocess
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from tests.helpers import AGENT, PY, Sandbox, items_of

TERMINAL = {"completed", "completed_with_regressions", "failed", "cancelled"}


def run_agent(sb: Sandbox, run_id: str, item: dict[str, Any], *, mode: str = "good",
              protocol: str = "http/protobuf", label: str = "v1", model: str | None = None,
              extra: dict[str, str] | None = None, timeout: float = 90) -> str:
    """Run examples/agent/agent.py for one item; returns its stdout (asserts rc 0)."""
    attrs = (f"service.name=refund-agent,neens.eval_run_id={run_id},"
             f"neens.dataset_item_id={item['item_id']},neens.version_label={label}")
    fields = {"OTEL_EXPORTER_OTLP_PROTOCOL": protocol, "OTEL_RESOURCE_ATTRIBUTES": attrs,
              "AGENT_MODE": mode, "NEENS_EVAL_RUN_ID": run_id,
              "NEENS_DATASET_ITEM_ID": item["item_id"], **(extra or {})}
    env = sb.agent_env(**fields)
    if model:
        env["NEENS_EVAL_MODEL"] = model
    proc = subprocess.run([PY, str(AGENT)], input=item["input"], env=env, capture_output=True,
                          text=True, timeout=timeout)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return proc.stdout


def replay(sb: Sandbox, run_id: str, items: list[dict[str, Any]], **kw: Any) -> list[str]:
    with ThreadPoolExecutor(4) as pool:
        return list(pool.map(lambda it: run_agent(sb, run_id, it, **kw), items))


def create(sb: Sandbox, body: dict[str, Any]) -> dict[str, Any]:
    resp = sb.post("/preprod-evals", json=body)
    assert resp.status_code in (200, 201), resp.text
    return resp.json()


def wait_terminal(sb: Sandbox, run_id: str, timeout: float = 60) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    delay = 0.05
    while True:
        run = sb.get(f"/preprod-evals/{run_id}").json()
        if run["status"] in TERMINAL:
            return run
        assert time.monotonic() < deadline, f"run {run_id} stuck in {run['status']}"
        time.sleep(delay)
        delay = min(delay * 1.5, 0.5)


def eval_run(sb: Sandbox, body: dict[str, Any], *, skip: tuple[str, ...] = (),
             **agent_kw: Any) -> dict[str, Any]:
    """Create, replay every item (except ``skip``) with the agent, /start, wait terminal."""
    body = {"name": body.get("version_label", "v1"), "version_label": "v1", **body}
    run = create(sb, body)
    todo = [i for i in items_of(sb, run["id"]) if i["item_id"] not in skip]
    replay(sb, run["id"], todo, label=body["version_label"], **agent_kw)
    started = sb.post(f"/preprod-evals/{run['id']}/start")
    assert started.status_code == 200, started.text
    return wait_terminal(sb, run["id"])


def write_seed(tmp: Path, text: str) -> Path:
    path = tmp / "seed.yaml"
    path.write_text(text, encoding="utf-8")
    return path
