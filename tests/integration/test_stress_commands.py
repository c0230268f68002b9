"""``neens stress generate | get | regenerate | launch`` as real processes against the real
sandbox (and the fake LLM server as a real process)."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
import yaml

from tests.fakes import llm_server
from tests.helpers import ROOT, TEST_KEY, Sandbox, run_cli, start_sandbox

BASE_SEED = ROOT / "tests" / "integration" / "data" / "stress_seed.yaml"


def write_seed(tmp: Path, *, llm: dict | None = None) -> Path:
    data = yaml.safe_load(BASE_SEED.read_text())
    if llm is not None:
        data["llm"] = llm
    path = tmp / f"seed-{time.monotonic_ns()}.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


def one_error_line(stderr: str) -> str:
    assert "Traceback" not in stderr
    lines = [ln for ln in stderr.splitlines() if ln.startswith("neens: error:")]
    assert len(lines) == 1, stderr
    return lines[0]


def no_key(*texts: str) -> None:
    for text in texts:
        assert TEST_KEY not in text


@pytest.fixture(scope="module")
def llm(tmp_path_factory) -> llm_server.FakeLlm:
    fake = llm_server.start(tmp_path_factory.mktemp("llm"))
    yield fake
    fake.stop()


@pytest.fixture(scope="module")
def sb(tmp_path_factory, llm) -> Sandbox:
    tmp = tmp_path_factory.mktemp("sb")
    box = start_sandbox(tmp, seed=write_seed(tmp, llm={"base_url": llm.url, "model": "m"}))
    yield box
    box.stop()


@pytest.fixture(scope="module")
def slow(tmp_path_factory) -> Sandbox:
    """A sandbox whose LLM takes 5 s per call: suites stay 'generating' for a while."""
    tmp = tmp_path_factory.mktemp("slow")
    fake = llm_server.start(tmp, "--delay", "5")
    box = start_sandbox(tmp, seed=write_seed(tmp, llm={"base_url": fake.url}))
    yield box
    box.stop()
    fake.stop()


@pytest.fixture(scope="module")
def plain(tmp_path_factory) -> Sandbox:
    tmp = tmp_path_factory.mktemp("plain")
    box = start_sandbox(tmp, seed=write_seed(tmp))
    yield box
    box.stop()


def test_generate_get_regenerate(sb: Sandbox) -> None:
    env = sb.agent_env()
    gen = run_cli(["stress", "generate", "CLI suite", "--failure-mode", "fm_refund",
                   "--failure-mode", "fm_leak", "--per-mode", "3", "--wait",
                   "--poll-interval", "0.5"], env)
    assert gen.returncode == 0, gen.stderr
    suite_id = gen.stdout.strip()
    assert suite_id.startswith("sts_")
    assert f"Created scenario suite {suite_id}" in gen.stderr
    assert "ready (9 scenarios)" in gen.stderr

    got = run_cli(["stress", "get", suite_id], env)
    assert got.returncode == 0, got.stderr
    assert got.stdout == ""
    header = next(ln for ln in got.stderr.splitlines() if "STRATEGY" in ln)
    for col in ("FAILURE MODE", "INPUT", "EXPECTED BEHAVIOUR"):
        assert col in header
    for strategy in ("replay", "paraphrase", "escalate", "boundary"):
        assert any(ln.strip().startswith(strategy) for ln in got.stderr.splitlines())
    assert "Wrong refund amount (fm_refund)" in got.stderr
    assert "Leaks internal notes (fm_leak)" in got.stderr
    assert "failure modes: Wrong refund amount (fm_refund), Leaks internal notes" in got.stderr

    as_json = run_cli(["stress", "get", suite_id, "--json"], env)
    assert as_json.returncode == 0
    first = json.loads(as_json.stdout)
    assert first["status"] == "ready" and len(first["scenarios"]) == 9

    regen = run_cli(["stress", "regenerate", suite_id, "--per-mode", "2", "--strategy",
                     "boundary", "--no-replay", "--wait", "--json", "--poll-interval", "0.5"],
                    env)
    assert regen.returncode == 0, regen.stderr
    second = json.loads(regen.stdout)
    assert second["datasetVersionId"] != first["datasetVersionId"]
    assert second["version"] == 2
    assert {r["strategy"] for r in second["scenarios"]} == {"boundary"}
    assert len(second["scenarios"]) == 4  # 2 per mode, 2 modes
    no_key(gen.stdout, gen.stderr, got.stderr, as_json.stdout, regen.stdout, regen.stderr)


def test_generate_without_wait_prints_the_id_at_once(slow: Sandbox) -> None:
    t0 = time.monotonic()
    gen = run_cli(["stress", "generate", "later", "--failure-mode", "fm_refund"],
                  slow.agent_env())
    assert gen.returncode == 0, gen.stderr
    assert time.monotonic() - t0 < 5 + 4  # it did not wait for the 5 s model call (+ start-up)
    assert gen.stdout.strip().startswith("sts_")
    assert "(generating)" in gen.stderr


def test_launching_a_suite_that_is_not_ready_is_refused(slow: Sandbox) -> None:
    env = slow.agent_env()
    suite_id = run_cli(["stress", "generate", "slow", "--failure-mode", "fm_refund"],
                       env).stdout.strip()
    res = run_cli(["stress", "launch", suite_id, "--version-label", "v1"], env)
    assert res.returncode == 2
    line = one_error_line(res.stderr)
    assert f"cannot launch scenario suite {suite_id}" in line
    assert "not ready" in line
    assert res.stdout == ""
    waited = run_cli(["stress", "generate", "slow2", "--failure-mode", "fm_refund", "--wait",
                      "--ready-timeout", "1", "--poll-interval", "0.2"], env)
    assert waited.returncode == 2
    assert "was not ready within 1s" in one_error_line(waited.stderr)


def test_launch_prints_the_run_and_how_to_drive_it(sb: Sandbox) -> None:
    env = sb.agent_env()
    suite_id = run_cli(["stress", "generate", "to launch", "--failure-mode", "fm_leak",
                        "--strategy", "paraphrase", "--per-mode", "1", "--wait",
                        "--poll-interval", "0.5"], env).stdout.strip()
    res = run_cli(["stress", "launch", suite_id, "--version-label", "cand-1",
                   "--max-regressions", "0", "--min-pass-rate", "0.9", "--baseline", "prod:30d",
                   "--json"], env)
    assert res.returncode == 0, res.stderr
    run = json.loads(res.stdout)
    assert run["versionLabel"] == "cand-1" and run["runnerMode"] == "runner"
    assert run["gate"] == {"max_regressions": 0, "min_pass_rate": 0.9}
    assert run["extra"]["scenarioSuiteId"] == suite_id
    assert f"Launched scenario suite {suite_id} as run {run['id']}" in res.stderr
    assert f"neens eval run --run-id {run['id']}" in res.stderr
    plain_out = run_cli(["stress", "launch", suite_id, "--version-label", "cand-2"], env)
    assert plain_out.returncode == 0
    assert plain_out.stdout.strip().startswith("ppr_")


def test_a_failed_generation_exits_2_with_the_servers_reason(plain: Sandbox) -> None:
    env = plain.agent_env()
    gen = run_cli(["stress", "generate", "empty", "--failure-mode", "fm_empty", "--wait",
                   "--poll-interval", "0.2"], env)
    assert gen.returncode == 2
    line = one_error_line(gen.stderr)
    assert "scenario generation failed" in line
    assert "no scenario could be generated" in line
    suite_id = gen.stdout.strip()
    got = run_cli(["stress", "get", suite_id], env)
    assert got.returncode == 2
    assert "failed: no scenario could be generated" in got.stderr
    assert "no scenario could be generated" in one_error_line(got.stderr)
    launch = run_cli(["stress", "launch", suite_id, "--version-label", "v"], env)
    assert launch.returncode == 2
    assert "not ready" in one_error_line(launch.stderr)


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["stress", "generate", "x"], "needs --failure-mode"),
        (["stress", "generate", "x", "--failure-mode", "fm_refund", "--per-mode", "0"],
         "--per-mode must be from 1 to 25"),
        (["stress", "generate", "x", "--failure-mode", "fm_refund", "--strategy", "replay"],
         "replay is always on"),
        (["stress", "generate", "x", "--failure-mode", "fm_nope"], "fm_nope"),
        (["stress", "get", "sts_nope"], "HTTP 404"),
        (["stress", "get", " "], "the SUITE id is empty"),
        (["stress", "launch", "sts_nope", "--version-label", "v"], "HTTP 404"),
        (["stress", "launch", "sts_x", "--version-label", ""], "--version-label is empty"),
        (["stress", "launch", "sts_x", "--version-label", "v", "--baseline", "yesterday"],
         "is not a baseline"),
        (["stress", "launch", "sts_x", "--version-label", "v", "--runner-mode", "runner",
          "--agent-connection", "c"], "--agent-connection is for push runs"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(plain: Sandbox, args: list[str], needle: str) -> None:
    res = run_cli(args, plain.agent_env())
    assert res.returncode == 2, res.stderr
    assert needle in one_error_line(res.stderr)


def test_no_base_url_is_a_usage_error(plain: Sandbox) -> None:
    env = plain.agent_env()
    del env["NEENS_BASE_URL"]
    res = run_cli(["stress", "get", "sts_x"], env)
    assert res.returncode == 2
    assert "no Neens base URL" in one_error_line(res.stderr)
