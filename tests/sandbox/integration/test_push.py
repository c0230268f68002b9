"""Push runs (decision 11): the sandbox calls the example HTTP agent per item."""

from __future__ import annotations

import pytest

from tests.helpers import start_http_agent, start_sandbox
from tests.sandbox.integration.support import create, wait_terminal

PUSH = {"dataset_id": "ds_refunds", "runner_mode": "push", "agent_connection_id": "conn_local"}


@pytest.fixture
def http_agent(monkeypatch):
    """A good HTTP agent; the seed's conn_local URL reads NEENS_HTTP_AGENT_PORT."""
    proc, port = start_http_agent()
    monkeypatch.setenv("NEENS_HTTP_AGENT_PORT", str(port))
    yield port
    proc.terminate()
    proc.wait(10)


def _push(sb, body: dict) -> tuple[dict, dict]:
    run = create(sb, {"name": "p", "version_label": "v1", **body})
    assert run["runnerMode"] == "push" and run["agentConnectionId"] == body[
        "agent_connection_id"]
    resp = sb.post(f"/preprod-evals/{run['id']}/run")
    assert resp.status_code == 200, resp.text
    return run, resp.json()


def test_inline_push_run_is_terminal_on_return(http_agent, tmp_path):
    sb = start_sandbox(tmp_path)
    try:
        run, done = _push(sb, PUSH)
        assert done["status"] == "completed"
        assert done["aggregate"]["passed"] == 6 and done["aggregate"]["passRate"] == 1.0
        item = done["items"][0]
        assert "$42.00" in item["output"] and item["model"] == "gpt-4o-mini"
        assert item["costUsd"] > 0 and item["latencyMs"] > 0
        assert sb.post(f"/preprod-evals/{run['id']}/run").status_code == 409  # repeat
        assert sb.post(f"/preprod-evals/{run['id']}/start").status_code == 409
        gate = sb.get(f"/preprod-evals/{run['id']}/gate").json()
        assert gate["passed"] is True
    finally:
        sb.stop()


def test_push_regressions_against_a_branch_baseline(tmp_path, monkeypatch):
    good, good_port = start_http_agent()
    bad, bad_port = start_http_agent("--mode", "bad")
    try:
        monkeypatch.setenv("NEENS_HTTP_AGENT_PORT", str(good_port))
        sb = start_sandbox(tmp_path)
        try:
            _, base = _push(sb, {**PUSH, "branch": "main"})
            assert base["status"] == "completed"
        finally:
            sb.stop()
        monkeypatch.setenv("NEENS_HTTP_AGENT_PORT", str(bad_port))
        sb = start_sandbox(tmp_path, db=sb.db)
        try:
            _, cand = _push(sb, {**PUSH, "baseline": {"kind": "branch", "value": "main"},
                                 "gate": {"max_regressions": 0}})
            assert cand["baseline"]["runId"] == base["id"]
            assert cand["status"] == "completed_with_regressions"
            assert cand["aggregate"]["regressions"] == 3
            gate = sb.get(f"/preprod-evals/{cand['id']}/gate").json()
            assert gate["passed"] is False
        finally:
            sb.stop()
    finally:
        for proc in (good, bad):
            proc.terminate()
            proc.wait(10)


def test_unreachable_endpoint_fails_the_run(sandbox):
    _, done = _push(sandbox, {**PUSH, "agent_connection_id": "conn_down"})
    assert done["status"] == "failed"
    assert all(i["passed"] is None and "unreachable" in i["error"] for i in done["items"])
    assert "no item could be scored" in done["error"]
    gate = sandbox.get(f"/preprod-evals/{done['id']}/gate").json()
    assert gate["passed"] is False
    assert any("the run failed" in r for r in gate["reasons"])


def test_async_push_answers_running_then_finishes(http_agent, tmp_path):
    sb = start_sandbox(tmp_path, extra=["--push-async", "--score-delay", "1"])
    try:
        run, resp = _push(sb, PUSH)
        assert resp["status"] == "running"
        done = wait_terminal(sb, run["id"])
        assert done["status"] == "completed" and done["aggregate"]["passed"] == 6
    finally:
        sb.stop()


def test_text_plain_replies_and_push_with_gates(tmp_path, monkeypatch):
    proc, port = start_http_agent("--text")
    monkeypatch.setenv("NEENS_HTTP_AGENT_PORT", str(port))
    sb = start_sandbox(tmp_path)
    try:
        _, done = _push(sb, {**PUSH, "gates": "active"})
        assert done["status"] == "completed" and done["total"] == 8
        assert all(i["passed"] for i in done["items"])
        # text/plain carries no usage: unpriced, never $0
        assert all(i["costUsd"] is None for i in done["items"])
        assert done["gates"][0]["verdict"] == "pass"
    finally:
        sb.stop()
        proc.terminate()
        proc.wait(10)
