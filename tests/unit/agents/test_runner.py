"""Runner: real processes (timeouts kill the whole group, output cap, concurrency, stdin)."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from neens_action.agents import driver, glibc_launcher, launcher
from neens_action.agents.driver import make_runner
from neens_action.agents.runner import Job
from neens_action.errors import UsageError
from tests.helpers import alive, wait_for

PY = sys.executable


@pytest.fixture(autouse=True, params=["posix_spawn", "posix_spawn without pidfd", "Popen",
                                      "portable"])
def agent_launcher(request, monkeypatch):
    """Every runner test runs with each way of starting and waiting for agents (a Runner
    built without NEENS_LAUNCHER picks glibc where it is available, Popen otherwise, and
    the portable path (threads, no poll) where the fast path is unavailable: Windows, here
    forced by making the fast path look unavailable, as NEENS_LAUNCHER=portable does)."""
    if request.param == "portable":
        monkeypatch.setattr(driver, "fast_path_available", lambda: False)
        assert make_runner(["cat"]).launch is launcher.launch_portable
        assert make_runner(["cat"], environ={"NEENS_LAUNCHER": "portable"}).launch is (
            launcher.launch_portable)
    elif request.param == "Popen":
        monkeypatch.setattr(glibc_launcher, "load", lambda: None)  # as without glibc
        assert make_runner(["cat"]).launch is launcher.launch_popen
    else:
        assert make_runner(["cat"]).launch is launcher.launch_glibc  # glibc >= 2.34 (CI, image)
        if request.param.endswith("without pidfd"):
            monkeypatch.setattr(launcher, "open_pidfd", lambda pid: None)
    return request.param


def read_pids(path: Path, n: int, timeout: float = 30.0) -> list[int]:
    assert wait_for(lambda: path.exists() and len(path.read_text().split()) >= n, timeout)
    return [int(x) for x in path.read_text().split()]


def jobs(n: int, text: str = "", **env: str) -> list[Job]:
    base = {**os.environ, **env}
    return [Job(key=f"it_{i}", input=text or f"prompt {i}", env=base) for i in range(n)]


def test_stdin_env_returncode_and_order():
    lines: list[str] = []
    script = ("import os,sys; d=sys.stdin.read(); "
              "print(d, os.environ['X_TAG']); sys.exit(0 if d.endswith('1') else 3)")
    r = make_runner([PY, "-c", script], concurrency=2, log=lines.append)
    out = r.run(jobs(3, X_TAG="tagged"))
    assert [i.item_id for i in out] == ["it_0", "it_1", "it_2"]
    assert [i.returncode for i in out] == [3, 0, 3]
    assert [i.ok for i in out] == [False, True, False]
    assert out[0].output.strip() == "prompt 0 tagged"  # failures keep their output
    assert out[1].output == "prompt 1 tagged\n"  # successes keep a short tail only
    assert sorted(line.split("]")[0] for line in lines if line.startswith("item ")) == [
        "item 1/3 [it_0", "item 2/3 [it_1", "item 3/3 [it_2"]
    assert any("rc=3" in line for line in lines)


def test_keep_ok_false_returns_only_what_did_not_succeed_in_job_order():
    script = "import sys; d=sys.stdin.read(); sys.exit(0 if int(d.split()[1]) % 3 else 4)"
    lines: list[str] = []
    out = make_runner([PY, "-c", script], concurrency=3, log=lines.append).run(
        jobs(10), keep_ok=False)
    assert [i.item_id for i in out] == ["it_0", "it_3", "it_6", "it_9"]
    assert all(i.returncode == 4 for i in out)
    assert sum(1 for line in lines if line.startswith("item ")) == 10  # every item logged


def test_jobs_are_taken_from_a_lazy_sequence_one_at_a_time():
    class Lazy:
        def __init__(self) -> None:
            self.made: list[int] = []

        def __len__(self) -> int:
            return 4

        def __getitem__(self, i: int) -> Job:
            self.made.append(i)
            return Job(key=f"it_{i}", input=f"p{i}", env=dict(os.environ))

    from collections.abc import Sequence

    Sequence.register(Lazy)
    lazy = Lazy()
    out = make_runner(["cat"], log=lambda s: None).run(lazy)  # type: ignore[arg-type]
    assert [i.item_id for i in out] == ["it_0", "it_1", "it_2", "it_3"]
    assert lazy.made == [0, 1, 2, 3]  # never copied into a list up front


def test_log_every_writes_item_lines_together_and_loses_none():
    calls: list[str] = []
    make_runner(["cat"], concurrency=4, log=calls.append, log_every=60).run(jobs(30))
    assert len(calls) == 1  # one write at the end, not thirty
    lines = calls[0].splitlines()
    assert sorted(line.split("]")[0] for line in lines) == sorted(
        f"item {i + 1:>2}/30 [it_{i}" for i in range(30))


def test_log_every_lines_do_not_wait_for_the_end_of_the_run():
    calls: list[str] = []
    slow = [PY, "-c", "import sys, time; sys.stdin.read(); time.sleep(0.6)"]
    make_runner(slow, log=calls.append, log_every=0.05).run(jobs(3))
    assert [c.split("]")[0] for c in calls] == ["item 1/3 [it_0", "item 2/3 [it_1",
                                               "item 3/3 [it_2"]  # each while the next ran


def test_callable_env_and_shell_string():
    calls = []

    def env() -> dict[str, str]:
        calls.append(1)
        return {**os.environ, "GREETING": "hi"}

    r = make_runner('test "$GREETING" = hi && cat >/dev/null', log=lambda s: None, keep_output=True)
    out = r.run([Job("a", "x", env), Job("b", "y", env)])
    assert [i.ok for i in out] == [True, True] and len(calls) == 2


def test_large_stdin_to_agent_that_ignores_it():
    r = make_runner([PY, "-c", "print('done')"], log=lambda s: None, timeout=60)
    out = r.run(jobs(1, text="x" * 1_000_000))
    assert out[0].ok


def test_output_cap_keeps_the_tail():
    script = "import sys; sys.stdout.write('a'*200000 + 'THE-END'); sys.exit(1)"
    r = make_runner([PY, "-c", script], output_cap=4096, log=lambda s: None)
    inv = r.run(jobs(1))[0]
    assert inv.output.endswith("THE-END")
    assert "earlier bytes dropped" in inv.output
    assert len(inv.output) < 4096 + 100


def test_timeout_kills_grandchildren(tmp_path):
    pidfile = tmp_path / "pids"
    script = (f"sleep 300 & echo $! >> {pidfile}; "
              f"sh -c 'sleep 300 & echo $! >> {pidfile}; wait' & echo $! >> {pidfile}; "
              f"echo $$ >> {pidfile}; wait")
    r = make_runner(["sh", "-c", script], timeout=1.0, grace=0.5, log=lambda s: None)
    start = time.monotonic()
    inv = r.run(jobs(1))[0]
    assert time.monotonic() - start < 20
    assert inv.timed_out and not inv.ok
    assert inv.error == "timed out after 1s"
    pids = read_pids(pidfile, 4)
    assert wait_for(lambda: not any(alive(p) for p in pids), 10), \
        [p for p in pids if alive(p)]


def test_term_then_kill_for_agents_ignoring_sigterm(tmp_path):
    # the shell ignores SIGTERM within milliseconds (a Python agent could still be starting
    # when the deadline's SIGTERM lands on a loaded machine); exec keeps it ignored
    script = "trap '' TERM; exec sleep 300"
    r = make_runner(["sh", "-c", script], timeout=1.5, grace=0.5, log=lambda s: None)
    inv = r.run(jobs(1))[0]
    assert inv.timed_out and inv.returncode == -signal.SIGKILL


def test_leftover_background_process_killed_after_normal_exit(tmp_path):
    pidfile = tmp_path / "pids"
    script = f"sleep 300 >/dev/null 2>&1 & echo $! > {pidfile}; exit 0"
    r = make_runner(["sh", "-c", script], log=lambda s: None)
    inv = r.run(jobs(1))[0]
    assert inv.ok
    pid = read_pids(pidfile, 1)[0]
    assert wait_for(lambda: not alive(pid), 10)


def test_escaped_grandchild_cannot_hang_the_runner(tmp_path):
    pidfile = tmp_path / "pids"
    # setsid puts the grandchild outside the agent's group, still holding stdout
    script = f"setsid sleep 300 & echo $! > {pidfile}; sleep 300"
    r = make_runner(["sh", "-c", script], timeout=0.5, grace=0.2, drain=1.0, log=lambda s: None)
    start = time.monotonic()
    try:
        inv = r.run(jobs(1))[0]
        assert inv.timed_out
        assert time.monotonic() - start < 15
    finally:
        for pid in read_pids(pidfile, 1):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)


def test_concurrency_runs_in_parallel():
    r = make_runner([PY, "-c", "import time; time.sleep(1.0)"], concurrency=4, log=lambda s: None)
    start = time.monotonic()
    out = r.run(jobs(4))
    elapsed = time.monotonic() - start
    assert all(i.ok for i in out)
    assert elapsed < 3.5  # sequential would take >= 4 s


def test_sequential_when_concurrency_is_one(tmp_path):
    marker = tmp_path / "running"
    script = ("import os,sys,time; p=sys.argv[1]\n"
              "if os.path.exists(p): sys.exit(9)\n"
              "open(p,'w').close(); time.sleep(0.2); os.remove(p)")
    r = make_runner([PY, "-c", script, str(marker)], concurrency=1, log=lambda s: None)
    assert all(i.ok for i in r.run(jobs(4)))


def test_launch_error_recorded_and_run_continues():
    lines: list[str] = []
    r = make_runner(["/nonexistent/agent"], log=lines.append)
    out = r.run(jobs(2))
    assert all(i.error and i.error.startswith("failed to launch command") for i in out)
    assert len([line for line in lines if line.startswith("item ")]) == 2


def test_progress_lines_and_on_result():
    lines: list[str] = []
    seen: list[str] = []
    r = make_runner([PY, "-c", "pass"], concurrency=2, log=lines.append, progress_every=0.0)
    r.run(jobs(4), on_result=lambda job, inv: seen.append(job.key))
    progress = [line for line in lines if line.startswith("items ")]
    assert progress and all(" done, 0 failed, eta " in line for line in progress)
    assert sorted(seen) == ["it_0", "it_1", "it_2", "it_3"]


def test_kill_all_stops_launching_and_kills(tmp_path):
    pidfile = tmp_path / "pids"
    script = f"echo $$ >> {pidfile}; sleep 300"
    r = make_runner(["sh", "-c", script], concurrency=2, log=lambda s: None)
    result: dict = {}
    t = threading.Thread(target=lambda: result.setdefault("out", r.run(jobs(6))))
    t.start()
    pids = read_pids(pidfile, 2)
    r.kill_all()
    t.join(30)
    assert not t.is_alive()
    out = result["out"]
    assert len(out) == 6 and not any(i.ok for i in out)
    assert sum(1 for i in out if i.error == "not run (interrupted)") == 4
    assert wait_for(lambda: not any(alive(p) for p in pids), 10)
    assert len(pidfile.read_text().split()) == 2


def test_interrupt_in_waiting_thread_kills_agents(tmp_path):
    """An exception raised in the waiting thread (what a signal handler does) kills agents."""
    pidfile = tmp_path / "pids"
    script = f"echo $$ >> {pidfile}; sleep 300"
    r = make_runner(["sh", "-c", script], concurrency=2, log=lambda s: None)

    def interrupt_soon() -> None:
        read_pids(pidfile, 2)
        signal.pthread_kill(threading.main_thread().ident, signal.SIGUSR1)

    class Boom(Exception):
        pass

    def handler(signum, frame):
        raise Boom()

    old = signal.signal(signal.SIGUSR1, handler)
    try:
        threading.Thread(target=interrupt_soon, daemon=True).start()
        try:
            r.run(jobs(4))
            raise AssertionError("expected the interrupt")
        except Boom:
            pass
    finally:
        signal.signal(signal.SIGUSR1, old)
    pids = read_pids(pidfile, 2)
    assert wait_for(lambda: not any(alive(p) for p in pids), 10)
    assert r.stopping


def test_interrupt_while_the_workers_start_kills_the_agents_started(tmp_path, monkeypatch):
    """A signal that lands while the workers are still being started (the first agent is
    already running) stops the agents started so far: none outlives the run."""
    pidfile = tmp_path / "pids"
    script = f"echo $$ >> {pidfile}; sleep 300"
    r = make_runner(["sh", "-c", script], concurrency=2, log=lambda s: None)
    real_start = threading.Thread.start
    started: list[threading.Thread] = []

    def start(thread: threading.Thread) -> None:
        if thread.name == "neens-agent-1":  # the second worker
            read_pids(pidfile, 1)  # the first worker's agent runs: now the signal lands
            raise KeyboardInterrupt
        if thread.name == "neens-agent-0":
            started.append(thread)
        real_start(thread)

    monkeypatch.setattr(threading.Thread, "start", start)
    with pytest.raises(KeyboardInterrupt):
        r.run(jobs(4))
    monkeypatch.setattr(threading.Thread, "start", real_start)
    pids = read_pids(pidfile, 1)
    assert wait_for(lambda: not any(alive(p) for p in pids), 10)
    assert r.stopping and not started[0].is_alive()  # the started worker was waited for


def test_neens_launcher_popen_in_the_environment_makes_the_runner_use_popen(monkeypatch,
                                                                            agent_launcher):
    started: list[list[str]] = []

    class Spy(subprocess.Popen):
        def __init__(self, args, *rest, **kw):
            started.append(list(args))
            super().__init__(args, *rest, **kw)

    monkeypatch.setattr(subprocess, "Popen", Spy)
    r = make_runner([PY, "-c", "print('via popen')"], log=lambda s: None, keep_output=True,
               environ={"NEENS_LAUNCHER": "popen"})
    assert r.launch is launcher.launch_popen
    out = r.run(jobs(2))
    assert [i.output for i in out] == ["via popen\n", "via popen\n"]
    assert len(started) == 2  # each agent started by Popen
    started.clear()
    forced = {"NEENS_LAUNCHER": "glibc"}
    if agent_launcher == "Popen":  # glibc made unavailable: forcing it is a usage error
        with pytest.raises(UsageError, match=r"^NEENS_LAUNCHER=glibc: .* or newer"):
            make_runner(["cat"], environ=forced)
        return
    r = make_runner([PY, "-c", "pass"], log=lambda s: None, environ=forced)
    assert all(i.ok for i in r.run(jobs(2))) and started == []  # and glibc never does


def test_a_bad_neens_launcher_fails_when_the_runner_is_built():
    with pytest.raises(UsageError, match=r"^NEENS_LAUNCHER must be popen, glibc or portable"):
        make_runner(["cat"], environ={"NEENS_LAUNCHER": "vfork"})


def test_descriptors_above_1024_work(high_fds):
    """Pipes and pidfds all numbered >= 1024: every wait is a poll, never a select."""
    script = "import sys; print(sys.stdin.read()); sys.exit(0 if sys.argv[1] == 'x' else 4)"
    r = make_runner([PY, "-c", script, "x"], concurrency=2, log=lambda s: None, keep_output=True)
    out = r.run(jobs(3, text="big fds"))
    assert [(i.returncode, i.output) for i in out] == [(0, "big fds\n")] * 3
    r = make_runner([PY, "-c", script, "y"], timeout=30, log=lambda s: None)
    assert [i.returncode for i in r.run(jobs(2))] == [4, 4]


def test_an_exit_status_that_cannot_be_read_fails_the_item():
    """SIGCHLD ignored: the kernel reaps the agent itself, its status is lost (ECHILD).
    That is never a success (Popen would say 0)."""
    lines: list[str] = []
    r = make_runner([PY, "-c", "import sys; sys.stdin.read()"], log=lines.append, concurrency=2)
    old = signal.signal(signal.SIGCHLD, signal.SIG_IGN)
    try:
        out = r.run(jobs(2))
    finally:
        signal.signal(signal.SIGCHLD, old)
    assert [i.ok for i in out] == [False, False]
    assert [i.returncode for i in out] == [None, None]
    assert all(i.error and i.error.startswith("agent exit status could not be read (")
               for i in out)
    assert sum("agent exit status could not be read" in line for line in lines) == 2
