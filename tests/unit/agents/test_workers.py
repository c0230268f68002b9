"""WorkerRunner with real worker processes (tests/unit/agents/worker_script.py): items are
handed out one at a time, and a worker that exits early, breaks the protocol, prints outside
it, hangs or is interrupted costs only the item it had."""

from __future__ import annotations

import json
import os
import sys
import threading
import time
from pathlib import Path

from neens_action.agents.correlation import ItemEnv
from neens_action.agents.driver import make_runner
from neens_action.agents.runner import Job, Runner
from neens_action.agents.workers import WorkerRunner
from tests.helpers import alive, wait_for

PY = sys.executable
SCRIPT = [PY, str(Path(__file__).with_name("worker_script.py"))]


def jobs(n: int, **env: str) -> list[Job]:
    make = ItemEnv(run_id="ppr_1", version_label="v1", base={**os.environ, **env})
    return [Job(key=f"it_{i}", input=f"prompt {i}", env=make(f"it_{i}", f"prompt {i}"))
            for i in range(n)]


def runner(workers: int = 2, **kw) -> WorkerRunner:
    lines: list[str] = []
    r = WorkerRunner(SCRIPT, workers=workers, log=lines.append, grace=1.0, **kw)
    r.lines = lines  # type: ignore[attr-defined]
    return r


def pids(log: Path) -> dict[str, str]:
    return {iid: pid for pid, iid in (line.split() for line in log.read_text().splitlines())}


def test_items_share_warm_workers_and_get_their_own_environment(tmp_path):
    log, echo = tmp_path / "log", tmp_path / "echo"
    r = runner(workers=2, keep_output=True)
    out = r.run(jobs(10, WORKER_LOG=str(log), WORKER_ECHO=str(echo)))
    assert [inv.item_id for inv in out] == [f"it_{i}" for i in range(10)]
    assert all(inv.ok and inv.returncode == 0 for inv in out), [inv.error for inv in out]
    assert r.started == 2 and len(set(pids(log).values())) == 2  # 10 items, 2 processes
    assert "answer to prompt 3" in out[3].output and "working on it_3" in out[3].output
    for line in echo.read_text().splitlines():
        seen = json.loads(line)
        n = seen["id"].split("_")[1]
        assert seen["input"] == f"prompt {n}"
        assert seen["env"]["NEENS_DATASET_ITEM_ID"] == seen["id"]
        assert seen["resource"]["neens.dataset_item_id"] == seen["id"]
        assert seen["resource"]["neens.eval_run_id"] == "ppr_1"
    assert len(r.lines) == 10 and all(" ok (" in line for line in r.lines)


def test_a_worker_that_exits_mid_item_fails_only_that_item_and_is_replaced(tmp_path):
    log = tmp_path / "log"
    out = runner(workers=1).run(jobs(4, WORKER_DO="exit", WORKER_ON="prompt 1",
                                     WORKER_LOG=str(log)))
    assert [inv.ok for inv in out] == [True, False, True, True]
    bad = out[1]
    assert bad.returncode == 5
    assert bad.error == "worker exited (rc=5) before answering item it_1"
    assert "dying on it_1" in bad.output  # its stderr tail goes with the item it failed
    seen = pids(log)
    assert seen["it_0"] == seen["it_1"] != seen["it_2"] == seen["it_3"]


def test_a_worker_that_exits_before_reading_fails_each_item_it_gets():
    out = runner(workers=2).run(jobs(3, WORKER_DO="early"))
    assert not any(inv.ok for inv in out)
    for inv in out:
        assert inv.returncode == 4
        assert inv.error == f"worker exited (rc=4) before answering item {inv.item_id}"
        assert "cannot start: missing model file" in inv.output
    # exit 0 without a word of the protocol: most likely a one-shot agent; say so
    quiet = runner(workers=1).run(jobs(1, WORKER_DO="silent-exit"))[0]
    assert quiet.returncode == 0 and not quiet.ok
    assert quiet.error.startswith("worker exited (rc=0) before answering item it_0: it never "
                                  "answered an item: does the command speak the worker "
                                  "protocol?")


def test_malformed_protocol_lines_fail_the_item_naming_it(tmp_path):
    for do, why in (("garbage", "a protocol line that is not JSON (Expecting value)"),
                    ("wrong-id", "an answer for item 'someone-else' while 'it_1' was in hand")):
        log = tmp_path / f"{do}.log"
        started = time.monotonic()
        out = runner(workers=1).run(jobs(3, WORKER_DO=do, WORKER_ON="prompt 1",
                                         WORKER_LOG=str(log)))
        assert time.monotonic() - started < 20  # not the 60 s the worker sleeps
        assert [inv.ok for inv in out] == [True, False, True]
        assert out[1].error == f"worker broke the protocol on item it_1: {why}"
        seen = pids(log)
        assert seen["it_0"] == seen["it_1"] != seen["it_2"]  # replaced after the bad line
        assert not alive(int(seen["it_1"]))


def test_stdout_outside_the_protocol_is_output_not_an_error():
    out = runner(workers=1).run(jobs(3, WORKER_DO="stray", WORKER_ON="prompt 1"))
    assert all(inv.ok for inv in out)
    r = runner(workers=1, keep_output=True)
    stray = r.run(jobs(2, WORKER_DO="stray", WORKER_ON="prompt 1"))[1]
    assert stray.ok and r.started == 1
    assert "a debug print on stdout\n{not protocol either}\n" in stray.output


def test_an_agent_error_answer_fails_the_item_and_keeps_the_worker(tmp_path):
    log = tmp_path / "log"
    r = runner(workers=1)
    out = r.run(jobs(3, WORKER_DO="fail", WORKER_ON="prompt 1", WORKER_LOG=str(log)))
    assert [inv.ok for inv in out] == [True, False, True]
    assert out[1].returncode == 1 and out[1].error == "agent error: model refused"
    assert "working on it_1" in out[1].output
    assert r.started == 1 and len(set(pids(log).values())) == 1


def test_a_hung_item_times_out_and_the_rest_finish(tmp_path):
    log = tmp_path / "log"
    out = runner(workers=2, timeout=3).run(jobs(6, WORKER_DO="hang", WORKER_ON="prompt 2",
                                                WORKER_LOG=str(log)))
    assert [inv.ok for inv in out] == [True, True, False, True, True, True]
    hung = out[2]
    assert hung.timed_out and hung.error == "timed out after 3s" and hung.returncode is not None
    assert 2.5 < hung.duration_s < 10
    assert not alive(int(pids(log)["it_2"]))


def test_start_up_counts_towards_the_first_item_and_failures_name_the_command():
    out = runner(workers=1, timeout=1).run([Job("it_0", "x", {**os.environ})])
    assert out[0].ok  # a quick start fits the deadline
    missing = WorkerRunner(["/nonexistent/agent"], workers=1, log=lambda _: None)
    inv = missing.run(jobs(1))[0]
    assert inv.error.startswith("failed to launch command: ")
    assert inv.error.endswith("/nonexistent/agent")


def test_kill_all_stops_every_worker_and_marks_the_rest_not_run(tmp_path):
    log = tmp_path / "log"
    r = runner(workers=2)
    result: list = []
    thread = threading.Thread(target=lambda: result.append(
        r.run(jobs(20, WORKER_DO="hang", WORKER_ON="prompt", WORKER_LOG=str(log)))))
    thread.start()
    assert wait_for(lambda: log.exists() and len(log.read_text().splitlines()) == 2, 20)
    workers = {int(pid) for pid in pids(log).values()}
    r.kill_all()
    thread.join(20)
    assert not thread.is_alive()
    out = result[0]
    assert sum(inv.error == "killed (interrupted)" for inv in out) == 2
    assert sum(inv.error == "not run (interrupted)" for inv in out) == 18
    assert wait_for(lambda: not any(alive(pid) for pid in workers), 10)


def test_workers_exit_at_the_end_of_their_input(tmp_path):
    log = tmp_path / "log"
    r = runner(workers=3)
    r.run(jobs(3, WORKER_LOG=str(log)))
    assert not any(alive(int(pid)) for pid in pids(log).values())
    assert isinstance(make_runner(SCRIPT, workers=2), WorkerRunner)
    assert type(make_runner(SCRIPT, concurrency=2)) is Runner
