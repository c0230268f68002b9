"""``neens eval watch``: the CLI as a real process against the real sandbox and the real
OpenTelemetry example agent, driven by real file saves in a temp tree (issue 7; spec 7.3,
8.3, 10.5, 10.7).

The agent is the example agent behind tests/integration/data/mode_agent.py, which reads its
mode from ``mode.txt`` inside the watched tree: editing that file is both the save that
triggers an iteration and the switch that changes what the agent answers.
"""

from __future__ import annotations

import json
import signal

import pytest

from tests.helpers import run_cli
from tests.integration.watch_support import (
    LABEL_RE,
    TWO_ITEMS,
    WAIT,
    Watch,
    agent_cmd,
    headers,
    save,
    watch_env,
)

# -- --once ------------------------------------------------------------------------------------


@pytest.mark.parametrize(("mode", "flags", "code"), [
    ("good", [], 0),
    ("bad", ["--min-pass-rate", "0.9"], 1),
    ("bad", ["--min-pass-rate", "0.9", "--no-gate"], 0),
])
def test_once_exits_with_the_iteration_gate_code(sandbox, tree, mode, flags, code):
    (tree / "mode.txt").write_text(mode)
    proc = run_cli(["eval", "watch", "--dataset", "ds_refunds", "--once", "--json",
                    "--poll-interval", "1", *flags, "--", *agent_cmd()],
                   watch_env(sandbox, tree), timeout=WAIT, cwd=tree)
    assert proc.returncode == code, proc.stderr
    assert "Traceback" not in proc.stderr
    assert "Press Ctrl-C" not in proc.stderr
    [record] = [json.loads(line) for line in proc.stdout.splitlines()]
    assert record["iteration"] == 1 and record["exitCode"] == code
    assert LABEL_RE.match(record["versionLabel"]).group(1) == "1"
    assert record["trigger"] == [] and record["diff"] is None and record["comparedTo"] is None
    assert record["metrics"]["passed"] == (6 if mode == "good" else 3)
    assert record["gatePassed"] is (mode == "good")
    run = sandbox.get(f"/preprod-evals/{record['runId']}").json()
    assert run["name"] == "local (watch #1)"
    assert run["versionLabel"] == record["versionLabel"]
    # a local loop: no provenance, no source, never a ci-result
    assert run["source"] is None and run["gitSha"] is None and run["ciResult"] is None
    if mode == "bad":
        assert "  6 item(s), 3 not passing — baseline for the next diff" in proc.stderr
        assert '    ✗ it_2  fail  "Can I get my money back for order 7? It cost $19.99."' \
            in proc.stderr


def test_once_with_policy_baseline_and_no_eval_gates(sandbox, tree):
    (tree / "mode.txt").write_text("bad")
    env = watch_env(sandbox, tree, NEENS_GATES="active")  # a CI setting: not for watch
    proc = run_cli(["eval", "watch", "--dataset", "ds_refunds", "--once", "--json",
                    "--max-abs-failures", "0", "--baseline", "prod:30d", "--poll-interval", "1",
                    "--", *agent_cmd()], env, timeout=WAIT, cwd=tree)
    assert proc.returncode == 1, proc.stderr
    [record] = [json.loads(line) for line in proc.stdout.splitlines()]
    assert record["policyBlocked"] is True and record["gatePassed"] is True
    assert "  gate: FAILED · exit 1" in proc.stderr
    run = sandbox.get(f"/preprod-evals/{record['runId']}").json()
    assert run["gates"] == []
    assert run["baseline"] == {"kind": "prod_window", "range": "30d"}  # explicit --baseline


@pytest.mark.parametrize(("flags", "api_key", "why"), [
    (["--dataset", "ds_nope"], None, "404"),  # unknown dataset
    (["--dataset", "ds_drafts"], None, "422"),  # no golden version
    ([], "nk_live_wrong", "401"),  # bad key
])
def test_once_exits_2_when_no_run_can_be_created(sandbox, tree, flags, api_key, why):
    env = watch_env(sandbox, tree)
    if api_key:
        env["NEENS_API_KEY"] = api_key
    args = ["eval", "watch", "--dataset", "ds_refunds", "--once", *flags, "--",
            *agent_cmd()]
    proc = run_cli(args, env, timeout=WAIT, cwd=tree)
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr
    errors = [line for line in proc.stderr.splitlines() if line.startswith("neens: error:")]
    assert len(errors) == 1 and why in errors[0] and "no file save can fix this" in errors[0]
    assert (api_key or "nk_live_test") not in proc.stderr  # the key never appears


def test_continuous_watch_stops_when_no_run_can_be_created(sandbox, tree):
    w = Watch(sandbox, tree, [], NEENS_API_KEY="nk_live_wrong")
    assert w.wait_exit() == 2
    assert len(headers(w.stderr)) == 1
    assert w.records()[0]["exitCode"] == 2


@pytest.mark.parametrize("flags", [
    ["--debounce", "-1"], ["--max-iterations", "0"], ["--path", "no/such/dir"],
    ["--version-label", ""],
])
def test_bad_watch_flags_exit_2_with_one_line(sandbox, tree, flags):
    proc = run_cli(["eval", "watch", "--dataset", "ds_refunds", *flags, "--", *agent_cmd()],
                   watch_env(sandbox, tree), timeout=60, cwd=tree)
    assert proc.returncode == 2
    assert proc.stderr.startswith("neens: error: ") and proc.stderr.count("\n") == 1


# -- continuous ----------------------------------------------------------------------------------


def test_two_saves_during_one_iteration_give_exactly_one_follow_up(sandbox, tree):
    (tree / "mode.txt").write_text("slow")
    w = Watch(sandbox, tree, TWO_ITEMS, AGENT_SLOW_S="1.5")
    try:
        w.wait_for(lambda t: "  created run " in t, "iteration 1 to start")
        save(tree / "app.py", "VERSION = 2\n")
        w.wait_for(lambda t: "item 1/2" in t, "the first item of iteration 1")
        save(tree / "app.py", "VERSION = 3  # again\n")
        save(tree / "notes.md", "a second file\n")
        w.wait_idle(1)  # iteration 2 (the follow-up) is done and nothing else is pending
        text = w.stderr
        assert [h.split(" · ")[0] for h in headers(text)] == ["── iteration 1",
                                                              "── iteration 2"]
        assert "2 file(s) changed during iteration 1: one follow-up run" in text
        assert "  changed: app.py, notes.md" in text
        w.proc.send_signal(signal.SIGINT)  # idle: nothing in flight
        assert w.wait_exit() == 130
    finally:
        w.close()
    records = w.records()
    assert [r["iteration"] for r in records] == [1, 2]
    assert records[1]["trigger"] == ["app.py", "notes.md"]
    assert records[0]["runId"] != records[1]["runId"]


def test_delta_report_lists_newly_failing_and_newly_passing_items(sandbox, tree):
    w = Watch(sandbox, tree, ["--max-iterations", "3", "--min-pass-rate", "0.9"])
    try:
        w.wait_idle(1)
        save(tree / "mode.txt", "bad\n")
        w.wait_idle(2)
        save(tree / "mode.txt", "good\n")
        assert w.wait_exit() == 0  # the last iteration's code
    finally:
        w.close()
    text = w.stderr
    assert len(headers(text)) == 3
    second = text.split("── iteration 2 ")[1].split("── iteration 3 ")[0]
    assert "  gate: FAILED (was PASSED at #1) · exit 1" in second
    assert ("  pass rate 50.0% (-50.0 pts) · avg score 0.750 (-0.250) · passed 3 (-3) · "
            "failed 3 (+3) · errored 0 (+0)") in second
    assert "  vs iteration #1:" in second
    assert "    ▼ newly failing: 3" in second
    for item, text_in in (("it_2", "order 7"), ("it_3", "Order 1001"), ("it_5", "order 13")):
        line = next(x for x in second.splitlines() if x.startswith(f"        ▼ {item}  "))
        assert "pass → fail" in line and text_in in line
    assert "    ▲ newly passing: 0" in second
    assert "    = unchanged passing: 3" in second
    third = text.split("── iteration 3 ")[1]
    assert "  gate: PASSED (was FAILED at #2) · exit 0" in third
    assert "    ▲ newly passing: 3" in third
    assert sum(1 for x in third.splitlines() if x.startswith("        ▲ it_")) == 3
    assert "    ▼ newly failing: 0" in third
    records = w.records()
    assert [r["exitCode"] for r in records] == [0, 1, 0]
    assert [r["comparedTo"] for r in records] == [None, 1, 2]
    assert [c["itemId"] for c in records[1]["diff"]["newlyFailing"]] == ["it_2", "it_3", "it_5"]
    assert [c["itemId"] for c in records[2]["diff"]["newlyPassing"]] == ["it_2", "it_3", "it_5"]
    assert records[1]["deltas"]["passed"] == -3 and records[2]["deltas"]["failed"] == -3
    assert records[1]["trigger"] == ["mode.txt"]
    labels = [LABEL_RE.match(r["versionLabel"]) for r in records]
    assert [m.group(1) for m in labels] == ["1", "2", "3"]
    assert len({r["versionLabel"].rsplit(".", 1)[0] for r in records}) == 1  # one session


def test_max_iterations_stops_with_the_last_iteration_code(sandbox, tree):
    w = Watch(sandbox, tree, [*TWO_ITEMS, "--max-iterations", "2", "--min-pass-rate", "0.9"])
    try:
        w.wait_idle(1)
        save(tree / "mode.txt", "bad\n")
        assert w.wait_exit() == 1
    finally:
        w.close()
    assert len(headers(w.stderr)) == 2
    assert w.stderr.count("watching for changes") == 1
    assert [r["exitCode"] for r in w.records()] == [0, 1]


def test_path_include_and_exclude_decide_what_triggers(sandbox, tree):
    src = tree / "src"
    src.mkdir()
    save(src / "app.py", "A = 1\n")
    save(src / "skip_me.py", "B = 1\n")
    w = Watch(sandbox, tree, [*TWO_ITEMS, "--path", "src", "--include", "*.py",
                              "--exclude", "skip_*", "--max-iterations", "2"])
    try:
        w.wait_idle(1)
        assert "watching 1 file(s) under src" in w.stderr  # src/app.py only
        save(tree / "app.py", "VERSION = 5\n")  # outside --path
        save(src / "notes.txt", "not *.py\n")  # not included
        save(src / "skip_me.py", "B = 2\n")  # excluded
        (src / "__pycache__").mkdir()
        save(src / "__pycache__" / "x.py", "always skipped\n")
        save(src / "app.py", "A = 2  # the only save that counts\n")
        assert w.wait_exit() == 0
    finally:
        w.close()
    assert [r["trigger"] for r in w.records()] == [[], ["src/app.py"]]
