"""Main's trend through the real sandbox: five runs of the default branch, the seeded agent
(tests/integration/noise_agent.py, as warm workers) getting worse run by run, then a PR with
history: the slide warning shows in the console, the JSON document and the job summary
re-rendered from it."""

from __future__ import annotations

import json

import pytest

from tests.helpers import PY, ROOT, run_cli, start_sandbox
from tests.integration.test_eval_run import cli, created_run_id
from tests.integration.test_noise_reps import ORDERS, _seed

NOISY = [PY, str(ROOT / "tests" / "integration" / "noise_agent.py")]
CREATE = ["eval", "run", "--create", "--dataset", "ds_orders", "--workers", "2",
          "--poll-interval", "1"]
SLIDE = "main's pass rate slid 20.0 pp over its last 5 runs (100.0 % to 80.0 %)"


@pytest.fixture
def sandbox(tmp_path):
    sb = start_sandbox(tmp_path, seed=_seed(tmp_path / "seed.yaml"))
    yield sb
    sb.stop()


def _broken(count: int) -> str:
    return ",".join(str(n) for n in ORDERS[:count])


@pytest.mark.timeout(600)
def test_main_sliding_over_the_window_warns_in_console_json_and_summary(sandbox, tmp_path):
    state = str(tmp_path / "draws")
    ids = []
    for i in range(5):  # 0, 2, 4, 6, 8 of 40 items broken: 100 % down to 80 %
        proc = cli(sandbox, [*CREATE, "--version-label", f"main-{i}", "--branch", "main",
                             "--baseline", "branch:main", "--", *NOISY],
                   NOISE_BROKEN=_broken(2 * i), NOISE_SEED=f"main{i}", NOISE_STATE_DIR=state)
        assert proc.returncode == 0, proc.stderr
        assert "with 2 warm worker(s)" in proc.stderr, proc.stderr
        ids.append(created_run_id(proc.stderr))
    pr = cli(sandbox, [*CREATE, "--version-label", "pr", "--branch", "feat", "--baseline",
                       "branch:main", "--baseline-runs", "5", "--json", "--", *NOISY],
             NOISE_BROKEN=_broken(8), NOISE_SEED="pr", NOISE_STATE_DIR=state)
    assert pr.returncode == 0, pr.stderr
    assert "History: 5 run(s) of the default branch" in pr.stderr, pr.stderr
    assert f"WARNING: {SLIDE}" in pr.stderr, pr.stderr
    doc = json.loads(pr.stdout)
    noise = doc["noise"]
    assert SLIDE in noise["trend_warning"]
    # the trend is oldest first: the five main runs in the order they ran
    assert [t["run_id"] for t in noise["trend"]] == ids
    assert [t["pass_rate"] for t in noise["trend"]] == pytest.approx(
        [1.0, 0.95, 0.9, 0.85, 0.8])
    assert any(SLIDE in w for w in doc["warnings"]), doc["warnings"]
    # the PR itself broke nothing more than main's latest run: no regression is held
    assert noise["regressed"] == [] and doc["verdict"] in ("passed", "warned")
    saved = tmp_path / "result.json"
    saved.write_text(pr.stdout, encoding="utf-8")
    summary = run_cli(["report", "--format", "markdown", str(saved)], sandbox.agent_env())
    assert summary.returncode == 0, summary.stderr
    assert SLIDE in summary.stdout, summary.stdout


@pytest.mark.timeout(600)
def test_a_steady_main_gives_no_slide_warning(sandbox, tmp_path):
    state = str(tmp_path / "draws")
    for i in range(3):
        proc = cli(sandbox, [*CREATE, "--version-label", f"main-{i}", "--branch", "main",
                             "--baseline", "branch:main", "--", *NOISY],
                   NOISE_BROKEN=_broken(4), NOISE_SEED=f"main{i}", NOISE_STATE_DIR=state)
        assert proc.returncode == 0, proc.stderr
    pr = cli(sandbox, [*CREATE, "--version-label", "pr", "--branch", "feat", "--baseline",
                       "branch:main", "--baseline-runs", "3", "--json", "--", *NOISY],
             NOISE_BROKEN=_broken(4), NOISE_SEED="pr", NOISE_STATE_DIR=state)
    assert pr.returncode == 0, pr.stderr
    noise = json.loads(pr.stdout)["noise"]
    assert len(noise["trend"]) == 3 and noise["trend_warning"] == ""
    assert "slid" not in pr.stderr
