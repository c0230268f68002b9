"""A 50,000-item run through the real sandbox and the real CLI finishes in one ``/start``:
no client read timeout, no re-sent ``/start``, every item replayed and counted.

Lean on purpose (it runs in every CI round): two warm workers that answer at once and send
no trace (worker mode: no process per item), and ``--grace 0`` so the sandbox closes every
untraced item as soon as the run starts. What is proved is the size: the create answer,
``/start`` and the terminal read of 50,000 items within the CLI's 30 s read timeout.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.helpers import run_cli, start_sandbox

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
