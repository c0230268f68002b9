"""Small process helpers for the runner: the capped output tail, feeding stdin, reading
output, pidfds, the stop signals, durations.

Nothing here (nor anywhere in ``neens_action.agents``) reads a platform constant when it is
imported (``select.POLLIN``, ``signal.SIGKILL``, ``os.posix_spawn``...): Windows lacks them, and
every command imports the agents package. They are read when a process is driven.
"""

from __future__ import annotations

import os
import signal

# What a successful invocation keeps of its output (the whole tail is kept for a failure):
# shown when its trace never arrives, where an exporter's own error usually is
OK_TAIL = 2000


class OutputTail:
    """The last ``cap`` bytes written."""

    def __init__(self, cap: int) -> None:
        self.cap = cap
        self.buf = bytearray()
        self.dropped = 0

    def add(self, chunk: bytes) -> None:
        self.buf += chunk
        extra = len(self.buf) - self.cap
        if extra > 0:
            del self.buf[:extra]
            self.dropped += extra

    def text(self) -> str:
        out = self.buf.decode("utf-8", errors="replace")
        if self.dropped:
            out = f"[… {self.dropped} earlier bytes dropped]\n" + out
        return out


def stop_signals() -> tuple[int | None, int | None]:
    """``(term, kill)`` for a process group: SIGTERM and SIGKILL on POSIX; ``(None, None)``
    elsewhere (Windows), where a tree is killed at once instead of signalled."""
    if os.name != "posix":
        return None, None
    return signal.SIGTERM, signal.SIGKILL


def pidfd(pid: int) -> int | None:
    """A pidfd for ``pid`` (readable once it exits), or None where unsupported."""
    opener = getattr(os, "pidfd_open", None)
    if opener is None:
        return None
    try:
        return opener(pid)
    except OSError:
        return None


def feed(stdin: int, data: bytes, offset: int) -> int:
    """Write to a non-blocking stdin (fd) what the pipe takes now; returns the new offset
    (all of it when the agent stopped reading: it may ignore its input)."""
    try:
        while offset < len(data):
            offset += os.write(stdin, data[offset:offset + 65536])
    except BlockingIOError:
        pass
    except OSError:  # EPIPE: the agent closed its stdin
        offset = len(data)
    return offset


def read_output(out: int, tail: OutputTail, *, closed: bool) -> bool:
    """Read what ``poll`` said is there; True at the end of the output. ``closed``: every
    writer has closed it, so what is left is read to the end without blocking."""
    while True:
        try:
            chunk = os.read(out, 65536)
        except OSError:
            return True
        if not chunk:
            return True
        tail.add(chunk)
        if not closed:
            return False


def fmt_secs(seconds: float) -> str:
    return f"{seconds:.1f}s" if seconds < 100 else f"{seconds:.0f}s"
