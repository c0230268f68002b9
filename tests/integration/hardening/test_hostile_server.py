"""Issue 17: a hostile Neens behind the CI front door on GitHub. Each answer ends in exit 2
with one error annotation, and ``$GITHUB_OUTPUT`` and the job summary are still written; a
lone surrogate from the server does not stop publishing."""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path

import pytest

from tests.fakes.gh_runner_log import run_commands
from tests.fakes.github_server import parse_outputs
from tests.helpers import PY, ROOT
from tests.integration.broken_neens import RUN_ID, BrokenNeens, Raw, good_run
from tests.integration.test_bad_input import DEEP, DRIP_RUN, GET_ITEMS, GET_RUN, KEY, base_env
from tests.integration.test_bad_input import endless_items as endless

UNSCORED = good_run(completed=0, aggregate={"passRate": None, "passed": 0, "failed": 0},
                    items=[{"datasetVersionItemId": "it_1", "input": "q", "passed": None,
                            "score": None, "error": "no trace captured"}])
CASES = {
    "drip": ({GET_RUN: Raw(200, DRIP_RUN, drip=0.5)}, {"NEENS_REQUEST_BUDGET": "2"},
             "no complete answer from Neens within 2 s"),
    "deep": ({GET_RUN: Raw(200, DEEP)}, {}, "nested too deeply"),
    "endless": ({GET_ITEMS: Raw(200, stream=endless)}, {"NEENS_MAX_ITEMS": "500"},
                "more than 500 items"),
    "non-utf8": ({GET_RUN: Raw(200, b'{"id": "ppr_1", "status": "\xff"}')}, {}, "non-JSON"),
    # inconsistent answers fail closed: a gate that says passed is not read from a run that
    # did not complete or scored nothing, whatever no-gate says
    "cancelled-but-passed": ({GET_RUN: Raw(200, good_run("cancelled"))}, {}, "cancelled"),
    "none-scored-but-passed": ({GET_RUN: Raw(200, UNSCORED)}, {}, "no item was scored"),
    "no-gate-none-scored": ({GET_RUN: Raw(200, UNSCORED)}, {"INPUT_NO-GATE": "true"},
                            "no item was scored"),
}


def _front_door(tmp: Path, url: str, extra: dict[str, str]) -> tuple[
        subprocess.CompletedProcess[str], float]:
    for name in ("output.txt", "summary.md"):
        (tmp / name).write_text("")
    env = base_env(url)
    env.update({"GITHUB_ACTIONS": "true", "GITHUB_WORKSPACE": str(tmp),
                "GITHUB_OUTPUT": str(tmp / "output.txt"),
                "GITHUB_STEP_SUMMARY": str(tmp / "summary.md"),
                "INPUT_BASE-URL": url, "INPUT_API-KEY": KEY, "INPUT_RUN-ID": RUN_ID,
                "INPUT_VERSION-LABEL": "v1", "INPUT_COMMAND": "true", "INPUT_COMMENT": "off",
                "INPUT_POLL-INTERVAL": "0.2", **extra})
    started = time.monotonic()
    proc = subprocess.run([PY, str(ROOT / "entrypoint.py")], env=env, cwd=tmp,
                          capture_output=True, text=True, timeout=120)
    return proc, time.monotonic() - started


@pytest.mark.parametrize("name", list(CASES))
def test_hostile_answer_is_exit_2_with_outputs_and_summary(name: str, tmp_path: Path) -> None:
    routes, extra, expect = CASES[name]
    with BrokenNeens(routes) as server:
        proc, took = _front_door(tmp_path, server.url, extra)
    assert proc.returncode == 2, proc.stderr[-2000:]
    assert "Traceback" not in proc.stderr + proc.stdout
    errors = [c for c in run_commands(proc.stderr) if c.name == "error"]
    assert len(errors) == 1 and expect in errors[0].data, proc.stderr[-2000:]
    outputs = parse_outputs((tmp_path / "output.txt").read_text())
    assert outputs["exit-code"] == "2" and outputs["verdict"] == "errored"
    assert expect in (tmp_path / "summary.md").read_text().replace("\\", "")
    if name == "drip":
        assert took < 2 + 10  # one budget (no retry of a dripping answer) plus start-up


def test_a_lone_surrogate_does_not_stop_publishing(tmp_path: Path) -> None:
    run = good_run(versionLabel="v1", error=None)
    body = json.dumps(run).replace('"v1"', '"v1 \\ud800 label"').replace(
        '"input": "q"', '"input": "q \\udfff"')
    with BrokenNeens({GET_RUN: Raw(200, body)}) as server:
        proc, _ = _front_door(tmp_path, server.url, {})
    assert proc.returncode in (0, 1), proc.stderr[-2000:]
    assert "Traceback" not in proc.stderr
    outputs = parse_outputs((tmp_path / "output.txt").read_text(encoding="utf-8"))
    assert outputs["run-id"] == RUN_ID and outputs["verdict"] in ("passed", "blocked")
    assert (tmp_path / "summary.md").read_text(encoding="utf-8").strip()
