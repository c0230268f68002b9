"""Honest reports through the real sandbox and real agent processes: timed-out agents are
agent failures (never regressions) on every surface, a pass whose pass rate collapsed
against a baseline that fell back reads ⚠️, and the first run on main says it becomes the
baseline."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from tests.helpers import AGENT, PY, ROOT, TEST_KEY, Sandbox, run_cli, start_sandbox

SEED = ROOT / "tests" / "integration" / "data" / "eleven_seed.yaml"


def cli(sandbox: Sandbox, args: list[str], **env: str) -> subprocess.CompletedProcess:
    environ = sandbox.agent_env(**env)
    environ.pop("PYTHONUNBUFFERED")  # as on a CI runner: the agents' stdout is buffered
    proc = run_cli(args, environ, timeout=240)
    for stream in (proc.stdout, proc.stderr):
        assert TEST_KEY not in stream and "Traceback" not in stream
    return proc


def rendered(sandbox: Sandbox, result: Path, fmt: str) -> str:
    """A surface of a saved result, as ``neens report`` renders it (no-break spaces read
    as spaces)."""
    proc = cli(sandbox, ["report", str(result), "--format", fmt])
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.replace("\u00a0", " ")


def hanging_agent(tmp_path: Path, items: tuple[str, ...], quiet: str) -> Path:
    """For ``items``: say something on stderr, then run the example agent in ``hang`` mode
    (it exports its tool span, then hangs in its model call); for ``quiet``: a Python agent
    that prints a line to stdout (buffered, unless PYTHONUNBUFFERED) and hangs; the others
    answer."""
    script = tmp_path / "agent.sh"
    cond = " || ".join(f'[ "$NEENS_DATASET_ITEM_ID" = "{i}" ]' for i in items)
    printer = ("import os, time; print('agent: calling the model for', "
               "os.environ['NEENS_DATASET_ITEM_ID']); time.sleep(600)")
    script.write_text(
        "#!/bin/sh\n"
        f"if {cond}; then\n"
        '  echo "agent: calling the model for $NEENS_DATASET_ITEM_ID" >&2\n'
        f"  AGENT_MODE=hang exec {PY} {AGENT}\n"
        "fi\n"
        f'if [ "$NEENS_DATASET_ITEM_ID" = "{quiet}" ]; then\n'
        f'  exec {PY} -c "{printer}"\n'
        "fi\n"
        f"exec {PY} {AGENT}\n")
    script.chmod(0o755)
    return script


def test_timed_out_agents_are_agent_failures_on_every_surface(sandbox, tmp_path):
    create = ["eval", "run", "--create", "--dataset", "ds_refunds", "--concurrency", "3"]
    first = cli(sandbox, [*create, "--version-label", "main-1", "--branch", "main",
                          "--baseline", "branch:main", "--", PY, str(AGENT)])
    assert first.returncode == 0, first.stderr
    # the first run on main: no baseline yet, it becomes the baseline (not "production")
    assert ("  baseline:    no baseline yet: this run becomes the baseline for branch main\n"
            in first.stderr)

    hung = ("it_1", "it_2", "it_3")  # it_3: a quiet Python agent (stdout only, no trace)
    junit, result = tmp_path / "junit.xml", tmp_path / "result.json"
    proc = cli(sandbox, [*create, "--version-label", "feat-slow", "--branch", "feat",
                         "--baseline", "branch:main", "--max-regressions", "0",
                         "--timeout", "10", "--json", "--junit", str(junit), "--",
                         str(hanging_agent(tmp_path, hung[:2], hung[2]))])
    assert proc.returncode == 1, proc.stderr  # the server counted them: the gate failed
    result.write_text(proc.stdout)
    doc = json.loads(proc.stdout)
    assert doc["gate"]["regressions"] == 3  # the server's count holds the agent failures
    assert doc["summary"]["regressions"] == 0 and doc["summary"]["agentFailures"] == 3
    report = doc["report"]
    states = {i["item_id"]: i["status"] for i in report["items"] if i["state"] != "pass"}
    assert states == {i: "agent_failed" for i in hung}, states
    assert report["outputs"]["regressions"] == "0"
    assert report["headline"] == "Blocked: 3 of 6 agents timed out (after 10 s)."
    assert not any("regression" in r for r in report["reasons"]), report["reasons"]
    assert {f["item_id"] for f in report["agent_failures"]} == set(hung)
    for failure in report["agent_failures"]:  # the timeout kept the agent's own output
        assert f"agent: calling the model for {failure['item_id']}" in failure["stderr_tail"]

    err = proc.stderr
    assert "  regressions: 0\n" in err
    assert "  agents:      3 of 6 agents timed out (after 10 s)\n" in err
    assert "  agent output of it_1 (after 10 s), last lines:\n" in err
    assert "    | agent: calling the model for it_1\n" in err
    assert "  regressed  " not in err and "    - regressions" not in err
    assert "  verdict:     blocked (exit 1)" in err

    xml = junit.read_text()
    assert xml.count("<testcase") == 6 and "<failure" not in xml
    assert xml.count('type="agent_failed"') == 3

    for fmt in ("markdown", "comment"):
        text = rendered(sandbox, result, fmt)
        assert "**Regressions** 0 · **Agent failures** 3 of 6 agents timed out (after 10 s)" \
            in text, text
        assert "🔻 regressed" not in text
        items = text.split("#### Failing items (3 of 6)", 1)[1]  # one row per item, each one
        assert items.count("<br>💥 agent failed<br>") == 3, text
        groups = text.split("#### Failing the same way", 1)[1].split("####", 1)[0]
        assert "regress" not in groups  # the groups hold the same three, as agent failures
        assert groups.count("| 💥 agent failed |") == 2 and "| 2 |" in groups, groups
        assert "Agent output of it_1: timed out (after 10 s), last lines" in text
        assert "agent: calling the model for it_1" in text
    console = rendered(sandbox, result, "text")
    assert "  regressions: 0\n" in console


def test_a_collapsed_pass_against_a_fallen_back_baseline_reads_as_caveats(tmp_path):
    sandbox = start_sandbox(tmp_path, seed=SEED)
    try:
        result = tmp_path / "result.json"
        proc = cli(sandbox, ["eval", "run", "--create", "--dataset", "ds_eleven",
                             "--concurrency", "3", "--version-label", "feat-1", "--branch",
                             "feat", "--baseline", "branch:release", "--max-regressions", "0",
                             "--json", "--", PY, str(AGENT)])
        assert proc.returncode == 0, proc.stderr  # the gate passed: a caveat never blocks
        result.write_text(proc.stdout)
        doc = json.loads(proc.stdout)
        report = doc["report"]
        assert doc["verdict"] == "passed" and doc["summary"]["regressions"] == 0
        assert report["headline"] == ("Passed, with caveats (baseline fell back, pass rate "
                                      "collapsed): pass rate 9.1 %, 0 regressions.")
        fell_back, collapsed = report["caveats"]
        assert fell_back.startswith("The baseline fell back from branch:release to the "
                                    "production window (7d): no run on branch release")
        assert collapsed.startswith("The pass rate is 9.1 %, 90.9 pp below the baseline's "
                                    "100 % (the baseline matched only 1 of 11 items)")
        assert "set --min-pass-rate" in collapsed
        assert "  verdict:     passed, with caveats (exit 0)" in proc.stderr
        assert f"  CAVEAT: {collapsed}" in proc.stderr
        for fmt in ("markdown", "comment"):
            text = rendered(sandbox, result, fmt)
            assert "### ⚠️ Passed, with caveats: Pre-prod eval" in text
            assert "✅" not in text
            assert text.count("The baseline fell back from branch:release") == 1
            assert "**Pass rate** 9.1 % ▼ 90.9 pp vs 100 %" in text
    finally:
        sandbox.stop()
