"""``neens eval run --gates``: the CLI as a process against the real sandbox and the real
OpenTelemetry example agent (issue 7; runner manual "Enforce eval gates in CI"; spec 4.3,
4.6.2, 10.2, decision 16).

The seed (tests/integration/data/gates_seed.yaml) has two active gates and one paused gate;
the agent's behaviour is chosen per test with ``AGENT_MODE`` / ``AGENT_SILENT_RE`` through
tests/integration/data/mode_agent.py.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.helpers import PY, Sandbox, run_cli, start_sandbox

DATA = Path(__file__).resolve().parent / "data"
AGENT = [PY, str(DATA / "mode_agent.py")]
HEADER = "    GATE                      ENFORCED  PASS RATE  THRESHOLD  SCORED  VERDICT"
REFUND_ITEMS_RE = r"(?i)order (9|31|64)\b"  # every item of gate-refund


@pytest.fixture(scope="module")
def gates_sandbox(tmp_path_factory) -> Sandbox:
    sb = start_sandbox(tmp_path_factory.mktemp("gates"), seed=DATA / "gates_seed.yaml")
    yield sb
    sb.stop()


def gates_run(sb: Sandbox, *flags: str, **env: str):
    args = ["eval", "run", *flags, "--poll-interval", "1", "--json", "--", *AGENT]
    return run_cli(args, sb.agent_env(**env), timeout=180)


def gate_table(stderr: str) -> list[str]:
    """The ``eval gates:`` block of the summary: title, header, rows, footer."""
    lines = stderr.splitlines()
    start = lines.index("  eval gates:")
    end = next(i for i in range(start + 1, len(lines)) if lines[i].startswith("  eval gates:  "))
    return lines[start:end + 1]


def no_traceback(proc) -> None:
    assert "Traceback" not in proc.stderr, proc.stderr


def test_active_gates_pass(gates_sandbox):
    proc = gates_run(gates_sandbox, "--git-sha", "0123456789abcdef0123", AGENT_MODE="good",
                     NEENS_GATES="active")  # the environment default for --gates
    assert proc.returncode == 0, proc.stderr
    no_traceback(proc)
    assert "Enforcing 2 eval gate(s): FM: Leaks internal notes, FM: Wrong refund amount" \
        in proc.stderr
    assert gate_table(proc.stderr) == [
        "  eval gates:",
        HEADER,
        "    FM: Leaks internal notes  yes       100%       70%        4/4     PASS",
        "    FM: Wrong refund amount   yes       100%       70%        3/3     PASS",
        "  eval gates:  2/2 passed",
    ]
    doc = json.loads(proc.stdout)
    assert doc["exitCode"] == 0 and doc["gatePassed"] is True
    run = gates_sandbox.get(f"/preprod-evals/{doc['runId']}").json()
    # gates-only: no dataset, the label is the short commit, provenance recorded
    assert run["datasetId"] is None
    assert run["versionLabel"] == "0123456789ab"
    assert {row["gateId"] for row in doc["gates"]} == {"gate-refund", "gate-leak"}
    # a gates-only run has no baseline: neither the create line nor the summary names one
    assert "Baseline:" not in proc.stderr and "  baseline:" not in proc.stderr


def test_active_gate_below_threshold_fails_the_build(gates_sandbox):
    proc = gates_run(gates_sandbox, "--gates", "active", "--version-label", "cand-bad",
                     AGENT_MODE="bad")
    assert proc.returncode == 1, proc.stderr
    no_traceback(proc)
    assert gate_table(proc.stderr) == [
        "  eval gates:",
        HEADER,
        "    FM: Leaks internal notes  yes       100%       70%        4/4     PASS",
        "    FM: Wrong refund amount   yes       33%        70%        3/3     FAIL",
        "  eval gates:  1/2 passed, 1 enforced gate(s) failing the build",
    ]
    doc = json.loads(proc.stdout)
    rows = {row["gateId"]: row for row in doc["gates"]}
    assert rows["gate-refund"]["verdict"] == "fail" and rows["gate-refund"]["enforced"] is True
    assert rows["gate-refund"]["nScored"] == 3 and rows["gate-refund"]["nItems"] == 3
    assert doc["gatePassed"] is False and doc["buildVerdict"]["verdict"] == "blocked"


def test_gate_whose_items_never_get_a_trace_is_no_data_and_fails(gates_sandbox):
    proc = gates_run(gates_sandbox, "--gates", "active", "--version-label", "cand-silent",
                     AGENT_MODE="good", AGENT_SILENT_RE=REFUND_ITEMS_RE)
    assert proc.returncode == 1, proc.stderr
    no_traceback(proc)
    assert gate_table(proc.stderr) == [
        "  eval gates:",
        HEADER,
        "    FM: Leaks internal notes  yes       100%       70%        4/4     PASS",
        "    FM: Wrong refund amount   yes       n/a        70%        0/3     NO DATA",
        "  eval gates:  1/2 passed, 1 enforced gate(s) failing the build",
    ]
    rows = {row["gateId"]: row for row in json.loads(proc.stdout)["gates"]}
    assert rows["gate-refund"]["verdict"] == "no_data"
    assert rows["gate-refund"]["passed"] is False and rows["gate-refund"]["nScored"] == 0


def test_paused_gate_named_explicitly_never_fails_the_build(gates_sandbox):
    proc = gates_run(gates_sandbox, "--gates", "gate-refund,gate-policy",
                     "--version-label", "cand-paused", AGENT_MODE="good")
    assert proc.returncode == 0, proc.stderr
    no_traceback(proc)
    assert gate_table(proc.stderr) == [
        "  eval gates:",
        "    GATE                     ENFORCED  PASS RATE  THRESHOLD  SCORED  VERDICT",
        "    FM: Wrong refund amount  yes       100%       70%        3/3     PASS",
        "    FM: Quotes stale policy  no        0%         80%        2/2     FAIL (not enforced)",
        "  eval gates:  1/2 passed",
    ]
    rows = {row["gateId"]: row for row in json.loads(proc.stdout)["gates"]}
    assert rows["gate-policy"]["enforced"] is False and rows["gate-policy"]["verdict"] == "fail"


def test_paused_gate_without_data_is_reported_not_enforced(gates_sandbox):
    proc = gates_run(gates_sandbox, "--gates", "gate-refund,gate-policy",
                     "--version-label", "cand-p2", AGENT_MODE="good",
                     AGENT_SILENT_RE="(?i)policy")
    assert proc.returncode == 0, proc.stderr
    table = gate_table(proc.stderr)
    assert table[3] == ("    FM: Quotes stale policy  no        n/a        80%        0/2     "
                        "NO DATA (not enforced)")
    assert table[4] == "  eval gates:  1/2 passed"


def test_nothing_scored_at_all_is_never_a_pass(gates_sandbox):
    proc = gates_run(gates_sandbox, "--gates", "gate-policy", "--version-label", "cand-p3",
                     AGENT_MODE="good", AGENT_SILENT_RE="(?i)policy")
    assert proc.returncode == 2, proc.stderr  # nothing measured: a run error, never a pass
    assert "no item was scored" in proc.stderr


def test_gates_with_a_dataset_replay_both(gates_sandbox):
    proc = gates_run(gates_sandbox, "--gates", "active", "--dataset", "ds_refunds",
                     "--version-label", "cand-both", AGENT_MODE="good")
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    ids = [i["itemId"] for i in doc["items"]]
    assert {"it_1", "it_2", "g_1", "g_2", "g_3", "l_1"} <= set(ids)
    assert len(ids) == 9


def test_gates_only_run_with_no_active_gate_exits_2(tmp_path):
    sb = start_sandbox(tmp_path, seed=DATA / "gates_none_active.yaml")
    try:
        proc = gates_run(sb, "--gates", "active", "--version-label", "cand", AGENT_MODE="good")
    finally:
        sb.stop()
    assert proc.returncode == 2, proc.stderr
    no_traceback(proc)
    errors = [line for line in proc.stderr.splitlines() if line.startswith("neens: error:")]
    assert len(errors) == 1 and "no active eval gates" in errors[0]
    assert "item 1/" not in proc.stderr  # the agent never ran


def test_malformed_gates_flag_is_a_usage_error(gates_sandbox):
    proc = gates_run(gates_sandbox, "--gates", ",", "--version-label", "x")
    assert proc.returncode == 2
    no_traceback(proc)
    assert proc.stderr.startswith("neens: error: --gates")
    assert proc.stderr.count("\n") == 1
