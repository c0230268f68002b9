"""Sharding on the CI engine (issue 10): ``--create --only-create``, four ``--shard I/4``
processes, then ``--finish`` reach the unsharded run's verdict; a missing shard is refused
by item. Real sandbox, real example agent (behind the recording wrapper), real CLI."""

from __future__ import annotations

import json
import subprocess

import pytest

from tests.helpers import PY, ROOT, run_cli, start_sandbox
from tests.integration.scale_support import KEY, recorded, recorded_agent, write_seed

ITEMS = 12
FAILING = (3, 8)  # these items fail on purpose: the verdict is a real, mixed one
GATE = ["--min-pass-rate", "0.9"]  # 10/12 passes => gate fails => exit 1


@pytest.fixture
def sandbox(tmp_path):
    sb = start_sandbox(tmp_path, seed=write_seed(tmp_path / "seed.yaml", ITEMS,
                                                  failing=FAILING), api_key=KEY)
    yield sb
    sb.stop()


def cli(sandbox, args, *, record=None, timeout=240):
    env = sandbox.agent_env(**({"RECORD_FILE": str(record)} if record else {}))
    proc = run_cli(args, env, timeout=timeout)
    for stream in (proc.stdout, proc.stderr):
        assert KEY not in stream and "Traceback" not in stream, stream
    return proc


def start_shard(sandbox, run_id, index, total, record):
    env = sandbox.agent_env(RECORD_FILE=str(record))
    return subprocess.Popen(
        [PY, "-m", "neens_action", "eval", "run", "--run-id", run_id, "--shard",
         f"{index}/{total}", "--concurrency", "2", "--json", "--", *recorded_agent()],
        env=env, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def create_only(sandbox, label):
    proc = cli(sandbox, ["eval", "run", "--create", "--only-create", "--dataset", "ds_scale",
                         "--version-label", label, *GATE])
    assert proc.returncode == 0, proc.stderr
    run_id = proc.stdout.strip()
    assert run_id and "\n" not in run_id  # just the id, for $(...) in a CI script
    run = sandbox.get(f"/preprod-evals/{run_id}").json()
    assert run["status"] == "awaiting_traces"
    return run_id


def run_shards(sandbox, run_id, indexes, total, tmp_path):
    procs = {i: start_shard(sandbox, run_id, i, total, tmp_path / f"shard-{i}.rec")
             for i in indexes}
    docs = {}
    for i, proc in procs.items():
        out, err = proc.communicate(timeout=300)
        assert proc.returncode == 0, err
        assert KEY not in out + err and "Traceback" not in err
        docs[i] = json.loads(out)
        assert docs[i]["mode"] == "shard" and docs[i]["verdict"] == "replayed"
        assert "the run is not started" in err
    return docs


def verdict_of(doc):
    items = {i["datasetVersionItemId"]: i["passed"] for i in doc["run"]["items"]}
    return (doc["exitCode"], doc["verdict"], doc["gatePassed"], doc["summary"]["passRate"],
            items)


def test_four_shards_then_finish_equal_the_unsharded_run(sandbox, tmp_path):
    whole = cli(sandbox, ["eval", "run", "--create", "--dataset", "ds_scale", "--version-label",
                          "whole", *GATE, "--concurrency", "4", "--json", "--",
                          *recorded_agent()], record=tmp_path / "whole.rec")
    assert whole.returncode == 1, whole.stderr
    expected = verdict_of(json.loads(whole.stdout))
    assert expected[3] == pytest.approx(10 / 12)

    run_id = create_only(sandbox, "sharded")
    docs = run_shards(sandbox, run_id, range(1, 5), 4, tmp_path)
    shares = {i: recorded(tmp_path / f"shard-{i}.rec") for i in range(1, 5)}
    every = [item for share in shares.values() for item in share]
    assert sorted(every) == sorted(f"s_{i:03d}" for i in range(1, ITEMS + 1))  # exactly once
    assert sorted(len(s) for s in shares.values()) == [3, 3, 3, 3]  # balanced
    for i, doc in docs.items():
        assert doc["shard"] == {"index": i, "total": 4, "items": 3, "totalItems": ITEMS}
        assert sorted(x["itemId"] for x in doc["items"]) == sorted(shares[i])
    assert sandbox.get(f"/preprod-evals/{run_id}").json()["status"] == "awaiting_traces"

    fin = cli(sandbox, ["eval", "run", "--run-id", run_id, "--finish", "--json"])
    assert fin.returncode == 1, fin.stderr
    doc = json.loads(fin.stdout)
    assert doc["mode"] == "finish" and doc["missingItems"] == []
    assert verdict_of(doc) == expected
    run = sandbox.get(f"/preprod-evals/{run_id}").json()
    assert run["ciResult"]["verdict"] == "blocked" and run["ciResult"]["exit_code"] == 1


def test_a_missing_shard_is_refused_by_item_then_finishes_once_it_ran(sandbox, tmp_path):
    run_id = create_only(sandbox, "missing")
    docs = run_shards(sandbox, run_id, [1, 2, 4], 4, tmp_path)
    done = {x["itemId"] for d in docs.values() for x in d["items"]}
    lost = sorted({f"s_{i:03d}" for i in range(1, ITEMS + 1)} - done)
    assert len(lost) == 3

    fin = cli(sandbox, ["eval", "run", "--run-id", run_id, "--finish"])
    assert fin.returncode == 2
    errors = [line for line in fin.stderr.splitlines() if line.startswith("neens: error:")]
    assert len(errors) == 1, fin.stderr
    assert f"3 of {ITEMS} item(s) of run {run_id} have no trace" in errors[0]
    for item in lost:
        assert item in errors[0]
    assert sandbox.get(f"/preprod-evals/{run_id}").json()["status"] == "awaiting_traces"

    run_shards(sandbox, run_id, [3], 4, tmp_path)
    assert sorted(recorded(tmp_path / "shard-3.rec")) == lost
    fin = cli(sandbox, ["eval", "run", "--run-id", run_id, "--finish", "--json"])
    assert fin.returncode == 1, fin.stderr
    assert json.loads(fin.stdout)["summary"]["passRate"] == pytest.approx(10 / 12)


def test_only_create_json_and_a_shard_of_a_finished_run(sandbox):
    proc = cli(sandbox, ["eval", "run", "--create", "--only-create", "--json", "--dataset",
                         "ds_scale", "--version-label", "j1"])
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["mode"] == "create" and doc["verdict"] == "created"
    run_id = doc["runId"]
    assert doc["next"]["finish"] == f"neens eval run --run-id {run_id} --finish"
    assert sandbox.post(f"/preprod-evals/{run_id}/cancel").status_code == 200
    shard = cli(sandbox, ["eval", "run", "--run-id", run_id, "--shard", "1/2", "--",
                          "true"])
    assert shard.returncode == 2
    assert shard.stderr.strip().splitlines() == [
        f"neens: error: run {run_id} is already cancelled: it takes no more traces "
        "(create a new run)"]
