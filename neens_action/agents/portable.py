"""The portable runner path: agents on Windows and macOS (and anywhere ``poll(2)`` is missing).

The fast path (:meth:`neens_action.agents.runner.Runner._communicate`) waits on every pipe and
on a pidfd with one ``poll(2)``; Windows has neither. Here each agent gets two small threads
instead: one writes the prompt (UTF-8) to its stdin and closes it, one reads its output
(bytes, so CRLF and any encoding pass through untouched) into the capped tail. The worker
thread waits for the exit in short steps, which is also when the deadline, the interrupt and
the tree kill are handled.

The agent is started by ``subprocess.Popen`` (:func:`neens_action.agents.launcher.
launch_portable`): in a new session on POSIX, in a new process group
(``CREATE_NEW_PROCESS_GROUP``) on Windows, where Python agents are also told to use UTF-8
for stdin/stdout (``PYTHONUTF8=1`` unless the job set it). A process tree is killed with
``killpg`` on POSIX and ``taskkill /T /F`` on Windows.

It is chosen automatically where the fast path is unavailable, and forced anywhere with
``NEENS_LAUNCHER=portable`` (CI runs the whole runner test module that way on Linux).
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import threading
from collections.abc import Callable, Mapping
from typing import Protocol

from neens_action.agents.proc import OutputTail


class Child(Protocol):
    """What is needed here of :class:`neens_action.agents.launcher.Child` (which imports this
    module, so it is described, not imported)."""

    stdin: int | None
    stdout: int | None

    def wait(self, timeout: float) -> bool: ...
    def poll(self) -> bool: ...
    def signal_group(self, sig: int | None) -> None: ...
    def close_stdin(self) -> None: ...
    def close(self) -> None: ...

WINDOWS_FLAGS = 0x00000200  # subprocess.CREATE_NEW_PROCESS_GROUP (named only on Windows)
_CHUNK = 65536


def windows_env(env: Mapping[str, str]) -> dict[str, str]:
    """The agent's environment on Windows: UTF-8 stdin/stdout for Python agents, unless the
    job chose otherwise (the console code page would garble non-ASCII prompts)."""
    out = dict(env)
    if "PYTHONUTF8" not in out and "PYTHONIOENCODING" not in out:
        out["PYTHONUTF8"] = "1"
    return out


def creation_flags() -> int:
    """``CREATE_NEW_PROCESS_GROUP``: the agent and what it starts form their own group."""
    return int(getattr(subprocess, "CREATE_NEW_PROCESS_GROUP", WINDOWS_FLAGS))


def kill_tree_windows(pid: int, run: Callable[..., object] = subprocess.run) -> None:
    """Kill ``pid`` and every process it started (``taskkill /T /F``); quiet when gone."""
    with contextlib.suppress(OSError, subprocess.SubprocessError):
        run(["taskkill", "/T", "/F", "/PID", str(pid)], stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=30, check=False)


class _Pump:
    """The two pipe threads of one agent. The reader owns the output descriptor once the
    runner stops waiting for it (a grandchild that escaped the group may keep it open):
    it closes it when its read ends, so no descriptor is closed under a blocked read."""

    def __init__(self, child: Child, data: bytes, tail: OutputTail) -> None:
        self.child = child
        self.tail = tail
        self.lock = threading.Lock()
        self.abandoned = False
        self.out = child.stdout
        child.stdout = None  # the reader closes it
        self.writer = threading.Thread(target=self._write, args=(data,), daemon=True,
                                       name="neens-agent-stdin")
        self.reader = threading.Thread(target=self._read, daemon=True,
                                       name="neens-agent-output")
        self.writer.start()
        self.reader.start()

    def _write(self, data: bytes) -> None:
        fd = self.child.stdin
        if fd is None:
            return
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view[:_CHUNK]):]
        except OSError:  # EPIPE: the agent does not read its input (or has exited)
            pass
        finally:
            self.child.close_stdin()

    def _read(self) -> None:
        out = self.out
        assert out is not None
        try:
            while True:
                try:
                    chunk = os.read(out, _CHUNK)
                except OSError:
                    break
                if not chunk:
                    break
                with self.lock:
                    if not self.abandoned:
                        self.tail.add(chunk)
        finally:
            with contextlib.suppress(OSError):
                os.close(out)

    def finish(self, drain: float) -> None:
        """Wait at most ``drain`` seconds for the output to end, then stop collecting it."""
        self.reader.join(drain)
        with self.lock:
            self.abandoned = True
        self.writer.join(0.5)


def communicate(child: Child, text: str, *, timeout: float | None, grace: float, drain: float,
                output_cap: int, clock: Callable[[], float], stopping: Callable[[], bool],
                term: int | None, kill: int | None) -> tuple[bool, OutputTail]:
    """Feed stdin, collect the output tail and wait for the exit (or the deadline): what the
    runner's fast path does, with threads instead of ``poll(2)``. Returns (timed out, tail)."""
    tail = OutputTail(output_cap)
    pump = _Pump(child, (text or "").encode("utf-8", errors="replace"), tail)
    deadline = clock() + timeout if timeout else None
    timed_out = False
    term_at: float | None = None
    try:
        while not child.wait(0.05):
            now = clock()
            if stopping():
                child.signal_group(kill)
            if deadline is not None and not timed_out and now >= deadline:
                timed_out, term_at = True, now
                child.signal_group(term)
            if term_at is not None and now - term_at >= grace:
                child.signal_group(kill)
                term_at = None
    finally:
        # Nothing of this item may outlive it (leader exited, or timed out/killed).
        child.signal_group(kill)
        if not child.poll():
            child.wait(drain)
        pump.finish(drain)
        child.close()
    return timed_out, tail


__all__ = ["communicate", "creation_flags", "kill_tree_windows", "windows_env"]
