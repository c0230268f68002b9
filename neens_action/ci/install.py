"""The ``install`` input: a set-up command (``sh -c``) run before the flow, with a deadline.

Its output is streamed to the log as it comes (CI logs are read live); on GitHub inside a
``::group::`` and ``::stop-commands::``, so nothing a dependency prints can run a workflow
command. When the command exits, its whole process group is killed (a background server it
left behind must not write to the log later) and whatever still arrives on the pipe is
dropped. A failure (non-zero exit, timeout, no shell) is one sentence the front door turns
into an errored outcome (exit 2), still published like any other result.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import threading
from collections.abc import Callable, Iterator, Mapping
from typing import IO

from neens_action.agents.portable import kill_tree_windows
from neens_action.agents.proc import stop_signals
from neens_action.publish.actions import Commands
from neens_action.text import excerpt

KILL_GRACE = 5.0
DRAIN = 1.0  # seconds to read what the exited command left in the pipe


def _signal_group(proc: subprocess.Popen[bytes], sig: int | None) -> None:
    """Send ``sig`` to the command's process group; where there are no groups to signal
    (Windows: ``sig`` is None) its process tree is killed at once, while it runs."""
    if sig is None:
        if proc.poll() is None:
            kill_tree_windows(proc.pid)
        return
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, sig)


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    for sig in stop_signals():  # SIGTERM, then SIGKILL (POSIX names, read now)
        _signal_group(proc, sig)
        try:
            proc.wait(KILL_GRACE)
            return
        except subprocess.TimeoutExpired:
            continue


def _pump(stream: IO[bytes], log: Callable[[str], None], done: threading.Event) -> None:
    for raw in iter(stream.readline, b""):
        if done.is_set():  # the command has exited: later output is dropped
            break
        log(raw.decode("utf-8", "replace").rstrip("\r\n"))
    stream.close()


@contextlib.contextmanager
def _shielded(commands: Commands | None, title: str) -> Iterator[None]:
    if commands is None:
        yield
        return
    with commands.group(title), commands.stopped():
        yield


def run_install(
    script: str,
    *,
    env: Mapping[str, str],
    timeout: float,
    log: Callable[[str], None],
    commands: Commands | None = None,
    cwd: str | None = None,
) -> str | None:
    """Run ``sh -c script``; None on success, else why it failed (one sentence)."""
    with _shielded(commands, "neens: install"):
        log(f"neens: install: {excerpt(script, 200)}")
        try:
            proc = subprocess.Popen(
                ["sh", "-c", script], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT, env=dict(env), cwd=cwd, start_new_session=True,
            )
        except OSError as exc:
            return f"the install command could not start ({exc.strerror or exc})"
        assert proc.stdout is not None
        done = threading.Event()
        reader = threading.Thread(target=_pump, args=(proc.stdout, log, done), daemon=True)
        reader.start()
        try:
            rc = proc.wait(timeout)
        except subprocess.TimeoutExpired:
            _kill_group(proc)
            done.set()
            reader.join(KILL_GRACE)
            return f"the install command did not finish within {timeout:g} s and was stopped"
        except KeyboardInterrupt:
            _kill_group(proc)
            done.set()
            raise
        # what the command itself printed is in the pipe: read it, briefly; then its
        # process group (a server left in the background) is killed and the rest dropped
        reader.join(DRAIN)
        done.set()
        _signal_group(proc, stop_signals()[1])
        reader.join(KILL_GRACE)
    if rc != 0:
        return f"the install command failed with exit code {rc}"
    log("neens: install: done")
    return None
