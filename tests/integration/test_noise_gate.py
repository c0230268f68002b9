"""Repeats and history through the real sandbox with a seeded nondeterministic agent."""

from __future__ import annotations

import json

import pytest

from tests.helpers import PY, ROOT, start_sandbox
from tests.integration.test_eval_run import cli, created_run_id

NOISY = [PY, str(ROOT / "tests" / "integration" / "noise_agent.py")]
CREATE = ["eval", "run", "--create", "--dataset", "ds_refunds", "--concurrency", "3"]


@pytest.fixture
def sandbox(tmp_path):
    sb = start_sandbox(tmp_path)
    yield sb
    sb.stop()


def _main_run(sandbox, label: str, **env: str) -> str:
    proc = cli(sandbox, [*CREATE, "--version-label", label, "--branch", "main", "--baseline",
                         "branch:main", "--", *NOISY], **env)
    assert proc.returncode == 0, proc.stderr
    return created_run_id(proc.stderr)


def test_six_items_k2_n2_is_inconclusive_warn_by_default_block_on_request(sandbox):
    for i in range(2):
        _main_run(sandbox, f"main-{i}", NOISE_FLAKY="7", NOISE_SEED=f"m{i}")
    args = [*CREATE, "--version-label", "pr-1", "--branch", "feat", "--baseline",
            "branch:main", "--repeat", "2", "--baseline-runs", "2", "--max-regressions", "0",
            "--json", "--", *NOISY]
    warn = cli(sandbox, args, NOISE_FLAKY="7", NOISE_SEED="pr")
    assert warn.returncode == 0, warn.stderr
    doc = json.loads(warn.stdout)
    assert doc["verdict"] == "warned", doc["verdict"]
    assert warn.stderr.count("Created run ") == 2
    assert "History: 2 run(s) of the default branch" in warn.stderr
    rep2 = [ln.split()[2] for ln in warn.stderr.splitlines() if "(repetition 2/2)" in ln]
    run2 = sandbox.get(f"/preprod-evals/{rep2[0]}").json()
    first = sandbox.get(f"/preprod-evals/{doc['runId']}").json()
    assert run2["datasetVersionId"] == first["datasetVersionId"]
    assert first["branch"] == "feat" and run2.get("branch") is None
    # the build verdict reported to Neens carries the noise rules
    rules = {r["rule"]: r for r in first["ciResult"]["rules"]}
    assert rules["noise:noise verdict"]["outcome"] == "inconclusive"
    assert rules["noise:max-regressions"]["threshold"] == "0"
    assert first["ciResult"]["verdict"] == "warned"
    block = cli(sandbox, [*args[:-len(NOISY) - 1], "--on-inconclusive", "block", "--",
                          *NOISY], NOISE_FLAKY="7", NOISE_SEED="pr")
    assert block.returncode == 1, block.stderr
    assert json.loads(block.stdout)["verdict"] == "blocked"


def test_history_chain_ends_at_a_production_window(sandbox):
    ids = [_main_run(sandbox, f"main-{i}") for i in range(5)]
    proc = cli(sandbox, [*CREATE, "--version-label", "pr-h", "--branch", "feat",
                         "--baseline", "branch:main", "--baseline-runs", "10", "--", *NOISY])
    assert proc.returncode in (0, 1), proc.stderr
    # the first main run was compared with the production window: the chain ends there
    assert "History: 5 run(s) of the default branch (reached a production window" in \
        proc.stderr, proc.stderr
    assert ids[-1] in sandbox.get(f"/preprod-evals/{created_run_id(proc.stderr)}").text
