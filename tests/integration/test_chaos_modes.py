"""Faults lose nothing in the other modes either (issue 15). With the sandbox injecting faults
on 20 % of API requests (500, 429 + Retry-After, dropped connections, 2 s stalls; never on
/v1/traces), ``neens sweep run`` (a runner sweep driven by the real OpenTelemetry example
agent) and ``neens stress run`` (a scenario suite generated, launched and replayed by the
agent) reach exactly the verdict of a fault-free run: the same exit code, winner and
per-arm / per-failure-mode figures; every agent invocation runs exactly once, and no create
(sweep, suite, launch) is repeated blindly."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from tests.helpers import AGENT, PY, ROOT, Sandbox, run_cli, start_sandbox

DATA = ROOT / "tests" / "integration" / "data"
CHAOS = ["--chaos", "0.2", "--chaos-kinds", "500,429,drop,stall"]
RUNS = 4  # chaos runs per mode, each with its own fault sequence


def count(db: Path, table: str) -> int:
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=30)
    try:
        return con.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0]
    finally:
        con.close()


def clean(proc) -> dict:
    assert "Traceback" not in proc.stderr, proc.stderr
    return json.loads(proc.stdout) if proc.stdout.strip() else {}


def faults(sb: Sandbox, route: str = "") -> int:
    """Requests the sandbox faulted (500, 429, dropped), on ``route`` when given."""
    return sum(1 for line in sb.log.read_text().splitlines()
               if route in line and ("(chaos)" in line or "chaos: dropped" in line))


# -- sweep run -----------------------------------------------------------------------------------

SWEEP = ["sweep", "run", "--create", "--name", "bake-off", "--version-label", "v1", "--dataset",
         "ds_sweep", "--arm", "big=gpt-4o", "--arm", "small=gpt-4o-mini", "--k", "1",
         "--poll-interval", "0.5", "--concurrency", "4", "--json", "--",
         PY, str(DATA / "sweep_agent.py")]


def sweep_once(sb: Sandbox, log: Path) -> tuple[object, dict, list[tuple[str, str]]]:
    proc = run_cli(SWEEP, sb.agent_env(SWEEP_BAD_MODELS="gpt-4o", SWEEP_AGENT_LOG=str(log)),
                   timeout=240)
    doc = clean(proc)
    calls = [tuple(line.split("\t")[i] for i in (1, 5))  # (run, item)
             for line in log.read_text().splitlines() if line] if log.exists() else []
    return proc, doc, calls


def sweep_facts(proc, doc: dict) -> tuple:
    verdict = (doc.get("comparison") or {}).get("verdict") or {}
    winner = (verdict.get("winner") or {}).get("label")
    arms = sorted((a["label"], a["passed"], a["greens"]) for a in doc.get("arms") or [])
    return proc.returncode, doc.get("status"), verdict.get("outcome"), winner, arms


@pytest.mark.timeout(420)
def test_sweep_run_under_chaos_matches_the_fault_free_verdict(tmp_path):
    (tmp_path / "clean").mkdir()
    clean_sb = start_sandbox(tmp_path / "clean", seed=DATA / "sweep_seed.yaml")
    try:
        proc, doc, calls = sweep_once(clean_sb, tmp_path / "clean.log")
    finally:
        clean_sb.stop()
    expected = sweep_facts(proc, doc)
    assert expected[:4] == (0, "completed", "winner", "small"), proc.stderr
    assert len(calls) == 8 and len(set(calls)) == 8  # 2 arms x k=1 x 4 items

    (tmp_path / "chaos").mkdir()
    sb = start_sandbox(tmp_path / "chaos", seed=DATA / "sweep_seed.yaml",
                       extra=[*CHAOS, "--chaos-seed", "1"])
    try:
        for n in range(RUNS):
            proc, doc, calls = sweep_once(sb, tmp_path / f"chaos-{n}.log")
            assert sweep_facts(proc, doc) == expected, (n, proc.stderr)
            assert sorted(calls) == sorted(set(calls)) and len(calls) == 8, (n, calls)
    finally:
        sb.stop()
    assert faults(sb) >= 3, "the sandbox injected too few faults to prove anything"
    assert faults(sb, "POST /model-sweeps ->") >= 1  # seed 1 faults the first create
    assert count(sb.db, "sweeps") == RUNS  # no sweep create was repeated blindly


# -- stress run ----------------------------------------------------------------------------------

STRESS = ["stress", "run", "--failure-mode", "fm_refund", "--failure-mode", "fm_leak",
          "--version-label", "cand", "--min-pass-rate", "0.9", "--poll-interval", "0.5",
          "--concurrency", "4", "--json", "--", PY, str(AGENT)]


def stress_once(sb: Sandbox) -> tuple[object, dict]:
    proc = run_cli(STRESS, sb.agent_env(AGENT_MODE="bad"), timeout=240)
    return proc, clean(proc)


def stress_facts(proc, doc: dict) -> tuple:
    modes = sorted((r["label"], r["scenarios"], r["passRate"])
                   for r in (doc.get("stress") or {}).get("byFailureMode") or [])
    states = sorted((i.get("failureMode"), i["state"], i["returncode"])
                    for i in doc.get("items") or [])
    return (proc.returncode, doc.get("verdict"), doc.get("gatePassed"),
            (doc.get("buildVerdict") or {}).get("verdict"), modes, states)


@pytest.mark.timeout(420)
def test_stress_run_under_chaos_matches_the_fault_free_verdict(tmp_path):
    seed = DATA / "stress_seed.yaml"  # no LLM: a replay-only suite
    (tmp_path / "clean").mkdir()
    clean_sb = start_sandbox(tmp_path / "clean", seed=seed)
    try:
        proc, doc = stress_once(clean_sb)
    finally:
        clean_sb.stop()
    expected = stress_facts(proc, doc)
    assert expected[:4] == (1, "blocked", False, "blocked"), proc.stderr
    assert len(expected[5]) == 3 and ("Wrong refund amount (fm_refund)", "fail", 0) in expected[5]

    (tmp_path / "chaos").mkdir()
    sb = start_sandbox(tmp_path / "chaos", seed=seed, extra=[*CHAOS, "--chaos-seed", "31"])
    try:
        for n in range(RUNS):
            proc, doc = stress_once(sb)
            assert stress_facts(proc, doc) == expected, (n, proc.stderr)
    finally:
        sb.stop()
    assert faults(sb) >= 3, "the sandbox injected too few faults to prove anything"
    assert faults(sb, "POST /scenario-suites ->") >= 1  # seed 31 faults the first create
    assert count(sb.db, "runs") == RUNS  # no launch was repeated blindly
    assert count(sb.db, "scenario_suites") == RUNS  # nor a suite create
