"""Shared helpers for the `neens eval watch` integration tests (temp tree, agent, env)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

from tests.helpers import PY, Sandbox

DATA = Path(__file__).resolve().parent / "data"
WAIT = 150.0  # seconds; generous: the machine is shared
LABEL_RE = re.compile(r"^local-watch\.\d{8}T\d{6}\.(\d+)$")
TWO_ITEMS = ["--dataset-version-id", "dsv_refunds_1"]  # it_1 (always passes), it_2 (odd order)


def save(path: Path, text: str) -> None:
    """A real save: new content of another size, and a later mtime even on coarse clocks."""
    old = path.stat().st_mtime_ns if path.exists() else 0
    path.write_text(text)
    st = path.stat()
    if st.st_mtime_ns <= old:
        os.utime(path, ns=(st.st_atime_ns, old + 1_000_000_000))


def agent_cmd(tag: str = "") -> list[str]:
    return [PY, str(DATA / "mode_agent.py"), *([f"--tag={tag}"] if tag else [])]


def watch_env(sb: Sandbox, tree: Path, **extra: str) -> dict[str, str]:
    return sb.agent_env(AGENT_MODE_FILE=str(tree / "mode.txt"), **extra)


class Watch:
    """``neens eval watch`` running in the background, its output in files."""

    def __init__(self, sb: Sandbox, tree: Path, flags: list[str], *, tag: str = "",
                 **env: str) -> None:
        self.err_path = tree.parent / "watch.err"
        self.out_path = tree.parent / "watch.out"
        self._err = self.err_path.open("w")
        self._out = self.out_path.open("w")
        args = [PY, "-m", "neens_action", "eval", "watch", "--dataset", "ds_refunds",
                "--debounce", "0.2", "--poll-interval", "1", "--json", *flags,
                "--", *agent_cmd(tag)]
        self.proc = subprocess.Popen(args, cwd=tree, env=watch_env(sb, tree, **env),
                                     stdout=self._out, stderr=self._err)

    @property
    def stderr(self) -> str:
        return self.err_path.read_text()

    def records(self) -> list[dict]:
        return [json.loads(line) for line in self.out_path.read_text().splitlines() if line]

    def wait_for(self, check: Callable[[str], bool], what: str, timeout: float = WAIT) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            text = self.stderr
            if check(text):
                return
            if self.proc.poll() is not None:
                raise AssertionError(f"watch exited ({self.proc.returncode}) before {what}:\n"
                                     f"{self.stderr}")
            time.sleep(0.1)
        raise AssertionError(f"timed out waiting for {what}:\n{self.stderr}")

    def wait_idle(self, n: int) -> None:
        """Until the watcher has said "watching for changes" ``n`` times."""
        self.wait_for(lambda t: t.count("watching for changes") >= n,
                      f"idle #{n}")

    def wait_exit(self, timeout: float = WAIT) -> int:
        try:
            return self.proc.wait(timeout)
        finally:
            self.close()

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()  # our own process, by its handle
            self.proc.wait(10)
        self._err.close()
        self._out.close()


def headers(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.startswith("── iteration ")]


def tagged_processes(tag: str) -> list[int]:
    """Live processes whose command line carries ``tag`` (read from /proc, nothing killed)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        if f"--tag={tag}".encode() in cmdline:
            found.append(int(entry.name))
    return found
