"""Repeats over a 40-item dataset with a seeded nondeterministic agent (real sandbox, real
agent processes with the OpenTelemetry SDK): an A/A PR with flaky items passes, a real
regression is blocked with its items named; repeats with --workers; SIGTERM cancels every
rep's run."""

from __future__ import annotations

import json
import os
import signal

import pytest

from neens_action.flows.pull import run_pull
from neens_action.settings.connection import make_client
from neens_action.settings.run import EvalRunSettings
from neens_action.verdict import decide
from neens_action.world import World
from tests.helpers import EXAMPLES, PY, start_sandbox
from tests.integration.scale_support import start_cli, wait_for_text
from tests.integration.test_eval_run import cli, created_run_id
from tests.integration.test_noise_gate import NOISY

ORDERS = list(range(1, 81, 2))  # odd orders: the example agent's bad mode gets them wrong
FLAKY = "1,3,5,7"
BROKEN = "11,13,15,17,19"
BROKEN_IDS = {f"o_{n}" for n in BROKEN.split(",")}
FLAKY_IDS = {f"o_{n}" for n in FLAKY.split(",")}
CREATE = ["eval", "run", "--create", "--dataset", "ds_orders", "--concurrency", "4",
          "--poll-interval", "1"]


def _seed(path) -> str:
    lines = ["api_keys: [nk_live_sandbox]", "pricing:", "  gpt-4o-mini: {input: 0.15, "
             "output: 0.60}", "judges:", "  - {id: j_answer, metric: correctness, kind: "
             "contains}", "datasets:", "  - id: ds_orders", "    name: Orders",
             "    judges: [j_answer]", "    items:"]
    lines += [f'      - {{id: o_{n}, input: "Refund for order {n} (${n}.00)?", '
              f'expected_output: "${n}.00"}}' for n in ORDERS]
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.fixture
def sandbox(tmp_path):
    sb = start_sandbox(tmp_path, seed=_seed(tmp_path / "seed.yaml"))
    yield sb
    sb.stop()


def _main_runs(sandbox, count: int) -> list[str]:
    ids = []
    for i in range(count):
        proc = cli(sandbox, [*CREATE, "--version-label", f"main-{i}", "--branch", "main",
                             "--baseline", "branch:main", "--", *NOISY],
                   NOISE_FLAKY=FLAKY, NOISE_SEED=f"main{i}")
        assert proc.returncode == 0, proc.stderr
        ids.append(created_run_id(proc.stderr))
    return ids


def _pr(sandbox, monkeypatch, repeat: str = "3", runs: int = 3, **env: str):
    """The PR's eval, in process (the outcome is read), agents as real processes."""
    environ = sandbox.agent_env(NOISE_FLAKY=FLAKY, **env)
    for key, value in environ.items():
        monkeypatch.setenv(key, value)
    world = World(environ=environ)
    settings = EvalRunSettings.from_flags(dict(
        create=True, dataset="ds_orders", version_label="pr", branch="feat",
        baseline="branch:main", repeat=repeat, baseline_runs=runs, max_regressions=0,
        concurrency=4, poll_interval=1.0, command=NOISY), environ)
    settings.validate()
    outcome = run_pull(settings, client=make_client(settings), world=world)
    return outcome, decide(outcome)


def test_aa_pr_with_flaky_items_passes_and_a_real_regression_is_blocked_and_named(
        sandbox, monkeypatch):
    _main_runs(sandbox, 3)
    aa, (code, verdict) = _pr(sandbox, monkeypatch, NOISE_SEED="aa")
    assert aa.error is None and aa.noise is not None
    assert code == 0 and verdict in ("passed", "warned"), aa.noise.verdict.reason
    assert aa.noise.verdict.regressed == ()
    assert len(aa.noise.reps) == 3 and len(aa.noise.history) == 3
    # only the seeded flaky items can be mixed; nothing deterministic is called flaky
    assert set(aa.noise.verdict.flaky) <= {f"o_{n}" for n in (1, 3, 5, 7)}
    assert aa.noise.verdict.outcome.value != "regressed"

    bad, (code, verdict) = _pr(sandbox, monkeypatch, NOISE_SEED="bad", NOISE_BROKEN=BROKEN)
    assert bad.error is None and bad.noise is not None
    assert (code, verdict) == (1, "blocked"), bad.noise.verdict.reason
    assert bad.noise.verdict.outcome.value == "regressed"
    held = set(bad.noise.verdict.regressed)
    # every broken item is held; a flaky item that passed every main run by chance may be
    # held too (the method bounds how often), a stable one never
    assert BROKEN_IDS <= held <= BROKEN_IDS | FLAKY_IDS, held
    rules = {r.rule: r for r in bad.noise.decision.rules}
    assert rules["max-regressions"].observed == "5" and rules["max-regressions"].outcome == "fail"


def test_auto_replays_only_the_items_in_doubt_and_still_names_the_regression(
        sandbox, monkeypatch):
    _main_runs(sandbox, 3)
    bad, (code, verdict) = _pr(sandbox, monkeypatch, repeat="auto", NOISE_SEED="auto",
                               NOISE_BROKEN=BROKEN)
    assert bad.error is None and bad.noise is not None and bad.noise.repeat == "auto"
    reps = bad.noise.reps
    assert reps[0].items_replayed == len(ORDERS) and len(reps) >= 2
    assert all(r.items_replayed < len(ORDERS) for r in reps[1:]), reps
    assert (code, verdict) == (1, "blocked"), bad.noise.verdict.reason
    held = set(bad.noise.verdict.regressed)
    # every broken item is held; a flaky item that passed every main run by chance may be
    # held too (the method bounds how often), a stable one never
    assert BROKEN_IDS <= held <= BROKEN_IDS | FLAKY_IDS, held
    later = sandbox.get(f"/preprod-evals/{reps[1].run_id}").json()
    assert later["completed"] == reps[1].items_replayed  # the others: no trace captured


def test_one_replay_with_history_names_the_regression_and_tells_flaky_items(
        sandbox, monkeypatch):
    from neens_action.noise import history_fact

    _main_runs(sandbox, 3)
    bad, (code, verdict) = _pr(sandbox, monkeypatch, repeat="1", NOISE_SEED="k1",
                               NOISE_BROKEN=BROKEN)
    assert bad.noise is not None and len(bad.noise.reps) == 1 and len(bad.noise.history) == 3
    assert bad.noise.history_end == ""
    assert (code, verdict) == (1, "blocked"), bad.noise.verdict.reason
    held = set(bad.noise.verdict.regressed)
    # every broken item is held; a flaky item that passed every main run by chance may be
    # held too (the method bounds how often), a stable one never
    assert BROKEN_IDS <= held <= BROKEN_IDS | FLAKY_IDS, held
    facts = {r.item_id: history_fact(r) for r in bad.noise.records}
    assert facts["o_11"] == "stable on main: passed 3 of the last 3"


def test_chaos_reaches_the_fault_free_verdict(tmp_path, monkeypatch):
    sb = start_sandbox(tmp_path, seed=_seed(tmp_path / "seed.yaml"), extra=["--chaos", "0.2"])
    try:
        _main_runs(sb, 3)
        bad, (code, verdict) = _pr(sb, monkeypatch, NOISE_SEED="chaos", NOISE_BROKEN=BROKEN)
    finally:
        sb.stop()
    assert bad.error is None and bad.noise is not None, bad.error
    assert (code, verdict) == (1, "blocked"), bad.noise.verdict.reason
    held = set(bad.noise.verdict.regressed)
    # every broken item is held; a flaky item that passed every main run by chance may be
    # held too (the method bounds how often), a stable one never
    assert BROKEN_IDS <= held <= BROKEN_IDS | FLAKY_IDS, held


def test_repeats_with_workers(sandbox):
    worker = [PY, str(EXAMPLES / "agent" / "worker.py")]
    proc = cli(sandbox, [*CREATE[:-4], "--workers", "3", "--poll-interval", "1",
                         "--version-label", "w", "--repeat", "2", "--json", "--", *worker])
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["verdict"] in ("passed", "warned")
    runs = [ln.split()[2] for ln in proc.stderr.splitlines() if ln.startswith("Created run ")]
    assert len(runs) == 2
    for run_id in runs:
        run = sandbox.get(f"/preprod-evals/{run_id}").json()
        assert run["status"] == "completed" and run["completed"] == len(ORDERS), run_id
    assert proc.stderr.count("with 3 warm worker(s) for run") == 2, proc.stderr


def test_sigterm_cancels_every_reps_run(sandbox, tmp_path):
    log = tmp_path / "cli.log"
    env = sandbox.agent_env(AGENT_MODE="slow", AGENT_SLOW_S="30")
    proc = start_cli([*CREATE, "--version-label", "sig", "--repeat", "3", "--", PY,
                      str(EXAMPLES / "agent" / "agent.py")], env, log)
    try:
        assert wait_for_text(log, "Repetition 1/3", proc, timeout=60)
        proc.send_signal(signal.SIGTERM)
        proc.communicate(timeout=40)
    finally:
        if proc.poll() is None:
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait(10)
    err = log.read_text()
    assert proc.returncode == 130, err
    runs = [ln.split()[2] for ln in err.splitlines() if ln.startswith("Created run ")]
    assert len(runs) == 3, err
    for run_id in runs:
        assert sandbox.get(f"/preprod-evals/{run_id}").json()["status"] == "cancelled", run_id
        assert f"cancelled run {run_id}" in err
