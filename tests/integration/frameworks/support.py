"""Run a framework quickstart (examples/frameworks/<name>) under ``neens eval run`` against the
real sandbox, with the fake OpenAI-compatible model (tests/fakes/llm_server.py) behind
``OPENAI_BASE_URL``. The quickstarts' packages live in their own venvs (scripts/frameworks).

``NEENS_RECORD_PAYLOADS=DIR``: each run also writes what the sandbox stored for item it_1 (its
decoded spans and events) to ``DIR/<record>.json``, the recorded payloads that
tests/sandbox/unit/test_framework_payloads.py reads.
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.helpers import ROOT, TEST_KEY, Sandbox, run_cli

FRAMEWORKS = ROOT / "examples" / "frameworks"
VENVS = ROOT / ".venv-frameworks"
RECORD_ITEM = "it_1"
GOLDEN = "dsv_refunds_2"  # six items
SMALL = "dsv_refunds_1"  # two: it_1 (order 42) and it_2 (order 7, which the bad model gets wrong)


def command(name: str, script: str = "agent.py") -> list[str]:
    """The agent command of one quickstart (``script``: its worker.py, for worker mode)."""
    folder = FRAMEWORKS / name
    if (folder / "agent.mjs").exists():
        return ["node", str(folder / "agent.mjs")]
    return [str(VENVS / name / "bin" / "python"), str(folder / script)]


@dataclass
class QuickstartRun:
    proc: subprocess.CompletedProcess
    doc: dict[str, Any]
    items: dict[str, dict[str, Any]]  # item id -> the sandbox's scored item


def run_quickstart(sandbox: Sandbox, llm_url: str, name: str, *, label: str,
                   version: str = GOLDEN, record: str | None = None,
                   workers: int | None = None, agent: list[str] | None = None,
                   **env: str) -> QuickstartRun:
    """One ``neens eval run --create`` over ds_refunds with the quickstart as the agent
    (``workers``: its worker.py in worker mode, ``--workers N``; ``agent``: another
    command). The fake model serves OpenAI and Anthropic clients alike."""
    agent_env = sandbox.agent_env(OPENAI_BASE_URL=llm_url, OPENAI_API_KEY="sk-fake-key",
                                  ANTHROPIC_BASE_URL=llm_url.removesuffix("/v1"),
                                  ANTHROPIC_API_KEY="sk-ant-fake-key", **env)
    parallel = ["--workers", str(workers)] if workers else ["--concurrency", "6"]
    if agent is None:
        agent = command(name, "worker.py") if workers else command(name)
    proc = run_cli(["eval", "run", "--create", "--dataset", "ds_refunds",
                    "--dataset-version-id", version, "--version-label", label,
                    *parallel, "--min-pass-rate", "1", "--timeout", "120",
                    "--json", "--", *agent], agent_env, timeout=300)
    for stream in (proc.stdout, proc.stderr):
        assert TEST_KEY not in stream
    assert proc.stdout.strip(), proc.stderr
    doc = json.loads(proc.stdout)
    run = sandbox.get(f"/preprod-evals/{doc['runId']}").json()
    items = {i["datasetVersionItemId"]: i for i in run["items"]}
    target = os.environ.get("NEENS_RECORD_PAYLOADS")
    if target and record:
        Path(target).mkdir(parents=True, exist_ok=True)
        payload = stored_payload(sandbox, doc["runId"], RECORD_ITEM)
        (Path(target) / f"{record}.json").write_text(json.dumps(payload, indent=1) + "\n")
    return QuickstartRun(proc=proc, doc=doc, items=items)


def stored_payload(sandbox: Sandbox, run_id: str, item_id: str) -> dict[str, Any]:
    """The spans and events the sandbox stored for one item, as its session reader gets them."""
    con = sqlite3.connect(f"file:{sandbox.db}?mode=ro", uri=True, timeout=30)
    con.row_factory = sqlite3.Row
    try:
        spans = [{
            "traceId": r["trace_id"], "spanId": r["span_id"], "parentSpanId": r["parent_span_id"],
            "name": r["name"], "startNs": r["start_ns"], "endNs": r["end_ns"],
            "attributes": json.loads(r["attributes"]), "resource": json.loads(r["resource"]),
            "scope": r["scope"],
        } for r in con.execute("SELECT * FROM spans WHERE run_id = ? AND item_id = ? "
                               "ORDER BY start_ns, span_id", (run_id, item_id))]
        events = [{
            "source": r["source"], "spanId": r["span_id"], "timeNs": r["time_ns"],
            "name": r["name"], "body": json.loads(r["body"]),
            "attributes": json.loads(r["attributes"]),
        } for r in con.execute("SELECT * FROM events WHERE run_id = ? AND item_id = ? "
                               "ORDER BY time_ns, rowid", (run_id, item_id))]
    finally:
        con.close()
    return {"spans": spans, "events": events}


def assert_good(run: QuickstartRun, *, steps: int = 1, count: int = 6,
                wrapped: bool = False, model: str = "gpt-4o-mini",
                rates: tuple[float, float] = (0.15, 0.60)) -> None:
    """Every item scored and passed; model, tokens, cost and steps as the trace says
    (``rates``: the seeded USD per million input and output tokens of ``model``).
    ``wrapped``: the framework sends the question inside its own prompt, so the prompt tokens
    the fake model answered (its words) are more than the question's words; the caller
    compares them with the model's log."""
    assert run.proc.returncode == 0, run.proc.stderr
    assert run.doc["verdict"] == "passed"
    assert len(run.items) == count
    for item_id, item in run.items.items():
        assert item["passed"] is True, (item_id, item)
        assert item["model"] == model, item
        # the fake model: prompt tokens = words of the user message, 10 completion tokens
        assert item["outputTokens"] == 10, item
        if wrapped:
            assert item["inputTokens"] > len(item["input"].split()), item
        else:
            assert item["inputTokens"] == len(item["input"].split()), item
        expected = (item["inputTokens"] * rates[0] + item["outputTokens"] * rates[1]) / 1e6
        assert abs(item["costUsd"] - expected) < 1e-12, item
        assert item["steps"] == steps, item
    first = run.items["it_1"]
    assert "$42.00" in first["output"], first


def assert_caught(run: QuickstartRun) -> None:
    """The bad model's wrong amount (odd order numbers) fails the gate."""
    assert run.proc.returncode == 1, run.proc.stderr
    assert run.doc["verdict"] == "blocked"
    assert run.items["it_1"]["passed"] is True, run.items["it_1"]  # order 42: right amount
    assert run.items["it_2"]["passed"] is False  # order 7: $20.99 instead of $19.99
    assert "$20.99" in run.items["it_2"]["output"]
