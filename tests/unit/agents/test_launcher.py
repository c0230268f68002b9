"""launcher: both launchers give the child the same start (argv, exactly the environment,
default SIGPIPE, an empty signal mask, its own session, only fds 0-2), clean errors, exits
read with any fd number, unreadable statuses never taken for 0, and the NEENS_LAUNCHER
choice; real processes."""

from __future__ import annotations

import errno
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from neens_action.agents import driver, glibc_launcher, launcher
from neens_action.errors import EXIT_ERROR, UsageError

PY = sys.executable
LAUNCHERS = {"posix_spawn": launcher.launch_glibc, "Popen": launcher.launch_popen}
# exec: the probed process is the agent itself (sh blocks every signal around each fork,
# so reading the shell's own status while it forks a reader would see that, not ours)
SIGNAL_PROBE = ["/bin/sh", "-c", "exec grep -E '^Sig(Ign|Blk)' /proc/self/status"]


@pytest.fixture(params=list(LAUNCHERS))
def launch(request):
    return LAUNCHERS[request.param]


def run(launch, argv, env=None, stdin=b""):
    """Start, feed, read everything, reap; (exit code, output, child)."""
    child = launch(argv, env if env is not None else dict(os.environ))
    assert child.stdin is not None and child.stdout is not None
    os.write(child.stdin, stdin)
    child.close_stdin()
    chunks = []
    while chunk := os.read(child.stdout, 65536):
        chunks.append(chunk)
    assert child.wait(30)
    child.close()
    return child.returncode, b"".join(chunks).decode(), child


def open_fds() -> set[str]:
    return set(os.listdir("/proc/self/fd"))


def inherited_ignored() -> int:
    """The signals this test process was started with ignored, as a mask: a shell's
    background job ignores SIGINT and SIGQUIT, and an agent inherits that as any child would
    (restore_signals resets only what Python itself ignores: SIGPIPE, SIGXFSZ)."""
    mask = 0
    for sig in signal.valid_signals():
        if sig in (signal.SIGPIPE, signal.SIGXFSZ, signal.SIGKILL, signal.SIGSTOP):
            continue
        try:
            if signal.getsignal(sig) == signal.SIG_IGN:
                mask |= 1 << (sig - 1)
        except (OSError, ValueError):
            continue
    return mask


IGNORED = inherited_ignored()


def signal_state(text: str) -> dict[str, int]:
    return {k: int(v, 16) for k, v in (line.split(":\t") for line in text.splitlines())}


def test_argv_stdin_and_both_output_streams(launch):
    script = "import sys; d=sys.stdin.read(); print(sys.argv[1:], d); print('err', file=sys.stderr)"
    rc, out, _ = run(launch, [PY, "-c", script, "a b", "ü"], stdin="prompt €".encode())
    assert rc == 0
    assert out.splitlines() == ["['a b', 'ü'] prompt €", "err"]


def test_the_child_gets_exactly_the_environment_given(launch):
    env = {"ONLY": "this", "PATH": os.defpath, "UNICODE": "é"}
    rc, out, _ = run(launch, ["/usr/bin/env"], env=env)
    assert rc == 0
    assert sorted(out.splitlines()) == ["ONLY=this", f"PATH={os.defpath}", "UNICODE=é"]


def test_program_found_on_the_path_of_the_given_environment(launch, tmp_path):
    tool = tmp_path / "agent-tool"
    tool.write_text("#!/bin/sh\necho found\n")
    tool.chmod(0o755)
    rc, out, _ = run(launch, ["agent-tool"], env={"PATH": f"/nonexistent:{tmp_path}"})
    assert (rc, out) == (0, "found\n")


def test_own_session_default_signals_and_no_inherited_fds(launch):
    leak = os.open(os.devnull, os.O_RDONLY)
    os.set_inheritable(leak, True)  # what close_fds must still keep from the agent
    try:
        child = launch(["/bin/sh", "-c", "ls /proc/$$/fd; exec sleep 30"], dict(os.environ))
        assert child.stdin is not None and child.stdout is not None
        child.close_stdin()
        text = b""
        while b"\n2\n" not in text:
            chunk = os.read(child.stdout, 65536)
            assert chunk, text
            text += chunk
        assert os.getsid(child.pid) == child.pid  # a new session: killpg reaches it all
        fds = [line for line in text.decode().splitlines() if line.isdigit()]
        assert fds == ["0", "1", "2"]  # not even the inheritable one (close_fds)
        # Once sh has exec'd sleep, the agent's signal state is what the launcher gave it.
        proc = Path(f"/proc/{child.pid}")
        deadline = time.monotonic() + 30
        while (proc / "comm").read_text().strip() != "sleep":
            assert time.monotonic() < deadline
            time.sleep(0.01)
        status = dict(line.split(":\t", 1) for line in (proc / "status").read_text()
                      .splitlines() if ":\t" in line)
        ignored = int(status["SigIgn"], 16)
        assert not ignored & (1 << (signal.SIGPIPE - 1))  # Python ignores it; agents must not
        assert not ignored & (1 << (signal.SIGXFSZ - 1))
        assert int(status["SigBlk"], 16) == 0
        child.signal_group(signal.SIGKILL)
        assert child.wait(30)
        assert child.returncode == -signal.SIGKILL
        child.close()
    finally:
        os.close(leak)


def test_same_signal_state_as_popen_restore_signals():
    _, ours, _ = run(launcher.launch_glibc, SIGNAL_PROBE)
    theirs = subprocess.run(SIGNAL_PROBE, capture_output=True, text=True, check=True).stdout
    assert ours == theirs
    assert signal_state(ours) == {"SigBlk": 0, "SigIgn": IGNORED}


def test_a_thread_with_blocked_signals_still_gives_the_agent_an_empty_mask(launch):
    """The child inherits the forking thread's mask under Popen; both launchers clear it
    for the child only: the launching thread keeps its own."""
    blocked = {signal.SIGUSR1, signal.SIGUSR2, signal.SIGTERM}
    seen: dict[str, object] = {}

    def worker() -> None:
        signal.pthread_sigmask(signal.SIG_BLOCK, blocked)
        _, out, _ = run(launch, SIGNAL_PROBE)
        seen["child"] = signal_state(out)
        seen["thread"] = signal.pthread_sigmask(signal.SIG_BLOCK, ())

    t = threading.Thread(target=worker)
    t.start()
    t.join(60)
    assert seen["child"] == {"SigBlk": 0, "SigIgn": IGNORED}
    assert seen["thread"] == blocked


def test_a_pending_blocked_signal_is_not_delivered_by_the_popen_launch():
    """Popen's trade-off: a signal pending while blocked stays blocked (and pending) rather
    than being delivered to us by the launch; every other signal is unblocked for the child."""
    seen: dict[str, object] = {}

    def worker() -> None:
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGUSR1, signal.SIGUSR2})
        signal.pthread_kill(threading.get_ident(), signal.SIGUSR1)  # now pending
        _, out, _ = run(launcher.launch_popen, SIGNAL_PROBE)
        seen["child"] = signal_state(out)
        seen["pending"] = signal.sigpending()
        seen["consumed"] = signal.sigwait({signal.SIGUSR1})

    t = threading.Thread(target=worker)
    t.start()
    t.join(60)
    assert seen["child"] == {"SigBlk": 1 << (signal.SIGUSR1 - 1), "SigIgn": IGNORED}
    assert seen["pending"] == {signal.SIGUSR1}
    assert seen["consumed"] == signal.SIGUSR1


@pytest.mark.parametrize("argv,error", [
    (["/nonexistent/agent"], FileNotFoundError),
    (["no-such-agent-on-path"], FileNotFoundError),
    ([os.devnull], PermissionError),
    (["not-executable-agent"], PermissionError),  # on PATH, but chmod -x: say so
])
def test_launch_errors_are_os_errors_and_leak_no_fd(launch, argv, error, tmp_path):
    (tmp_path / "not-executable-agent").write_text("#!/bin/sh\n")
    before = open_fds()
    with pytest.raises(error) as caught:
        launch(argv, {"PATH": f"/nonexistent:{tmp_path}"})
    assert caught.value.strerror  # what the runner puts in its one line
    assert open_fds() == before


@pytest.mark.parametrize("argv,env", [
    (["/bin/echo", "a\x00b"], {}),
    (["/bin/echo"], {"BAD\x00NAME": "x"}),
    (["/bin/echo"], {"X": "nul\x00value"}),
    (["/bin/echo"], {"A=B": "x"}),
])
def test_unrepresentable_argv_or_environment_is_a_value_error(launch, argv, env):
    before = open_fds()
    with pytest.raises(ValueError):
        launch(argv, env)
    assert open_fds() == before


@pytest.mark.parametrize("pidfds", [True, False])
def test_poll_and_wait(launch, monkeypatch, pidfds):
    if not pidfds:
        monkeypatch.setattr(launcher, "open_pidfd", lambda pid: None)
    child = launch(["/bin/sh", "-c", "read x; exit 7"], dict(os.environ))
    assert child.poll() is False and not child.exited
    started = time.monotonic()
    assert child.wait(0.2) is False  # still reading its stdin
    assert time.monotonic() - started >= 0.19
    child.close_stdin()
    assert child.wait(30) is True
    assert (child.poll(), child.returncode, child.status_error) == (True, 7, None)
    assert (child.pidfd is not None) == pidfds  # opened by the wait for a running child
    child.close()
    assert (child.stdin, child.stdout, child.pidfd) == (None, None, None)
    child.close()  # twice is fine


def test_exit_read_through_a_pidfd_numbered_above_1024(launch, high_fds):
    """poll, not select: select.select refuses (or corrupts memory with) fds >= 1024."""
    child = launch(["/bin/sh", "-c", "read x; exit 5"], dict(os.environ))
    assert child.stdin is not None and child.stdin >= high_fds
    assert child.wait(0.1) is False  # opens the pidfd and polls it: nothing yet
    assert child.pidfd is not None and child.pidfd >= 1024
    child.close_stdin()
    assert child.wait(30) is True
    assert child.returncode == 5
    child.close()


def _reap_then(result):
    """A waitpid that reaps the child for real, then answers ``result`` (or raises it)."""
    def fake(pid: int, flags: int) -> tuple[int, int]:
        os.waitpid(pid, 0)
        if isinstance(result, BaseException):
            raise result
        return pid, result
    return fake


@pytest.mark.parametrize("answer,detail", [
    (ChildProcessError(errno.ECHILD, os.strerror(errno.ECHILD)), os.strerror(errno.ECHILD)),
    (0x137F, "status 0x137f"),  # "stopped by SIGSTOP": neither an exit nor a signal
])
def test_an_exit_status_that_cannot_be_read_is_an_error_never_0(launch, monkeypatch,
                                                               answer, detail):
    child = launch(["/bin/sh", "-c", "exit 0"], dict(os.environ))
    child.close_pipes()
    monkeypatch.setattr(launcher, "_waitpid", _reap_then(answer))
    assert child.wait(30) is True and child.exited
    assert child.returncode is None
    assert child.status_error == f"agent exit status could not be read ({detail})"
    child.close()


def test_an_agent_reaped_elsewhere_is_an_error_never_0(launch):
    """The real edge: with SIGCHLD ignored the kernel reaps children itself (ECHILD)."""
    old = signal.signal(signal.SIGCHLD, signal.SIG_IGN)
    try:
        child = launch(["/bin/sh", "-c", "exit 0"], dict(os.environ))
        child.close_pipes()
        assert child.wait(30) is True
    finally:
        signal.signal(signal.SIGCHLD, old)
    child.close()
    assert child.returncode is None
    assert child.status_error is not None and "could not be read" in child.status_error


def test_choose_launch_follows_neens_launcher():
    assert driver.choose_launch({}) is launcher.launch_glibc  # glibc >= 2.34 here (CI too)
    assert driver.choose_launch({"NEENS_LAUNCHER": ""}) is launcher.launch_glibc
    assert driver.choose_launch({"NEENS_LAUNCHER": "popen"}) is launcher.launch_popen
    assert driver.choose_launch({"NEENS_LAUNCHER": " Popen\n"}) is launcher.launch_popen
    assert driver.choose_launch({"NEENS_LAUNCHER": "glibc"}) is launcher.launch_glibc


@pytest.mark.parametrize("value", ["fork", "posix_spawn", "1"])
def test_any_other_neens_launcher_is_a_usage_error(value):
    with pytest.raises(UsageError) as caught:
        driver.choose_launch({"NEENS_LAUNCHER": value})
    assert str(caught.value) == f"NEENS_LAUNCHER must be popen, glibc or portable (got {value!r})"
    assert caught.value.exit_code == EXIT_ERROR


def without_glibc(monkeypatch):
    monkeypatch.setattr(glibc_launcher, "_glibc", None)
    monkeypatch.setattr(glibc_launcher, "_glibc_checked", False)
    monkeypatch.setattr(os, "confstr", lambda name: "musl 1.2")
    assert glibc_launcher.load() is None


def test_without_glibc_popen_is_chosen_and_glibc_cannot_be_forced(monkeypatch):
    without_glibc(monkeypatch)
    assert driver.choose_launch({}) is launcher.launch_popen
    with pytest.raises(UsageError, match=r"NEENS_LAUNCHER=glibc: .*glibc 2\.34 or newer"):
        driver.choose_launch({"NEENS_LAUNCHER": "glibc"})
    rc, out, _ = run(driver.choose_launch({}), ["/bin/sh", "-c", "cat"], stdin=b"via popen")
    assert (rc, out) == (0, "via popen")
    with pytest.raises(OSError, match=r"glibc 2\.34"):
        launcher.launch_glibc(["/bin/true"], {})
