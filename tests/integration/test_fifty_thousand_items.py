"""A 50,000-item run through the real sandbox and the real CLI finishes in one ``/start``:
no client read timeout, no re-sent ``/start``, every item replayed and counted; with
``--json`` and ``--junit`` every item is in both outputs, written from the items spilled to
disk (``neens_action/spill.py``), the CLI's peak memory staying small (a coarse guard).

Lean on purpose (it runs in every CI round): two warm workers that answer at once and send
no trace (worker mode: no process per item), and ``--grace 0`` so the sandbox closes every
untraced item as soon as the run starts. What is proved is the size: the create answer,
``/start`` and the terminal read of 50,000 items within the CLI's 30 s read timeout.
"""

from __future__ import annotations

import json
import re
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from tests.helpers import PY, ROOT, run_cli, start_sandbox

KEY = "nk_live_fifty_0123456789abcdef"
ITEMS = 50_000
WORKER = """\
import sys
sys.path.insert(0, {root!r})
from neens_action.agent import serve
serve(lambda prompt: "ok")
"""


def write_seed(path: Path) -> Path:
    # JSON is YAML: written directly, it is read by the sandbox's YAML loader like any seed.
    seed = {"api_keys": [KEY],
            "judges": [{"id": "j_answer", "metric": "correctness", "kind": "contains"}],
            "datasets": [{"id": "ds_big", "name": "big", "judges": ["j_answer"], "items": [
                {"id": f"b_{i}", "input": f"Refund for order {i}?",
                 "expected_output": f"${i}.00"} for i in range(1, ITEMS + 1)]}]}
    path.write_text(json.dumps(seed))
    return path


@pytest.mark.timeout(300)
def test_a_fifty_thousand_item_run_finishes_with_one_start(tmp_path: Path) -> None:
    sb = start_sandbox(tmp_path, seed=write_seed(tmp_path / "seed.yaml"), api_key=KEY,
                       extra=["--grace", "0"])
    worker = tmp_path / "worker.py"
    worker.write_text(WORKER.format(root=str(Path(__file__).resolve().parents[2])))
    env = {k: v for k, v in sb.agent_env().items() if not k.startswith("OTEL_")}
    try:
        proc = run_cli(["eval", "run", "--create", "--dataset", "ds_big", "--version-label",
                        "big", "--workers", "2", "--poll-interval", "0.5", "--",
                        "python3", str(worker)], env, timeout=280)
    finally:
        sb.stop()
    err = proc.stderr
    assert proc.returncode == 2, err[-3000:]  # nothing was traced: nothing measured, a run error
    assert "Traceback" not in err and "timed out" not in err.lower(), err[-3000:]
    assert f"Command finished for {ITEMS}/{ITEMS} item(s) with rc=0" in err, err[-3000:]
    assert f"  items not passing ({ITEMS} of {ITEMS}):" in err, err[-3000:]
    run_id = re.search(r"Created run (\S+)", err).group(1)
    log = sb.log.read_text()
    starts = re.findall(rf"POST /preprod-evals/{run_id}/start -> (\d+)", log)
    assert starts == ["200"], (starts, log[-3000:])  # answered once, never re-sent


# Before the items were spilled, --json held every item several times over: 654 MiB at
# 50,000 items. A coarse guard only (the interpreter and its imports are ~32 MiB; the bench,
# ``python -m bench scale --only rss``, has the figures).
PEAK_LIMIT = 128 * 2**20
# Started by this launcher, which reports the CLI's ``wait4`` figures: a child's ``ru_maxrss``
# counts the memory of the process it was forked from (here, pytest's).
LAUNCHER = """\
import os, sys
pid = os.posix_spawn(sys.argv[2], sys.argv[2:], os.environ)
_, status, usage = os.wait4(pid, 0)
with open(sys.argv[1], "w") as out:
    out.write(f"{usage.ru_maxrss} {os.waitstatus_to_exitcode(status)}")
"""


@pytest.mark.timeout(420)
def test_a_fifty_thousand_item_run_writes_every_item_to_json_and_junit(tmp_path: Path) -> None:
    sb = start_sandbox(tmp_path, seed=write_seed(tmp_path / "seed.yaml"), api_key=KEY,
                       extra=["--grace", "0"])
    worker = tmp_path / "worker.py"
    worker.write_text(WORKER.format(root=str(Path(__file__).resolve().parents[2])))
    env = {k: v for k, v in sb.agent_env().items() if not k.startswith("OTEL_")}
    out, junit = tmp_path / "out.json", tmp_path / "junit.xml"
    args = ["eval", "run", "--create", "--dataset", "ds_big", "--version-label", "big",
            "--workers", "2", "--poll-interval", "0.5", "--json", "--junit", str(junit),
            "--", "python3", str(worker)]
    rss = tmp_path / "rss.txt"
    try:
        with out.open("w") as stdout, (tmp_path / "err.txt").open("w") as stderr:
            subprocess.run([PY, "-c", LAUNCHER, str(rss), PY, "-m", "neens_action", *args],
                           env=env, cwd=ROOT, stdin=subprocess.DEVNULL, stdout=stdout,
                           stderr=stderr, timeout=400, check=False)
    finally:
        sb.stop()
    maxrss, code = (int(x) for x in rss.read_text().split())
    err = (tmp_path / "err.txt").read_text()
    assert code == 2, err[-3000:]  # nothing traced: a run error
    assert "Traceback" not in err and "timed out" not in err.lower(), err[-3000:]
    run_id = re.search(r"Created run (\S+)", err).group(1)
    starts = re.findall(rf"POST /preprod-evals/{run_id}/start -> (\d+)", sb.log.read_text())
    assert starts == ["200"], starts  # answered once, never re-sent

    doc = json.loads(out.read_text(encoding="utf-8"))  # the whole document, well-formed
    assert doc["runId"] == run_id and doc["exitCode"] == 2
    ids = [f"b_{i}" for i in range(1, ITEMS + 1)]
    assert [row["datasetVersionItemId"] for row in doc["run"]["items"]] == ids
    assert all(row["error"] == "no trace captured" for row in doc["run"]["items"])
    assert [row["itemId"] for row in doc["items"]] == ids
    assert all(row["returncode"] == 0 and row["state"] == "unscored" for row in doc["items"])
    report = doc["report"]
    assert [item["item_id"] for item in report["items"]] == ids
    assert [item["input"] for item in report["items"][:2]] == [
        "Refund for order 1?", "Refund for order 2?"]
    assert [f["item_id"] for f in report["agent_failures"]] == ids
    assert report["agent_total"] == ITEMS

    cases = [el.get("name") for _, el in ET.iterparse(junit) if el.tag == "testcase"]
    assert cases == ["run", *ids]  # the run error's case, then one per item
    root = ET.parse(junit).getroot()
    assert root.get("tests") == str(ITEMS + 1) and root.get("errors") == str(ITEMS + 1)

    peak = maxrss * 1024  # the CLI's (its reaped workers are far smaller)
    assert peak < PEAK_LIMIT, f"peak RSS {peak / 2**20:.1f} MiB"
