"""``neens eval watch``, part 2: failing iterations, agent-written files, signals, flags."""

from __future__ import annotations

import re
import signal
import subprocess
import time
import uuid

import pytest

from tests.helpers import PY, ROOT, start_sandbox
from tests.integration.watch_support import (
    TWO_ITEMS,
    WAIT,
    Watch,
    headers,
    save,
    tagged_processes,
)


def test_failing_iteration_is_cancelled_and_the_watcher_keeps_going(tmp_path, tree):
    # a long capture grace: a run with missing traces stays "running" past --poll-timeout
    sb = start_sandbox(tmp_path, extra=["--grace", "60"])
    try:
        (tree / "mode.txt").write_text("silent")  # answers, exports no trace
        w = Watch(sb, tree, [*TWO_ITEMS, "--poll-timeout", "3", "--max-iterations", "2"])
        try:
            w.wait_for(lambda t: "✗ iteration 1 errored" in t, "iteration 1 to fail")
            w.wait_idle(1)
            assert "(the watcher keeps going — save a file to retry)" in w.stderr
            first = w.records()[0]
            assert first["exitCode"] == 2 and "did not finish" in first["error"]
            assert first["diff"] is None and first["metrics"] is None
            assert sb.get(f"/preprod-evals/{first['runId']}").json()["status"] == "cancelled"
            save(tree / "mode.txt", "good\n")
            assert w.wait_exit() == 0
        finally:
            w.close()
    finally:
        sb.stop()
    second = w.records()[1]
    assert second["exitCode"] == 0 and second["comparedTo"] is None
    assert "  gate: PASSED (was ERROR at #1) · exit 0" in w.stderr
    assert "  2 item(s), 0 not passing — baseline for the next diff" in w.stderr


def test_files_the_agent_writes_do_not_retrigger_forever(sandbox, tree):
    # the example agent appends to AGENT_LOG on every invocation: a file inside the tree
    w = Watch(sandbox, tree, TWO_ITEMS, AGENT_LOG=str(tree / "agent.log"))
    try:
        w.wait_idle(1)
        text = w.stderr
        # iteration 1 wrote agent.log => one follow-up; iteration 2 wrote it again => the
        # agent's file, ignored from now on
        assert len(headers(text)) == 2
        assert "ignoring during-run changes to agent.log" in text
        save(tree / "app.py", "VERSION = 9\n")  # the user's save still triggers
        w.wait_idle(2)
        assert len(headers(w.stderr)) == 3
        w.proc.send_signal(signal.SIGTERM)
        assert w.wait_exit() == 130
    finally:
        w.close()
    assert w.records()[2]["trigger"] == ["app.py"]


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_signal_during_an_iteration_kills_agents_and_cancels_the_run(sandbox, tree, sig):
    tag = uuid.uuid4().hex
    (tree / "mode.txt").write_text("hang")  # the agent sleeps for an hour inside its span
    w = Watch(sandbox, tree, TWO_ITEMS, tag=tag)
    try:
        w.wait_for(lambda t: "Running 2 item(s)" in t, "the agents to start")
        deadline = time.monotonic() + WAIT
        while not tagged_processes(tag) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert tagged_processes(tag), "the agent process never started"
        w.proc.send_signal(sig)
        assert w.wait_exit(60) == 130
    finally:
        w.close()
    text = w.stderr
    run_id = re.search(r"  created run (\S+)", text).group(1)
    assert sandbox.get(f"/preprod-evals/{run_id}").json()["status"] == "cancelled"
    assert f"cancelled run {run_id}" in text
    assert "Traceback" not in text
    deadline = time.monotonic() + 30
    while tagged_processes(tag) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert tagged_processes(tag) == [], "agent processes survived the interrupt"
    assert w.records() == []  # the interrupted iteration produced no verdict


def test_watch_help_lists_every_shared_flag():
    proc = subprocess.run([PY, "-m", "neens_action", "eval", "watch", "--help"],
                          capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert proc.returncode == 0
    for flag in ("--dataset", "--version-label", "--path", "--include", "--exclude",
                 "--debounce", "--max-iterations", "--once", "--json", "--baseline",
                 "--max-regressions", "--min-pass-rate", "--gate-policy",
                 "--max-cost-delta-pct", "--max-latency-delta-pct", "--min-avg-score",
                 "--max-abs-failures", "--timeout", "--concurrency", "--poll-interval",
                 "--poll-timeout", "--no-gate", "--base-url", "--api-key", "--project-id"):
        assert flag in proc.stdout, flag
