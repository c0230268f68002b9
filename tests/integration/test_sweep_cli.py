"""``neens sweep ...`` as a real process against the real sandbox, with the real example agent
(OpenTelemetry SDK) behind a wrapper that picks good/bad answers by ``$NEENS_EVAL_MODEL``."""

from __future__ import annotations

import json
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from neens_action.agents.correlation import SweepTag, item_env
from tests.helpers import (
    PY,
    ROOT,
    Sandbox,
    alive,
    db_count,
    items_of,
    run_cli,
    start_http_agent,
    start_sandbox,
    wait_for,
)

DATA = ROOT / "tests" / "integration" / "data"
SEED = DATA / "sweep_seed.yaml"
WRAPPER = DATA / "sweep_agent.py"
AGENT_CMD = ["--", PY, str(WRAPPER)]
THREE_ARMS = ["--arm", "big=gpt-4o", "--arm", "small=gpt-4o-mini", "--arm",
              "local=llama-3-local"]


@pytest.fixture
def sb(tmp_path) -> Iterator[Sandbox]:
    sandbox = start_sandbox(tmp_path, seed=SEED)
    yield sandbox
    sandbox.stop()


def create_args(*arms: str, k: int = 1, name: str = "bake-off") -> list[str]:
    return ["sweep", "run", "--create", "--name", name, "--version-label", "v1",
            "--dataset", "ds_sweep", *arms, "--k", str(k), "--poll-interval", "0.5"]


def sweep_run(sb: Sandbox, args: list[str], timeout: float = 300, **env: str):
    return run_cli([*args, *AGENT_CMD], sb.agent_env(**env), timeout=timeout)


def log_lines(path: Path) -> list[list[str]]:
    if not path.exists():
        return []
    return [line.split("\t") for line in path.read_text().splitlines() if line]


def test_three_arm_runner_sweep_names_the_cheapest_clearing_priced_arm(sb, tmp_path):
    log = tmp_path / "agent.log"
    proc = sweep_run(sb, [*create_args(*THREE_ARMS, k=2), "--concurrency", "3", "--json"],
                     SWEEP_BAD_MODELS="gpt-4o", SWEEP_AGENT_LOG=str(log))
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    err = proc.stderr
    assert err.startswith(f"Created sweep {doc['sweepId']} (runner mode)\n")
    assert (f"Sweep {doc['sweepId']} — 3 arm(s): big=gpt-4o, small=gpt-4o-mini, "
            "local=llama-3-local; k=2; version='v1'") in err
    assert "Running 24 agent invocation(s) across 6 run(s) with concurrency=3" in err
    assert "Command finished for 24/24 invocation(s) with rc=0" in err
    assert err.count("— all items executed") == 6

    # the verdict, rendered verbatim from the server
    verdict = doc["verdict"]
    assert verdict["outcome"] == "winner" and verdict["winner"]["label"] == "small"
    assert f"  VERDICT: {verdict['reason']}\n" in err
    assert verdict["reason"].startswith("small clears the 90% bar at $")
    assert verdict["reason"].endswith("% cheaper than big")
    assert "  bar 90.0% (the default bar) | baseline: big | 4 items x k=2\n" in err
    table = err.split("  ARM ", 1)[1].splitlines()
    assert table[0].split() == ["MODEL", "PASS", "RATE", "PASS^K", "COST/CASE", "REGRESSIONS"]
    big, small, local = (line.split() for line in table[1:4])
    assert big[:6] == ["big", "gpt-4o", "50.0%", "(n=4,", "CI", "21.5-78.5%)"]
    assert big[6:8] == ["0/2", "FAIL"] and big[-1] == "0"
    assert small[:3] == ["small", "gpt-4o-mini", "100.0%"] and small[6:8] == ["2/2", "PASS"]
    assert local[-2:] == ["unpriced", "0"] and local[6:8] == ["2/2", "PASS"]
    assert "  excluded from the cost ranking: local (unpriced)\n" in err
    assert "    refund-agent (4 items): small clears the 90% bar" in err

    # the JSON document (spec 10.9) and the order work was done in (rep-major, round-robin)
    assert doc["exitCode"] == 0 and doc["status"] == "completed" and doc["error"] is None
    assert [a["label"] for a in doc["arms"]] == ["big", "small", "local"]
    invs = doc["invocations"]
    assert len(invs) == 24 and all(i["returncode"] == 0 for i in invs)
    order = [(i["rep"], i["itemId"], i["arm"]) for i in invs]
    assert order[:6] == [(1, "s_1", "big"), (1, "s_1", "small"), (1, "s_1", "local"),
                         (1, "s_2", "big"), (1, "s_2", "small"), (1, "s_2", "local")]
    assert [o[0] for o in order] == [1] * 12 + [2] * 12
    # every invocation got its arm's model, rep and child run
    seen = {(row[2], row[3], row[4]) for row in log_lines(log)}
    assert seen == {(arm, rep, model) for arm, model in
                    (("big", "gpt-4o"), ("small", "gpt-4o-mini"), ("local", "llama-3-local"))
                    for rep in ("1", "2")}
    runs = {(a["label"], r["rep"]): r["runId"] for a in doc["sweep"]["arms"] for r in a["runs"]}
    assert {(row[2], int(row[3])): row[1] for row in log_lines(log)} == runs
    # the server agrees: every child run was started and scored
    assert all(r["status"] == "completed" for a in doc["sweep"]["arms"] for r in a["runs"])


def test_no_clearing_arm_exits_1_and_require_winner_exits_1(sb):
    proc = sweep_run(sb, [*create_args("--arm", "a=gpt-4o", "--arm", "b=gpt-4o-mini"),
                          "--json"], SWEEP_BAD_MODELS="gpt-4o,gpt-4o-mini")
    assert proc.returncode == 1, proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["verdict"]["outcome"] == "none_clear"
    assert "  VERDICT: no arm clears the 90% bar (best: a at 50%)" in proc.stderr
    env = sb.agent_env()
    sweep_id = doc["sweepId"]
    decide = run_cli(["sweep", "decide", "--sweep-id", sweep_id], env)
    assert decide.returncode == 0, decide.stderr  # naming no winner is still a decision
    strict = run_cli(["sweep", "decide", "--sweep-id", sweep_id, "--require-winner",
                      "--poll-interval", "0.5"], env)
    assert strict.returncode == 1, strict.stderr
    lenient = run_cli(["sweep", "decide", "--sweep-id", sweep_id, "--bar", "0.5",
                       "--require-winner", "--json"], env)
    assert lenient.returncode == 0, lenient.stderr
    assert json.loads(lenient.stdout)["comparison"]["bar"] == {"passRate": 0.5,
                                                               "source": "query"}
    got = run_cli(["sweep", "get", sweep_id, "--require-all-arms"], env)
    assert got.returncode == 1 and "pass^k 0/1 FAIL (1/1 runs terminal)" in got.stderr


def test_void_sweep_exits_2_before_any_number(tmp_path):
    first = start_sandbox(tmp_path, seed=SEED)
    try:
        resp = first.post("/model-sweeps", json={
            "name": "void", "versionLabel": "v1", "datasetId": "ds_sweep", "passK": 1,
            "arms": [{"label": "a", "model": "gpt-4o", "runnerMode": "runner"},
                     {"label": "b", "model": "gpt-4o-mini", "runnerMode": "runner"}]})
        assert resp.status_code == 201, resp.text
        sweep_id = resp.json()["id"]
    finally:
        first.stop()
    edited = tmp_path / "edited.yaml"  # a judge is edited while the sweep is pending
    edited.write_text(SEED.read_text().replace(
        "{id: j_answer, metric: correctness, kind: contains}",
        "{id: j_answer, metric: correctness, kind: contains, case_sensitive: true}"))
    second = start_sandbox(tmp_path, seed=edited, db=first.db)
    try:
        proc = sweep_run(second, ["sweep", "run", "--sweep-id", sweep_id, "--poll-interval",
                                  "0.5", "--json"])
        assert proc.returncode == 2, proc.stderr
        assert f"Sweep {sweep_id} (void)\n  VOID: the arms did not run under identical " \
               "conditions" in proc.stderr
        assert "judge definitions (j_answer changed" in proc.stderr
        assert "PASS RATE" not in proc.stderr and "VERDICT" not in proc.stderr
        assert proc.stderr.rstrip().splitlines()[-1].startswith(
            f"neens: error: sweep {sweep_id} is void")
        doc = json.loads(proc.stdout)
        assert doc["exitCode"] == 2 and doc["status"] == "void" and doc["voidReason"]
        env = second.agent_env()
        decide = run_cli(["sweep", "decide", "--sweep-id", sweep_id], env)
        assert decide.returncode == 2 and "VOID:" in decide.stderr
        assert "%" not in decide.stderr.split("VOID:", 1)[0]
        assert run_cli(["sweep", "get", sweep_id], env).returncode == 2
    finally:
        second.stop()


def test_budget_refusal_exits_2_with_the_servers_sentence(sb):
    proc = sweep_run(sb, [*create_args(*THREE_ARMS), "--budget-usd", "0.0000001"])
    assert proc.returncode == 2
    last = proc.stderr.strip().splitlines()[-1]
    assert last.startswith("neens: error: Neens refused the request: sweep refused")
    assert last.endswith("; POST /model-sweeps)") and "(HTTP 422" in last
    assert "sweep refused: the estimated cost $" in last
    assert "is above the budget of $0.0000" in last
    assert "Traceback" not in proc.stderr
    assert db_count(sb, "sweeps") == 0
    start = run_cli(["sweep", "start", "--name", "n", "--version-label", "v1", "--dataset",
                     "ds_sweep", "--arm", "a=conn_good", "--budget-usd", "0"], sb.agent_env())
    assert start.returncode == 2 and "sweep refused" in start.stderr


def test_agent_ignoring_the_model_triggers_the_warning(sb):
    proc = sweep_run(sb, create_args("--arm", "a=gpt-4o", "--arm", "b=llama-3-local"),
                     SWEEP_AGENT_MODE="ignore-model")
    assert proc.returncode == 0, proc.stderr
    assert ("  WARNING [arms_same_observed_model]: every arm's traces report the same model "
            "(gpt-4o-mini)") in proc.stderr
    assert "(arms: a, b)" in proc.stderr


def test_every_invocation_failing_cancels_the_sweep(sb):
    proc = sweep_run(sb, [*create_args("--arm", "a=gpt-4o"), "--json"],
                     SWEEP_AGENT_MODE="crash")
    assert proc.returncode == 2
    doc = json.loads(proc.stdout)
    assert "every agent invocation failed (4 of 4)" in doc["error"]
    sweep = sb.get(f"/model-sweeps/{doc['sweepId']}").json()
    assert sweep["status"] == "cancelled"


def test_sigterm_kills_agents_and_cancels_the_sweep_and_its_runs(sb, tmp_path):
    log = tmp_path / "agent.log"
    env = sb.agent_env(SWEEP_AGENT_MODE="slow", AGENT_SLOW_S="120", SWEEP_AGENT_LOG=str(log))
    args = [PY, "-m", "neens_action", *create_args("--arm", "a=gpt-4o", "--arm",
                                                   "b=gpt-4o-mini", k=2),
            "--concurrency", "2", *AGENT_CMD]
    proc = subprocess.Popen(args, env=env, cwd=ROOT, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 120
        while len(log_lines(log)) < 2:  # two agents are running (they sleep 120 s)
            assert proc.poll() is None, proc.stderr.read() if proc.stderr else ""
            assert time.monotonic() < deadline, "the agents never started"
            time.sleep(0.1)
        proc.send_signal(signal.SIGTERM)
        _out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(10)
    assert proc.returncode == 130, err
    sweep_id = err.split("Created sweep ", 1)[1].split()[0]
    assert f"Cancelled sweep {sweep_id}" in err and "neens: interrupted" in err
    for row in log_lines(log):  # no agent outlived the CLI (a zombie awaiting init is dead)
        pid = int(row[0])
        assert wait_for(lambda pid=pid: not alive(pid), 5), f"agent {pid} outlived the CLI"
    sweep = sb.get(f"/model-sweeps/{sweep_id}").json()
    assert sweep["status"] == "cancelled"
    assert {r["status"] for a in sweep["arms"] for r in a["runs"]} == {"cancelled"}


def _drive_by_hand(sb: Sandbox, sweep: dict[str, Any], arm: dict[str, Any],
                   run: dict[str, Any]) -> None:
    for item in items_of(sb, run["runId"]):
        env = item_env(run_id=run["runId"], item_id=item["item_id"], version_label="v1",
                       item_input=item["input"], base=sb.agent_env(),
                       sweep=SweepTag(sweep["id"], arm["label"], run["rep"], arm["model"]))
        done = subprocess.run([PY, str(WRAPPER)], input=item["input"], env=env,
                              capture_output=True, text=True, timeout=90)
        assert done.returncode == 0, done.stderr[-2000:]
    assert sb.post(f"/preprod-evals/{run['runId']}/start").status_code == 200


def test_resume_with_sweep_id_runs_only_what_was_left(sb, tmp_path):
    resp = sb.post("/model-sweeps", json={
        "name": "resume", "versionLabel": "v1", "datasetId": "ds_sweep", "passK": 2,
        "arms": [{"label": "a", "model": "gpt-4o", "runnerMode": "runner"},
                 {"label": "b", "model": "gpt-4o-mini", "runnerMode": "runner"}]})
    assert resp.status_code == 201, resp.text
    sweep = resp.json()
    first_arm = sweep["arms"][0]
    done_run = first_arm["runs"][0]
    _drive_by_hand(sb, sweep, first_arm, done_run)  # as if a first `sweep run` got that far
    log = tmp_path / "agent.log"
    proc = sweep_run(sb, ["sweep", "run", "--sweep-id", sweep["id"], "--poll-interval", "0.5",
                          "--json"], SWEEP_AGENT_LOG=str(log))
    assert proc.returncode == 0, proc.stderr
    assert f"Attaching to sweep {sweep['id']}" in proc.stderr
    assert "resuming: 1 run(s) already past awaiting_traces are not re-run" in proc.stderr
    ran = {row[1] for row in log_lines(log)}
    expected = {r["runId"] for a in sweep["arms"] for r in a["runs"]} - {done_run["runId"]}
    assert ran == expected and len(log_lines(log)) == 3 * 4
    doc = json.loads(proc.stdout)
    assert len(doc["invocations"]) == 12
    assert all(a["passed"] is True for a in doc["arms"])


def test_push_sweep_start_wait_get_and_decide(tmp_path, monkeypatch):
    good, good_port = start_http_agent("--mode", "good")
    bad, bad_port = start_http_agent("--mode", "bad")
    monkeypatch.setenv("SWEEP_GOOD_PORT", str(good_port))
    monkeypatch.setenv("SWEEP_BAD_PORT", str(bad_port))
    sandbox = start_sandbox(tmp_path, seed=SEED)
    try:
        env = sandbox.agent_env()
        base = ["sweep", "start", "--name", "push", "--version-label", "v1", "--dataset",
                "ds_sweep", "--arm", "good=conn_good", "--arm", "bad=conn_bad", "--k", "1",
                "--poll-interval", "0.5"]
        started = run_cli([*base, "--wait", "--json"], env)
        assert started.returncode == 0, started.stderr
        doc = json.loads(started.stdout)
        assert "(2 arms x k=1)" in started.stderr and doc["status"] == "completed"
        assert "  good: gpt-4o-mini — completed pass^k 1/1 PASS (1/1 runs terminal)" in (
            started.stderr)
        assert "  bad: gpt-4o — completed pass^k 0/1 FAIL (1/1 runs terminal)" in started.stderr
        assert doc["estimate"]["totalRuns"] == 2
        strict = run_cli([*base, "--require-all-arms"], env)
        assert strict.returncode == 1, strict.stderr
        nowait = run_cli(base, env)
        assert nowait.returncode == 0 and "neens sweep get msw-" in nowait.stderr
        decide = run_cli(["sweep", "decide", "--sweep-id", doc["sweepId"]], env)
        assert decide.returncode == 0 and "VERDICT: good clears the 90% bar" in decide.stderr
        refused = run_cli(["sweep", "run", "--sweep-id", doc["sweepId"], *AGENT_CMD], env)
        assert refused.returncode == 2 and "is a push sweep" in refused.stderr
    finally:
        sandbox.stop()
        for proc in (good, bad):
            proc.terminate()
            proc.wait(10)


@pytest.mark.parametrize("args,needle", [
    (["sweep", "run", "--create", "--name", "n", "--version-label", "v", "--dataset", "d",
      "--arm", "a=m"], "no agent command"),
    (["sweep", "run", "--sweep-id", "x", "--create", "--", "true"], "exactly one of"),
    (["sweep", "run", "--sweep-id", "x", "--arm", "a=m", "--", "true"], "only apply with"),
    (["sweep", "run", "--sweep-id", "x", "--concurrency", "0", "--", "true"], "--concurrency"),
    (["sweep", "run", "--sweep-id", "x", "--poll-interval", "0", "--", "true"],
     "--poll-interval"),
    (["sweep", "run", "--sweep-id", "x", "--bar", "2", "--", "true"], "--bar"),
    (["sweep", "run", "--create", "--name", "n", "--version-label", "v", "--dataset", "d",
      "--arm", "a=m", "--arm", "b=m", "--", "true"], "one model"),
    (["sweep", "start", "--version-label", "v", "--dataset", "d", "--arm", "a=c"], "--name"),
    (["sweep", "start", "--name", "n", "--version-label", "v", "--arm", "a=c"],
     "no sweep target"),
    (["sweep", "get"], "needs a sweep id"),
    (["sweep", "decide"], "needs a sweep id"),
    (["sweep", "preview", "--dataset", "d"], "no arms"),
])
def test_usage_errors_are_one_line_exit_2(sb, args, needle):
    proc = run_cli(args, sb.agent_env())
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("neens: error:") and needle in lines[0]
    assert sb.api_key not in proc.stderr + proc.stdout
