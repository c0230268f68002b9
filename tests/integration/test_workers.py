"""Worker mode (``--workers N``) end to end: the real CLI, the real sandbox (which links spans
to items by their resource attributes), and ``examples/agent/worker.py``, a real
OpenTelemetry SDK agent served by ``neens_action.agent.serve``."""

from __future__ import annotations

import json
import signal
import sqlite3
import subprocess

from tests.helpers import PY, ROOT, TEST_KEY, Sandbox, alive, run_cli, wait_for
from tests.integration.scale_support import marked_processes, marker, start_cli

WORKER = [PY, str(ROOT / "examples" / "agent" / "worker.py")]
CREATE = ["eval", "run", "--create", "--dataset", "ds_refunds", "--json"]


def cli(sandbox: Sandbox, args: list[str], **env: str) -> tuple[subprocess.CompletedProcess,
                                                               dict]:
    proc = run_cli(args, sandbox.agent_env(**env), timeout=180)
    for stream in (proc.stdout, proc.stderr):
        assert TEST_KEY not in stream and "Traceback" not in stream
    return proc, json.loads(proc.stdout)


def root_spans(sandbox: Sandbox, run_id: str) -> dict[str, list[tuple[str, dict]]]:
    """item id (as the sandbox linked it) -> [(input.value, resource)] of its root spans."""
    con = sqlite3.connect(f"file:{sandbox.db}?mode=ro", uri=True, timeout=30)
    try:
        rows = con.execute("SELECT item_id, attributes, resource FROM spans WHERE run_id = ? "
                           "AND name = 'invoke_agent refund-agent'", (run_id,)).fetchall()
    finally:
        con.close()
    out: dict[str, list[tuple[str, dict]]] = {}
    for item_id, attrs, resource in rows:
        out.setdefault(item_id, []).append((json.loads(attrs)["input.value"],
                                            json.loads(resource)))
    return out


def outcome(doc: dict) -> dict[str, tuple]:
    return {i["itemId"]: (i["state"], i["score"], i["returncode"]) for i in doc["items"]}


def test_worker_mode_scores_every_item_as_its_own_and_equals_per_item_mode(sandbox, tmp_path):
    per_item, base = cli(sandbox, [*CREATE, "--version-label", "per-item", "--", *WORKER])
    assert per_item.returncode == 0, per_item.stderr
    assert "Running 6 item(s) with concurrency=1" in per_item.stderr
    for provider in ("own", "serve"):  # the agent's provider hooked / serve's own
        log = tmp_path / f"{provider}.log"
        proc, doc = cli(sandbox, [*CREATE, "--version-label", f"w-{provider}", "--workers", "2",
                                  "--", *WORKER], AGENT_PROVIDER=provider, AGENT_LOG=str(log))
        assert proc.returncode == 0, proc.stderr
        assert "Running 6 item(s) with 2 warm worker(s)" in proc.stderr
        assert outcome(doc) == outcome(base)  # the same result as one process per item
        assert all(state == "pass" for state, _, _ in outcome(doc).values())
        pids = {line.split("\t")[1] for line in log.read_text().splitlines()}
        assert len(log.read_text().splitlines()) == 6 and len(pids) <= 2  # warm: 2 processes
        spans = root_spans(sandbox, doc["runId"])
        items = {i["item_id"]: i["input"] for i in
                 sandbox.get(f"/preprod-evals/{doc['runId']}/items").json()["items"]}
        assert set(spans) == set(items)
        for item_id, roots in spans.items():
            assert len(roots) == 1  # scored exactly once
            text, resource = roots[0]
            assert text == items[item_id]  # its own prompt: no cross-talk between items
            assert resource["neens.dataset_item_id"] == item_id
            assert resource["neens.eval_run_id"] == doc["runId"]
            assert resource["neens.version_label"] == f"w-{provider}"
            if provider == "own":  # the agent's own resource is kept, the item's merged in
                assert resource["service.name"] == "refund-agent"


def test_a_regressing_agent_in_worker_mode_fails_the_gate(sandbox):
    good, _ = cli(sandbox, [*CREATE, "--version-label", "main-1", "--branch", "main",
                            "--workers", "2", "--", *WORKER])
    assert good.returncode == 0, good.stderr
    bad, doc = cli(sandbox, [*CREATE, "--version-label", "feat-1", "--branch", "feat",
                             "--baseline", "branch:main", "--max-regressions", "0",
                             "--workers", "2", "--", *WORKER], AGENT_MODE="bad")
    assert bad.returncode == 1, bad.stderr
    assert doc["verdict"] == "blocked" and doc["summary"]["regressions"] > 0
    assert all(i["returncode"] == 0 for i in doc["items"])  # every agent ran; answers wrong


def test_a_crash_and_a_hang_fail_only_their_items(sandbox, tmp_path):
    log = tmp_path / "agent.log"
    proc, doc = cli(sandbox, [*CREATE, "--version-label", "w-1", "--workers", "2",
                              "--timeout", "4", "--", *WORKER],
                    AGENT_CRASH_ON="order 7", AGENT_HANG_ON="1001 arrived", AGENT_LOG=str(log))
    assert proc.returncode == 0, proc.stderr  # no gate was asked for
    items = {i["itemId"]: i for i in doc["items"]}
    crash, hang = items.pop("it_2"), items.pop("it_3")
    assert crash["returncode"] == 3 and crash["state"] == "unscored"
    assert crash["error"] == "worker exited (rc=3) before answering item it_2"
    assert hang["timedOut"] and hang["error"] == "timed out after 4s"
    assert hang["state"] != "pass"  # its finished tool span may have reached Neens
    assert all(i["returncode"] == 0 and i["state"] == "pass" for i in items.values())
    assert "[it_2] worker exited (rc=3)" in proc.stderr
    pids = [int(line.split("\t")[1]) for line in log.read_text().splitlines()]
    assert not any(alive(pid) for pid in pids)  # the hung one was killed, the rest ended


def test_sigterm_stops_every_worker(sandbox, tmp_path):
    name, value = marker()
    log, agent_log = tmp_path / "cli.log", tmp_path / "agent.log"
    env = sandbox.agent_env(AGENT_HANG_ON="$", AGENT_LOG=str(agent_log), **{name: value})
    proc = start_cli(["eval", "run", "--create", "--dataset", "ds_refunds", "--version-label",
                      "w-1", "--workers", "3", "--", *WORKER], env, log)
    assert wait_for(lambda: agent_log.exists()
                    and len(agent_log.read_text().splitlines()) == 3, 60), log.read_text()
    assert len(marked_processes(name, value)) >= 3
    proc.send_signal(signal.SIGTERM)
    proc.communicate(timeout=30)
    err = log.read_text()
    assert proc.returncode == 130, err
    assert "Traceback" not in err
    assert wait_for(lambda: not marked_processes(name, value), 10)
    run_id = next(line.split()[2] for line in err.splitlines()
                  if line.startswith("Created run "))
    assert sandbox.get(f"/preprod-evals/{run_id}").json()["status"] == "cancelled"


def test_sweep_run_in_worker_mode_tags_each_item_with_its_arm(tmp_path):
    from tests.helpers import start_sandbox

    sb = start_sandbox(tmp_path, seed=ROOT / "tests" / "integration" / "data" /
                       "sweep_seed.yaml")
    try:
        proc = run_cli(["sweep", "run", "--create", "--name", "warm", "--version-label", "v1",
                        "--dataset", "ds_sweep", "--arm", "big=gpt-4o", "--arm",
                        "small=gpt-4o-mini", "--k", "1", "--poll-interval", "0.5", "--json",
                        "--workers", "2", "--", *WORKER], sb.agent_env(), timeout=240)
        assert proc.returncode == 0, proc.stderr
        assert "with 2 warm worker(s) (interleaved" in proc.stderr
        con = sqlite3.connect(f"file:{sb.db}?mode=ro", uri=True, timeout=30)
        try:
            rows = con.execute("SELECT item_id, attributes, resource FROM spans "
                               "WHERE name LIKE 'chat %'").fetchall()
        finally:
            con.close()
        models = {"big": "gpt-4o", "small": "gpt-4o-mini"}
        assert rows
        for item_id, attrs, resource in rows:
            res = json.loads(resource)
            assert res["neens.dataset_item_id"] == item_id
            # the arm's model reached the worker through the item's NEENS_EVAL_MODEL
            assert json.loads(attrs)["gen_ai.request.model"] == models[res["neens.sweep_arm"]]
    finally:
        sb.stop()
