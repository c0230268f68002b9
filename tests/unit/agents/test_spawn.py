"""spawn: both launchers give the child the same start (argv, exactly the environment,
default SIGPIPE, its own session, only fds 0-2), and clean errors; real processes."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest

from neens_action.agents import spawn

PY = sys.executable
LAUNCHERS = {"posix_spawn": spawn.launch_spawn, "Popen": spawn.launch_popen}


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
    rc = child.wait(30)
    child.close()
    return rc, b"".join(chunks).decode(), child


def open_fds() -> set[str]:
    return set(os.listdir("/proc/self/fd"))


def test_glibc_launcher_is_used_where_glibc_has_what_it_needs():
    version = os.confstr("CS_GNU_LIBC_VERSION") or ""
    major, minor = (int(x) for x in version.split()[1].split(".")[:2])
    assert version.startswith("glibc ") and (major, minor) >= (2, 34)  # CI and the image
    assert spawn._load_glibc() is not None


def test_without_glibc_launch_falls_back_to_popen(monkeypatch):
    monkeypatch.setattr(spawn, "_glibc", None)
    monkeypatch.setattr(spawn, "_glibc_checked", False)
    monkeypatch.setattr(os, "confstr", lambda name: "musl 1.2")
    assert spawn._load_glibc() is None
    rc, out, child = run(spawn.launch, ["/bin/sh", "-c", "cat"], stdin=b"via popen")
    assert (rc, out) == (0, "via popen")
    assert child._popen is not None
    with pytest.raises(OSError, match=r"glibc 2\.34"):
        spawn.launch_spawn(["/bin/true"], {})


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
        child = launch(["/bin/sh", "-c", "cat /proc/$$/status; ls /proc/$$/fd; sleep 30"],
                       dict(os.environ))
        assert child.stdin is not None and child.stdout is not None
        child.close_stdin()
        text = b""
        while b"\n2\n" not in text:
            chunk = os.read(child.stdout, 65536)
            assert chunk, text
            text += chunk
        assert os.getsid(child.pid) == child.pid  # a new session: killpg reaches it all
        status = dict(line.split(":\t", 1) for line in text.decode().splitlines()
                      if ":\t" in line)
        fds = [line for line in text.decode().splitlines() if line.isdigit()]
        assert fds == ["0", "1", "2"]  # not even the inheritable one (close_fds)
        ignored = int(status["SigIgn"], 16)
        assert not ignored & (1 << (signal.SIGPIPE - 1))  # Python ignores it; agents must not
        assert not ignored & (1 << (signal.SIGXFSZ - 1))
        assert int(status["SigBlk"], 16) == 0
        child.signal_group(signal.SIGKILL)
        assert child.wait(30) == -signal.SIGKILL
        child.close()
    finally:
        os.close(leak)


def test_same_signal_state_as_popen_restore_signals():
    probe = ["/bin/sh", "-c", "grep -E '^Sig(Ign|Blk)' /proc/$$/status"]
    _, ours, _ = run(spawn.launch_spawn, probe)
    theirs = subprocess.run(probe, capture_output=True, text=True, check=True).stdout
    assert ours == theirs


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
        monkeypatch.setattr(spawn, "open_pidfd", lambda pid: None)
    child = launch(["/bin/sh", "-c", "read x; exit 7"], dict(os.environ))
    assert child.poll() is None
    started = time.monotonic()
    assert child.wait(0.2) is None  # still reading its stdin
    assert time.monotonic() - started >= 0.19
    child.close_stdin()
    assert child.wait(30) == 7
    assert (child.poll(), child.returncode) == (7, 7)
    if launch is spawn.launch_spawn:  # Popen waits its own way
        assert (child.pidfd is not None) == pidfds  # opened by the wait for a running child
    child.close()
    assert (child.stdin, child.stdout, child.pidfd) == (None, None, None)
    child.close()  # twice is fine


def test_environment_entries_are_remembered_up_to_a_bound(monkeypatch):
    glibc = spawn._load_glibc()
    assert glibc is not None
    monkeypatch.setattr(glibc, "memo", {})
    monkeypatch.setattr(spawn, "_MEMO", 3)
    env = {"A": "1", "B": "2", "LONG": "x" * 600, "C": "3", "D": "4"}
    assert glibc._environ(env) == [b"A=1", b"B=2", b"LONG=" + b"x" * 600, b"C=3", b"D=4"]
    assert list(glibc.memo) == [("A", "1"), ("B", "2"), ("C", "3")]  # not the long one
    assert glibc._environ(env) == glibc._environ(dict(env))
