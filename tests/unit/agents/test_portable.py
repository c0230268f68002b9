"""The portable runner path's platform edges. The Windows branches run here with the platform
faked at the edge (``launcher._POSIX``, ``subprocess.Popen``, ``taskkill``); the UTF-8 and
CRLF cases run real agents on the portable path (forced, as on Windows/macOS)."""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

import pytest

from neens_action.agents import driver, launcher, portable, runner
from neens_action.agents.driver import make_runner
from neens_action.agents.runner import Job

PY = sys.executable


def test_windows_env_asks_python_agents_for_utf8_unless_the_job_chose() -> None:
    assert portable.windows_env({"A": "1"}) == {"A": "1", "PYTHONUTF8": "1"}
    assert portable.windows_env({"PYTHONUTF8": "0"})["PYTHONUTF8"] == "0"
    assert "PYTHONUTF8" not in portable.windows_env({"PYTHONIOENCODING": "cp1252"})


def test_new_process_group_flag() -> None:
    assert portable.creation_flags() == 0x00000200  # CREATE_NEW_PROCESS_GROUP


def test_tree_kill_is_taskkill_of_the_whole_tree() -> None:
    calls: list[list[str]] = []

    def fake_run(args: list[str], **kw: Any) -> None:
        calls.append(args)
        assert kw["timeout"] and kw["check"] is False

    portable.kill_tree_windows(4242, run=fake_run)
    assert calls == [["taskkill", "/T", "/F", "/PID", "4242"]]

    def gone(args: list[str], **kw: Any) -> None:
        raise FileNotFoundError("taskkill")

    portable.kill_tree_windows(4242, run=gone)  # quiet


class FakePopen:
    """Records how a Windows agent would be started."""

    started: ClassVar[list[dict[str, Any]]] = []

    def __init__(self, args: Sequence[str], **kw: Any) -> None:
        FakePopen.started.append({"args": list(args), **kw})
        self.pid = 31337
        self.returncode: int | None = None

    def poll(self) -> int | None:
        return self.returncode

    def wait(self, timeout: float | None = None) -> int | None:
        return self.returncode

    def kill(self) -> None:  # never used: the tree is killed with taskkill
        raise AssertionError("Popen.kill kills the leader only")


@pytest.fixture
def windows(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Pretend to be Windows at the edges: no POSIX, Popen and taskkill recorded."""
    killed: list[int] = []
    FakePopen.started = []
    monkeypatch.setattr(launcher, "_POSIX", False)
    monkeypatch.setattr(driver, "_POSIX", False)
    monkeypatch.setattr(runner, "_POSIX", False)
    monkeypatch.setattr(launcher.subprocess, "Popen", FakePopen)
    monkeypatch.setattr(portable, "kill_tree_windows", killed.append)
    monkeypatch.setenv("COMSPEC", r"C:\Windows\system32\cmd.exe")
    return killed


def test_windows_picks_the_portable_path_by_itself(windows: list[int]) -> None:
    assert not driver.fast_path_available()
    assert driver.choose_launch({}) is launcher.launch_portable
    assert driver.choose_launch({"NEENS_LAUNCHER": "portable"}) is launcher.launch_portable


def test_windows_agent_starts_in_a_new_group_with_utf8(windows: list[int]) -> None:
    env: Mapping[str, str] = {"PATH": "C:\\bin"}
    child = launcher.launch_portable(["agent.exe", "--x"], env)
    try:
        assert child.portable and child.pid == 31337
        start = FakePopen.started[0]
        assert start["args"] == ["agent.exe", "--x"]
        assert start["creationflags"] == 0x00000200
        assert start["env"] == {"PATH": "C:\\bin", "PYTHONUTF8": "1"}
        assert "start_new_session" not in start  # a POSIX notion
        child.signal_group(None)  # what the runner sends on timeout and interrupt there
        assert windows == [31337]
        child._popen.returncode = 0  # type: ignore[union-attr]
        assert child.poll() and child.returncode == 0
        child.signal_group(None)  # exited: nothing left to kill by that pid (may be reused)
        assert windows == [31337]
    finally:
        child.close()


def test_windows_shell_command_uses_comspec(windows: list[int]) -> None:
    r = make_runner("echo hi", log=lambda s: None)
    assert r._argv({}) == [r"C:\Windows\system32\cmd.exe", "/c", "echo hi"]


def _portable_runner(command: list[str], **kw: Any) -> runner.Runner:
    return make_runner(command, log=lambda s: None, keep_output=True,
                  environ={"NEENS_LAUNCHER": "portable"}, **kw)


def test_prompt_goes_in_as_utf8_and_output_comes_back_byte_exact() -> None:
    script = ("import sys; data = sys.stdin.buffer.read(); "
              "sys.stdout.buffer.write(data + b'\\r\\nline two\\r\\n' + "
              "'caf\\u00e9 \\u2713'.encode())")
    prompt = "Grüße, 東京 ✓"
    out = _portable_runner([PY, "-c", script]).run(
        [Job(key="it_1", input=prompt, env=dict(os.environ))])
    assert out[0].ok, out[0]
    assert out[0].output == prompt + "\r\nline two\r\ncafé ✓"  # CRLF untouched


def test_large_prompt_and_large_output_do_not_deadlock() -> None:
    script = "import sys; d = sys.stdin.read(); sys.stdout.write(d * 2)"
    prompt = "x" * 300_000  # bigger than any pipe buffer, both ways
    out = _portable_runner([PY, "-c", script], output_cap=1024 * 1024, timeout=60).run(
        [Job(key="it_1", input=prompt, env=dict(os.environ))])
    assert out[0].ok and out[0].output == prompt * 2
