"""CI modes create -> shard -> finish through the container entry point (``python
entrypoint.py``, no arguments), as a GitLab ``parallel: 3`` pipeline would run them: the
create job's dotenv carries NEENS_RUN_ID to the shard jobs (CI_NODE_INDEX/CI_NODE_TOTAL pick
each share) and to the finish job, which gates. Plus the GitHub ``run-id`` output."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.fakes.github_server import parse_outputs
from tests.helpers import PY, ROOT, start_sandbox
from tests.integration.scale_support import KEY, recorded, recorded_agent, write_seed

ITEMS = 9


@pytest.fixture
def sandbox(tmp_path):
    sb = start_sandbox(tmp_path, seed=write_seed(tmp_path / "seed.yaml", ITEMS, failing=(4,)),
                       api_key=KEY)
    yield sb
    sb.stop()


def gitlab_job(sb, ws: Path, inputs: dict[str, str], **env: str) -> subprocess.CompletedProcess:
    full = sb.agent_env(GITLAB_CI="true", CI="true", CI_PROJECT_DIR=str(ws),
                        CI_JOB_NAME="neens", CI_COMMIT_SHA="d" * 40, **env)
    for var in ("NEENS_BASE_URL", "OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_HEADERS"):
        full.pop(var, None)  # the inputs (and the masked NEENS_API_KEY variable) are enough
    full["NEENS_INPUT_BASE_URL"] = sb.url
    full.update({f"NEENS_INPUT_{k.upper().replace('-', '_')}": v for k, v in inputs.items()})
    proc = subprocess.run([PY, str(ROOT / "entrypoint.py")], env=full, cwd=ws,
                          capture_output=True, text=True, timeout=300)
    assert "Traceback" not in proc.stderr and KEY not in proc.stdout + proc.stderr, proc.stderr
    return proc


def dotenv(ws: Path) -> dict[str, str]:
    return dict(line.split("=", 1) for line in (ws / "neens.env").read_text().splitlines())


def test_gitlab_parallel_pipeline_create_shard_finish(sandbox, tmp_path):
    jobs = {name: tmp_path / name for name in ("create", "s1", "s2", "s3", "finish")}
    for ws in jobs.values():
        ws.mkdir()
    create = gitlab_job(sandbox, jobs["create"], {"mode": "create", "dataset": "ds_scale",
                                                  "version-label": "gl-1",
                                                  "min-pass-rate": "0.95"})
    assert create.returncode == 0, create.stderr
    env = dotenv(jobs["create"])
    run_id = env["NEENS_RUN_ID"]
    assert run_id.startswith("ppr_") and env["NEENS_VERDICT"] == "created"
    assert json.loads((jobs["create"] / "neens-result.json").read_text())["mode"] == "create"

    command = " ".join(recorded_agent())
    for i in (1, 2, 3):
        ws = jobs[f"s{i}"]
        # GitLab hands the create job's dotenv (NEENS_RUN_ID) to the jobs that need it
        proc = gitlab_job(sandbox, ws, {"mode": "shard", "command": command,
                                        "concurrency": "2"},
                          CI_NODE_INDEX=str(i), CI_NODE_TOTAL="3", NEENS_RUN_ID=run_id,
                          RECORD_FILE=str(tmp_path / f"rec-{i}"))
        assert proc.returncode == 0, proc.stderr
        doc = json.loads((ws / "neens-result.json").read_text())
        assert doc["shard"] == {"index": i, "total": 3, "items": 3, "totalItems": ITEMS}
    every = [x for i in (1, 2, 3) for x in recorded(tmp_path / f"rec-{i}")]
    assert sorted(every) == [f"s_{i:03d}" for i in range(1, ITEMS + 1)]

    finish = gitlab_job(sandbox, jobs["finish"], {"mode": "finish", "poll-interval": "0.5"},
                        NEENS_RUN_ID=run_id)
    assert finish.returncode == 1, finish.stderr  # 8/9 passed < 0.95
    env = dotenv(jobs["finish"])
    assert env["NEENS_VERDICT"] == "blocked" and env["NEENS_RUN_ID"] == run_id
    assert env["NEENS_PASS_RATE"].startswith("0.888")
    run = sandbox.get(f"/preprod-evals/{run_id}").json()
    assert run["ciResult"]["verdict"] == "blocked"


def test_shard_mode_needs_a_share_and_finish_refuses_a_command(sandbox, tmp_path):
    proc = gitlab_job(sandbox, tmp_path, {"mode": "shard", "run-id": "ppr_x",
                                          "command": "true"})
    assert proc.returncode == 2
    assert "neens: error: input shard: is required for mode shard" in proc.stderr
    proc = gitlab_job(sandbox, tmp_path, {"mode": "shard", "run-id": "ppr_x", "command": "true",
                                          "shard": "4/3"})
    assert proc.returncode == 2 and "input shard:" in proc.stderr
    proc = gitlab_job(sandbox, tmp_path, {"mode": "finish", "run-id": "ppr_x",
                                          "command": "true"})
    assert proc.returncode == 2
    assert "input command: does not apply to mode finish" in proc.stderr


def test_github_create_job_outputs_the_run_id(sandbox, tmp_path):
    out = tmp_path / "output.txt"
    out.write_text("")
    env = sandbox.agent_env(GITHUB_ACTIONS="true", CI="true", GITHUB_WORKSPACE=str(tmp_path),
                            GITHUB_OUTPUT=str(out), GITHUB_REPOSITORY="acme/agent",
                            GITHUB_SHA="e" * 40, GITHUB_REF="refs/heads/main")
    env.update({"INPUT_MODE": "create", "INPUT_DATASET": "ds_scale",
                "INPUT_BASE-URL": sandbox.url, "INPUT_API-KEY": KEY})
    proc = subprocess.run([PY, str(ROOT / "entrypoint.py")], env=env, cwd=tmp_path,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    outputs = parse_outputs(out.read_text())
    assert outputs["run-id"].startswith("ppr_") and outputs["verdict"] == "created"
    run = sandbox.get(f"/preprod-evals/{outputs['run-id']}").json()
    assert run["versionLabel"] == "e" * 12 and run["status"] == "awaiting_traces"
