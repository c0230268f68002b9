"""``neens stress run`` end to end: the CLI, the real sandbox, the fake LLM server and the
example agents (OpenTelemetry SDK pull agent; HTTP agent for push) as real processes."""

from __future__ import annotations

import json
import signal
import subprocess
import time
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
import yaml

from tests.fakes import llm_server
from tests.helpers import AGENT, PY, ROOT, TEST_KEY, Sandbox, run_cli, start_sandbox

BASE_SEED = ROOT / "tests" / "integration" / "data" / "stress_seed.yaml"
HTTP_AGENT = ROOT / "examples" / "http_agent" / "server.py"
STRATEGIES = ["replay", "paraphrase", "escalate", "boundary"]
AGENT_CMD = ["--", PY, str(AGENT)]


def write_seed(tmp: Path, *, llm: dict | None = None, connections: list | None = None) -> Path:
    data = yaml.safe_load(BASE_SEED.read_text())
    if llm is not None:
        data["llm"] = llm
    if connections is not None:
        data["connections"] = connections
    path = tmp / f"seed-{time.monotonic_ns()}.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


def start_http_agent(mode: str) -> tuple[subprocess.Popen, str]:
    proc = subprocess.Popen([PY, str(HTTP_AGENT), "--port", "0", "--mode", mode],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                            cwd=ROOT)
    assert proc.stdout is not None
    line = proc.stdout.readline()
    assert line.startswith("http agent listening on "), line
    return proc, line.split("listening on ", 1)[1].strip()


def stop(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(5)


def by_label(rows: list[dict]) -> dict[str, dict]:
    return {r["label"]: r for r in rows}


def clean_output(res: subprocess.CompletedProcess) -> None:
    assert "Traceback" not in res.stderr
    assert TEST_KEY not in res.stdout and TEST_KEY not in res.stderr


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    """Fake LLM + a good and a bad HTTP agent + one sandbox seeded with all of them."""
    tmp = tmp_path_factory.mktemp("stress_run")
    fake = llm_server.start(tmp)
    good, good_url = start_http_agent("good")
    bad, bad_url = start_http_agent("bad")
    seed = write_seed(tmp, llm={"base_url": fake.url, "model": "m"}, connections=[
        {"id": "conn_good", "url": good_url + "/answer", "model": "gpt-4o-mini"},
        {"id": "conn_bad", "url": bad_url + "/answer", "model": "gpt-4o-mini"},
    ])
    sb = start_sandbox(tmp, seed=seed)
    yield sb
    sb.stop()
    for proc in (good, bad):
        stop(proc)
    fake.stop()


def stress_run(sb: Sandbox, args: list[str], *, mode: str = "good",
               timeout: float = 240) -> subprocess.CompletedProcess:
    env = sb.agent_env(AGENT_MODE=mode)
    return run_cli(["stress", "run", "--poll-interval", "1", "--concurrency", "4", *args],
                   env, timeout=timeout)


ATTACK = ["--failure-mode", "fm_refund", "--failure-mode", "fm_leak", "--per-mode", "3",
          "--version-label", "cand", "--min-pass-rate", "0.9"]


def test_stress_run_passes_for_a_good_agent(world: Sandbox) -> None:
    res = stress_run(world, [*ATTACK, "--json", *AGENT_CMD])
    clean_output(res)
    assert res.returncode == 0, res.stderr
    doc = json.loads(res.stdout)
    assert doc["mode"] == "stress" and doc["exitCode"] == 0 and doc["verdict"] == "passed"
    assert doc["gatePassed"] is True
    suite = doc["suite"]
    assert suite["status"] == "ready" and suite["scenarioCount"] == 9
    assert suite["failureModes"] == ["Wrong refund amount (fm_refund)",
                                     "Leaks internal notes (fm_leak)"]
    strategies = by_label(doc["stress"]["byStrategy"])
    assert list(strategies) == STRATEGIES
    assert all(r["passRate"] == 1.0 for r in strategies.values())
    modes = by_label(doc["stress"]["byFailureMode"])
    assert modes["Wrong refund amount (fm_refund)"]["scenarios"] == 5
    assert modes["Leaks internal notes (fm_leak)"]["scenarios"] == 4
    assert {i["strategy"] for i in doc["items"]} == set(STRATEGIES)
    assert all(i["state"] == "pass" and i["returncode"] == 0 for i in doc["items"])
    assert doc["buildVerdict"] == {"verdict": "passed", "reported": True}
    assert "Created scenario suite" in res.stderr
    assert "Launched scenario suite" in res.stderr
    assert "Pass rate per failure mode" in res.stderr
    assert "Pass rate per strategy" in res.stderr
    run = world.get(f"/preprod-evals/{doc['runId']}").json()
    assert run["extra"]["scenarioSuiteId"] == suite["id"]
    assert run["ciResult"]["verdict"] == "passed"


def test_stress_run_fails_for_an_agent_that_shows_the_failure_mode(world: Sandbox,
                                                                  tmp_path: Path) -> None:
    junit = tmp_path / "stress.xml"
    res = stress_run(world, [*ATTACK, "--json", "--junit", str(junit), *AGENT_CMD], mode="bad")
    clean_output(res)
    assert res.returncode == 1, res.stderr
    doc = json.loads(res.stdout)
    assert doc["verdict"] == "blocked" and doc["gatePassed"] is False
    modes = by_label(doc["stress"]["byFailureMode"])
    # the bad agent gets odd order numbers wrong: order 9 fails, order 12 passes
    assert modes["Wrong refund amount (fm_refund)"]["passRate"] < 1.0
    assert modes["Leaks internal notes (fm_leak)"]["passRate"] == 1.0
    failed = [i for i in doc["items"] if i["state"] == "fail"]
    assert failed and {i["failureMode"] for i in failed} == {"Wrong refund amount (fm_refund)"}
    assert {i["strategy"] for i in failed} == set(STRATEGIES)  # every strategy caught it
    assert "pass rate" in res.stderr and "verdict:     blocked (exit 1)" in res.stderr
    suites = {s.get("name"): s for s in ET.parse(junit).getroot().iter("testsuite")}
    assert "Wrong refund amount (fm_refund)" in suites
    assert int(suites["Wrong refund amount (fm_refund)"].get("failures")) == len(failed)
    run = world.get(f"/preprod-evals/{doc['runId']}").json()
    assert run["ciResult"]["verdict"] == "blocked"


def test_each_scenario_is_judged_by_its_own_failure_mode(world: Sandbox) -> None:
    """A leaky agent fails only the leak scenarios (j_safe), never the refund ones (j_answer)."""
    res = stress_run(world, [*ATTACK, "--json", *AGENT_CMD], mode="leaky")
    clean_output(res)
    assert res.returncode == 1, res.stderr
    modes = by_label(json.loads(res.stdout)["stress"]["byFailureMode"])
    assert modes["Wrong refund amount (fm_refund)"]["passRate"] == 1.0
    assert modes["Leaks internal notes (fm_leak)"]["passRate"] == 0.0


def test_no_gate_waives_a_failed_gate(world: Sandbox) -> None:
    res = stress_run(world, [*ATTACK, "--no-gate", *AGENT_CMD], mode="bad")
    clean_output(res)
    assert res.returncode == 0, res.stderr
    assert "--no-gate" in res.stderr


def test_push_mode_reuses_a_suite_and_gates(world: Sandbox) -> None:
    env = world.agent_env()
    suite_id = run_cli(["stress", "generate", "push suite", "--failure-mode", "fm_refund",
                        "--per-mode", "3", "--wait", "--poll-interval", "0.5"],
                       env).stdout.strip()
    assert suite_id.startswith("sts_")
    common = ["--suite-id", suite_id, "--version-label", "push-1", "--min-pass-rate", "0.9",
              "--json"]
    good = stress_run(world, [*common, "--agent-connection", "conn_good"])
    clean_output(good)
    assert good.returncode == 0, good.stderr
    doc = json.loads(good.stdout)
    assert doc["suite"]["id"] == suite_id and doc["run"]["runnerMode"] == "push"
    assert {i["strategy"] for i in doc["items"]} == set(STRATEGIES)
    assert "Created scenario suite" not in good.stderr  # reused, not generated
    bad = stress_run(world, [*common, "--agent-connection", "conn_bad"])
    clean_output(bad)
    assert bad.returncode == 1, bad.stderr
    assert json.loads(bad.stdout)["run"]["datasetVersionId"] == doc["run"]["datasetVersionId"]


@pytest.fixture(scope="module")
def no_llm(tmp_path_factory) -> Sandbox:
    tmp = tmp_path_factory.mktemp("no_llm")
    sb = start_sandbox(tmp, seed=write_seed(tmp))
    yield sb
    sb.stop()


def test_replay_only_stress_run_works_without_any_llm(no_llm: Sandbox) -> None:
    res = stress_run(no_llm, ["--failure-mode", "fm_refund", "--failure-mode", "fm_leak",
                              "--version-label", "v", "--json", *AGENT_CMD])
    clean_output(res)
    assert res.returncode == 0, res.stderr
    doc = json.loads(res.stdout)
    assert list(by_label(doc["stress"]["byStrategy"])) == ["replay"]
    assert len(doc["suite"]["skippedStrategies"]) == 3
    assert "strategy paraphrase skipped: no LLM connection is configured" in res.stderr


def test_failed_generation_exits_2_with_the_servers_reason(no_llm: Sandbox) -> None:
    res = stress_run(no_llm, ["--failure-mode", "fm_empty", "--version-label", "v", "--json",
                              *AGENT_CMD])
    clean_output(res)
    assert res.returncode == 2, res.stderr
    errors = [ln for ln in res.stderr.splitlines() if ln.startswith("neens: error:")]
    assert len(errors) == 1
    assert "scenario generation failed" in errors[0]
    assert "no scenario could be generated" in errors[0]
    doc = json.loads(res.stdout)
    assert doc["exitCode"] == 2 and doc["runId"] == ""
    assert doc["suite"]["status"] == "failed"


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["--version-label", "v", *AGENT_CMD], "nothing to attack"),
        (["--failure-mode", "fm_refund", "--version-label", "v"], "no agent"),
        (["--failure-mode", "fm_refund", "--version-label", "v", "--agent-connection", "c",
          *AGENT_CMD], "exclude each other"),
        (["--suite-id", "sts_x", "--failure-mode", "fm_refund", "--version-label", "v",
          *AGENT_CMD], "--suite-id reuses a generated suite"),
        (["--failure-mode", "fm_refund", "--version-label", "v", "--per-mode", "99",
          *AGENT_CMD], "--per-mode must be from 1 to 25"),
        (["--failure-mode", "fm_refund", "--version-label", "v", "--strategy", "nope",
          *AGENT_CMD], "is not a strategy"),
        (["--failure-mode", "fm_refund", *AGENT_CMD], "needs --version-label"),
        (["--failure-mode", "fm_refund", "--version-label", "v", "--ready-timeout", "0",
          *AGENT_CMD], "--ready-timeout must be greater than 0"),
        (["--failure-mode", "fm_refund", "--version-label", "v", "--min-pass-rate", "2",
          *AGENT_CMD], "--min-pass-rate must be at most 1"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(no_llm: Sandbox, args: list[str],
                                          needle: str) -> None:
    res = stress_run(no_llm, args)
    clean_output(res)
    assert res.returncode == 2, res.stderr
    errors = [ln for ln in res.stderr.splitlines() if ln.startswith("neens: error:")]
    assert len(errors) == 1 and needle in errors[0], res.stderr
    assert "Created scenario suite" not in res.stderr  # refused before any request


def test_sigterm_kills_the_agents_and_cancels_the_run(no_llm: Sandbox, tmp_path: Path) -> None:
    env = no_llm.agent_env(AGENT_MODE="hang")
    proc = subprocess.Popen(
        [PY, "-m", "neens_action", "stress", "run", "--failure-mode", "fm_refund",
         "--version-label", "v", "--json", "--timeout", "120", *AGENT_CMD],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT)
    assert proc.stderr is not None
    lines = []
    for line in proc.stderr:
        lines.append(line)
        if line.startswith("Running "):
            break
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, "".join(lines) + err
    doc = json.loads(out)
    run = no_llm.get(f"/preprod-evals/{doc['runId']}").json()
    assert run["status"] == "cancelled"
    assert TEST_KEY not in out + err
