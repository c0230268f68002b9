"""``neens eval run`` as a real process against the real sandbox with the example agent."""

from __future__ import annotations

import json
import signal
import subprocess
from pathlib import Path

from tests.helpers import (
    AGENT,
    PY,
    ROOT,
    TEST_KEY,
    Sandbox,
    alive,
    run_cli,
    start_sandbox,
    wait_for,
)

AGENT_CMD = [PY, str(AGENT)]
CREATE = ["eval", "run", "--create", "--dataset", "ds_refunds", "--concurrency", "3"]


def cli(sandbox: Sandbox, args: list[str], *, env: dict | None = None, timeout: float = 180,
        **extra_env: str) -> subprocess.CompletedProcess:
    """Run the CLI; every run asserts the API key never shows and nothing crashed."""
    proc = run_cli(args, env or sandbox.agent_env(**extra_env), timeout=timeout)
    for stream in (proc.stdout, proc.stderr):
        assert TEST_KEY not in stream
        assert "Traceback" not in stream
    return proc


def error_lines(proc: subprocess.CompletedProcess) -> list[str]:
    return [line for line in proc.stderr.splitlines() if line.startswith("neens: error:")]


def created_run_id(stderr: str) -> str:
    for line in stderr.splitlines():
        if line.startswith("Created run "):
            return line.split()[2]
    raise AssertionError(f"no 'Created run' line in:\n{stderr}")






def test_passing_run_exits_0_with_json_and_reports_the_verdict(sandbox, tmp_path):
    junit = tmp_path / "junit.xml"
    proc = cli(sandbox, [*CREATE, "--version-label", "good-1", "--branch", "main",
                         "--max-regressions", "0", "--min-pass-rate", "0.9", "--json",
                         "--junit", str(junit), "--", *AGENT_CMD])
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)  # stdout holds the JSON document and nothing else
    assert doc["format"] == 2 and doc["exitCode"] == 0 and doc["verdict"] == "passed"
    assert doc["gatePassed"] is True and doc["error"] is None
    assert doc["buildVerdict"] == {"verdict": "passed", "reported": True}
    assert len(doc["items"]) == 6 and all(i["returncode"] == 0 for i in doc["items"])
    assert doc["run"]["status"] == "completed"
    assert "  gate:        PASSED" in proc.stderr
    assert f"Created run {doc['runId']}" in proc.stderr
    run = sandbox.get(f"/preprod-evals/{doc['runId']}").json()
    assert run["buildVerdict"] == "passed"
    assert run["versionLabel"] == "good-1" and run["branch"] == "main"
    xml = junit.read_text()
    assert xml.startswith("<?xml") and xml.count("<testcase") == 6 and "<failure" not in xml


def test_regression_against_branch_main_exits_1_and_no_gate_exits_0(sandbox, tmp_path):
    good = cli(sandbox, [*CREATE, "--version-label", "main-1", "--branch", "main", "--",
                         *AGENT_CMD])
    assert good.returncode == 0, good.stderr
    base_id = created_run_id(good.stderr)

    bad_args = [*CREATE, "--version-label", "feat-1", "--branch", "feat",
                "--baseline", "branch:main", "--max-regressions", "0", "--", *AGENT_CMD]
    bad = cli(sandbox, bad_args, AGENT_MODE="bad")  # console only: items folded as they stream
    assert bad.returncode == 1, bad.stderr
    assert "  items not passing (3 of 6):" in bad.stderr
    assert f"Baseline: run {base_id} — branch:main" in bad.stderr
    assert "  regressions: 3" in bad.stderr
    assert "  gate:        FAILED" in bad.stderr
    assert "    - regressions 3 > 0" in bad.stderr
    regressed = [line for line in bad.stderr.splitlines()
                 if line.startswith("    ✗ ") and "  regressed  " in line]
    assert len(regressed) == 3
    assert "  verdict:     blocked (exit 1)" in bad.stderr
    run = sandbox.get(f"/preprod-evals/{created_run_id(bad.stderr)}").json()
    assert run["buildVerdict"] == "blocked"

    junit = tmp_path / "bad.xml"  # without --json: JUnit alone still gets every item
    waived = cli(sandbox, [*bad_args[:-len(AGENT_CMD) - 1], "--no-gate", "--junit", str(junit),
                           "--", *AGENT_CMD], AGENT_MODE="bad")
    assert waived.returncode == 0, waived.stderr
    xml = junit.read_text()
    assert xml.count("<testcase") == 6 and xml.count("<failure") == 3
    assert "  gate:        FAILED  (--no-gate: not enforced)" in waived.stderr
    run = sandbox.get(f"/preprod-evals/{created_run_id(waived.stderr)}").json()
    assert run["buildVerdict"] == "warned"


def _states(doc: dict) -> dict[str, str]:
    """Item id -> the evidence state of every item that did not pass."""
    return {i["item_id"]: i["status"] for i in doc["report"]["items"] if i["state"] != "pass"}


def test_evidence_tells_regressed_from_failing_as_before_without_a_policy(sandbox):
    """No policy, no max-regressions: the comparison is still fetched when an item fails,
    so failing items read regressed / failing as before / new (no baseline verdict); the ui-url
    flag links each run and item."""
    ui = "https://app.example/runs/{run_id}?item={item_id}"
    first = cli(sandbox, [*CREATE, "--version-label", "main-bad", "--branch", "main", "--json",
                          "--baseline", "branch:none-yet", "--ui-url", ui, "--", *AGENT_CMD],
                AGENT_MODE="bad")
    assert first.returncode == 0, first.stderr
    doc = json.loads(first.stdout)
    # compared with the production window, which has no verdict for the failing items
    assert sorted(_states(doc).values()) == ["new"] * 3
    run_id = doc["runId"]
    assert doc["report"]["run_url"] == f"https://app.example/runs/{run_id}"
    links = [i["link"] for i in doc["report"]["items"]]
    assert links == [f"https://app.example/runs/{run_id}?item={i['item_id']}"
                     for i in doc["report"]["items"]]

    again = cli(sandbox, [*CREATE, "--version-label", "feat-bad", "--branch", "feat",
                          "--baseline", "branch:main", "--json", "--", *AGENT_CMD],
                AGENT_MODE="bad")
    assert again.returncode == 0, again.stderr
    doc = json.loads(again.stdout)
    assert "neens: warning" not in again.stderr
    assert sorted(_states(doc).values()) == ["failing"] * 3  # as before, not "new"
    # per judge, beside the baseline run's own rollup (GET /preprod-evals/{main}/metrics)
    judges = doc["report"]["judges"]
    assert judges and all(j["baseline_pass_rate"] is not None for j in judges), judges
    assert doc["report"]["run_url"] == ""  # no ui-url: no run link (the API path is JSON)

    leaky = cli(sandbox, [*CREATE, "--version-label", "feat-leaky", "--branch", "feat",
                          "--baseline", "branch:main", "--json", "--", *AGENT_CMD],
                AGENT_MODE="leaky", NEENS_UI_URL=ui)
    doc = json.loads(leaky.stdout)
    states = _states(doc)
    failing_before = {k for k, v in _states(json.loads(first.stdout)).items()}
    assert {k for k, v in states.items() if v == "failing"} == failing_before
    assert {k for k, v in states.items() if v == "regressed"} == set(states) - failing_before
    assert len(states) == 6 and doc["report"]["run_url"].startswith("https://app.example/")
    # at a glance: every failing item in one group, each regression failed by some judge
    groups = doc["report"]["groups"]
    assert sorted(k for g in groups for k in g["items"]) == sorted(states)
    regressed = sum(1 for v in states.values() if v == "regressed")
    assert sum(j["regressed"] for j in doc["report"]["judges"]) >= regressed > 0


def test_existing_run_id_and_eval_gates(sandbox):
    created = sandbox.post("/preprod-evals", json={"name": "pre", "version_label": "pre-1",
                                                   "dataset_id": "ds_refunds"})
    assert created.status_code in (200, 201), created.text
    run_id = created.json()["id"]
    proc = cli(sandbox, ["eval", "run", "--run-id", run_id, "--", *AGENT_CMD])
    assert proc.returncode == 0, proc.stderr
    assert "(version='pre-1')" in proc.stderr  # label read from the run

    gates = cli(sandbox, ["eval", "run", "--gates", "active", "--git-sha", "abcdef1234567",
                          "--concurrency", "2", "--", *AGENT_CMD], AGENT_MODE="bad")
    assert gates.returncode == 1, gates.stderr
    assert "Enforcing 1 eval gate(s): FM: Wrong refund amount" in gates.stderr
    assert "(version='abcdef123456')" in gates.stderr
    assert "    FM: Wrong refund amount  yes       0%         70%        2/2     FAIL" \
        in gates.stderr


def test_bad_key_exits_2_with_one_line(sandbox):
    env = sandbox.agent_env(NEENS_API_KEY="nk_live_not_the_key")
    proc = cli(sandbox, [*CREATE, "--version-label", "x", "--", *AGENT_CMD], env=env)
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines() == error_lines(proc)
    assert len(error_lines(proc)) == 1 and "HTTP 401" in proc.stderr
    assert "nk_live_not_the_key" not in proc.stderr


def test_unknown_dataset_exits_2_with_one_line(sandbox):
    proc = cli(sandbox, ["eval", "run", "--create", "--dataset", "ds_missing",
                         "--version-label", "x", "--json", "--", *AGENT_CMD])
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines() == error_lines(proc)
    assert "HTTP 404" in proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["exitCode"] == 2 and doc["runId"] == "" and "404" in doc["error"]


def test_unreachable_server_exits_2_with_one_line(sandbox):
    env = sandbox.agent_env(NEENS_BASE_URL="http://127.0.0.1:9")
    proc = cli(sandbox, [*CREATE, "--version-label", "x", "--", *AGENT_CMD], env=env)
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines() == error_lines(proc)
    assert "connection refused" in proc.stderr


def test_empty_dataset_exits_2(sandbox):
    proc = cli(sandbox, ["eval", "run", "--create", "--dataset", "ds_empty",
                         "--version-label", "x", "--", *AGENT_CMD])
    assert proc.returncode == 2
    assert len(error_lines(proc)) == 1 and "no items" in proc.stderr


def test_usage_errors_exit_2_with_one_line(sandbox):
    for args in (["eval", "run", "--create", "--dataset", "ds_refunds", "--", *AGENT_CMD],
                 ["eval", "run", "--run-id", "r", "--concurrency", "0", "--", *AGENT_CMD],
                 ["eval", "run", "--run-id", "r"],
                 ["eval", "run", "--run-id", "r", "--baseline", "nope", "--", *AGENT_CMD]):
        proc = cli(sandbox, args)
        assert proc.returncode == 2, (args, proc.stderr)
        assert len(proc.stderr.strip().splitlines()) == 1, proc.stderr


def test_poll_timeout_exits_2(tmp_path):
    slow = start_sandbox(tmp_path, extra=["--score-delay", "60"])
    try:
        proc = cli(slow, [*CREATE, "--version-label", "x", "--poll-timeout", "1",
                          "--poll-interval", "0.5", "--", *AGENT_CMD])
        assert proc.returncode == 2, proc.stderr
        assert len(error_lines(proc)) == 1
        assert "did not finish within 1s" in proc.stderr
    finally:
        slow.stop()


def write_hanging_agent(tmp_path: Path, hang_item: str | None) -> Path:
    """A wrapper: for ``hang_item`` (or every item when None) it starts two children and
    hangs; other items run the example agent. Every process id goes to pids.txt."""
    pids = tmp_path / "pids.txt"
    script = tmp_path / "agent.sh"
    cond = f'[ "$NEENS_DATASET_ITEM_ID" = "{hang_item}" ]' if hang_item else "true"
    script.write_text(
        "#!/bin/sh\n"
        f"if {cond}; then\n"
        f"  sleep 600 & echo $! >> {pids}\n"
        f"  sh -c 'sleep 600 & echo $! >> {pids}; wait' & echo $! >> {pids}\n"
        f"  echo $$ >> {pids}\n"
        "  wait\n"
        "else\n"
        f"  exec {PY} {AGENT}\n"
        "fi\n"
    )
    script.chmod(0o755)
    return script


def test_hanging_agent_is_killed_with_its_children_and_the_run_finishes(sandbox, tmp_path):
    script = write_hanging_agent(tmp_path, "it_3")
    proc = cli(sandbox, [*CREATE, "--version-label", "hang-1", "--timeout", "3", "--json",
                         "--", str(script)])
    doc = json.loads(proc.stdout)
    assert proc.returncode in (0, 1), proc.stderr
    assert doc["run"]["status"] in ("completed", "completed_with_regressions")
    hung = next(i for i in doc["items"] if i["itemId"] == "it_3")
    assert hung["timedOut"] is True and hung["error"] == "timed out after 3s"
    assert hung["state"] == "unscored"
    assert "[it_3] timed out after 3s" in proc.stderr
    pids = [int(p) for p in (tmp_path / "pids.txt").read_text().split()]
    assert len(pids) == 4
    assert wait_for(lambda: not any(alive(p) for p in pids), 20), \
        [p for p in pids if alive(p)]


def test_sigterm_mid_run_exits_130_kills_agents_and_cancels_the_run(sandbox, tmp_path):
    script = write_hanging_agent(tmp_path, None)
    pids_file = tmp_path / "pids.txt"
    proc = subprocess.Popen(
        [PY, "-m", "neens_action", *CREATE, "--version-label", "term-1", "--concurrency", "2",
         "--", str(script)],
        env=sandbox.agent_env(), cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        text=True,
    )
    try:
        # two agents (4 pids each) are running
        assert wait_for(lambda: pids_file.exists() and len(pids_file.read_text().split()) >= 8,
                        60)
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, err
    assert TEST_KEY not in out + err and "Traceback" not in err
    run_id = created_run_id(err)
    assert f"cancelled run {run_id}" in err
    pids = [int(p) for p in pids_file.read_text().split()]
    assert wait_for(lambda: not any(alive(p) for p in pids), 20), \
        [p for p in pids if alive(p)]
    run = sandbox.get(f"/preprod-evals/{run_id}").json()
    assert run["status"] == "cancelled"
    assert run["buildVerdict"] == "errored"


def test_sigterm_on_an_existing_run_leaves_it_and_prints_resume(sandbox, tmp_path):
    run_id = sandbox.post("/preprod-evals", json={"name": "r", "version_label": "r-1",
                                                  "dataset_id": "ds_refunds"}).json()["id"]
    script = write_hanging_agent(tmp_path, None)
    pids_file = tmp_path / "pids.txt"
    proc = subprocess.Popen(
        [PY, "-m", "neens_action", "eval", "run", "--run-id", run_id, "--", str(script)],
        env=sandbox.agent_env(), cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert wait_for(lambda: pids_file.exists() and len(pids_file.read_text().split()) >= 4,
                        60)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, err
    assert f"resume it with: neens eval run --run-id {run_id} -- {script}" in err
    assert sandbox.get(f"/preprod-evals/{run_id}").json()["status"] == "awaiting_traces"
    pids = [int(p) for p in pids_file.read_text().split()]
    assert wait_for(lambda: not any(alive(p) for p in pids), 20)


def test_otlp_warning_when_agent_env_has_no_endpoint(sandbox):
    env = {k: v for k, v in sandbox.agent_env().items() if not k.startswith("OTEL_EXPORTER")}
    proc = cli(sandbox, [*CREATE, "--version-label", "no-otel", "--timeout", "30", "--",
                         *AGENT_CMD], env=env)
    assert f"set OTEL_EXPORTER_OTLP_ENDPOINT={sandbox.url}" in proc.stderr
    assert proc.stderr.index("no OTLP endpoint") < proc.stderr.index("item ")
    # no trace reached Neens: nothing was scored, and measuring nothing is never a pass
    assert proc.returncode == 2, proc.stderr  # nothing scored: a run error, never a pass
    assert "  scored:      0/6" in proc.stderr
