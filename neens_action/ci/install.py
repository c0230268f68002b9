"""The ``install`` input: a set-up command (``sh -c``) run before the flow, with a deadline.

Its output is streamed to the log as it comes (CI logs are read live); on GitHub inside a
``::group::`` and ``::stop-commands::``, so nothing a dependency prints can run a workflow
command. A failure (non-zero exit, timeout, no shell) is one sentence the front door turns
into an errored outcome (exit 2), still published like any other result.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import threading
from collections.abc import Callable, Iterator, Mapping
from typing import IO

from neens_action.publish.actions import Commands
from neens_action.text import excerpt

KILL_GRACE = 5.0


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    for sig in (signal.SIGTERM, signal.SIGKILL):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, sig)
        try:
            proc.wait(KILL_GRACE)
            return
        except subprocess.TimeoutExpired:
            continue


def _pump(stream: IO[bytes], log: Callable[[str], None]) -> None:
    for raw in iter(stream.readline, b""):
        log(raw.decode("utf-8", "replace").rstrip("\r\n"))
    stream.close()


@contextlib.contextmanager
def _shielded(commands: Commands | None, title: str) -> Iterator[None]:
    if commands is None:
        yield
        return
    was_paused = commands.paused
    commands.resume()
    with commands.group(title), commands.stopped():
        yield
    if was_paused:
        commands.stop()


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
        reader = threading.Thread(target=_pump, args=(proc.stdout, log), daemon=True)
        reader.start()
        try:
            rc = proc.wait(timeout)
        except subprocess.TimeoutExpired:
            _kill_group(proc)
            reader.join(KILL_GRACE)
            return f"the install command did not finish within {timeout:g} s and was stopped"
        except KeyboardInterrupt:
            _kill_group(proc)
            raise
        reader.join(KILL_GRACE)  # a background child may hold the pipe: do not wait forever
    if rc != 0:
        return f"the install command failed with exit code {rc}"
    log("neens: install: done")
    return None
