"""The ``install`` command's process handling with real processes: its group is killed when
it ends (POSIX), and where there are no groups or SIGKILL (Windows, faked at the edge) the
tree is killed with taskkill instead of reading names that do not exist there."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from neens_action.ci import install


def test_a_background_process_the_command_left_is_killed(tmp_path: Path) -> None:
    marker = tmp_path / "late.txt"
    lines: list[str] = []
    failure = install.run_install(f"(sleep 3; echo late > {marker}) & echo started",
                                  env={"PATH": "/usr/bin:/bin"}, timeout=30, log=lines.append)
    assert failure is None
    assert "started" in lines and lines[-1] == "neens: install: done"
    time.sleep(4)  # the group is killed about 1 s (DRAIN) after the command exits
    assert not marker.exists()  # the group was killed with the command


def test_a_timeout_stops_the_command() -> None:
    started = time.monotonic()
    failure = install.run_install("sleep 30", env={"PATH": "/usr/bin:/bin"}, timeout=0.5,
                                  log=lambda _: None)
    assert failure == "the install command did not finish within 0.5 s and was stopped"
    assert time.monotonic() - started < 10


@pytest.fixture
def windows(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """No process groups to signal, as on Windows: the tree kill is recorded, then done."""
    killed: list[int] = []

    def kill_tree(pid: int) -> None:
        killed.append(pid)
        install.os.kill(pid, 9)  # what taskkill /T /F does to the leader

    monkeypatch.setattr(install, "stop_signals", lambda: (None, None))
    monkeypatch.setattr(install, "kill_tree_windows", kill_tree)
    return killed


def test_without_process_groups_a_finished_command_is_not_signalled(
        windows: list[int]) -> None:
    failure = install.run_install("echo ok", env={"PATH": "/usr/bin:/bin"}, timeout=30,
                                  log=lambda _: None)
    assert failure is None
    assert windows == []  # it has exited: its pid may belong to another process by now


def test_without_process_groups_a_timeout_kills_the_tree(windows: list[int]) -> None:
    failure = install.run_install("sleep 30", env={"PATH": "/usr/bin:/bin"}, timeout=0.5,
                                  log=lambda _: None)
    assert failure == "the install command did not finish within 0.5 s and was stopped"
    assert len(windows) == 1
