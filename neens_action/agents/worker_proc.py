"""One long-lived worker process (worker mode, ``docs/worker-protocol.md``).

Started in its own session with three pipes: stdin carries items, stdout carries the
worker's answers (and any other output it prints), stderr is read into the output tail of
the item in hand. :meth:`WorkerProc.exchange` hands over one item and waits for its answer,
the worker's exit, a broken protocol line, the item's deadline, or an interrupt; all pipes
are non-blocking, so a worker that stops reading its stdin cannot block us.
"""

from __future__ import annotations

import contextlib
import os
import select
import subprocess
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from neens_action.agents.proc import OutputTail, stop_signals
from neens_action.agents.worker_protocol import (
    LineBuffer,
    ProtocolError,
    Reply,
    is_protocol_line,
    parse_reply,
)

_POSIX = os.name == "posix"


def _readable() -> int:
    """The ``poll(2)`` events of a pipe with something to read (or its writer gone)."""
    return select.POLLIN | select.POLLHUP | select.POLLERR


@dataclass
class Exchange:
    """How one item's exchange ended: exactly one of ``reply``, ``exited``, ``protocol``,
    ``timed_out``, ``stopped`` says so."""

    reply: Reply | None = None
    exited: bool = False  # the worker exited (or closed its stdout) before answering
    protocol: str = ""  # why the worker's line broke the protocol
    timed_out: bool = False
    stopped: bool = False  # interrupted (kill_all)


class WorkerProc:
    """A worker process and our ends of its pipes."""

    def __init__(self, argv: Sequence[str], env: Mapping[str, str], *,
                 output_cap: int) -> None:
        self.popen = subprocess.Popen(  # few workers: launch speed does not matter here
            list(argv), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, env=dict(env), start_new_session=_POSIX, close_fds=True)
        self.pid = self.popen.pid
        assert self.popen.stdin and self.popen.stdout and self.popen.stderr
        self.stdin: int | None = self.popen.stdin.fileno()
        self.stdout: int | None = self.popen.stdout.fileno()
        self.stderr: int | None = self.popen.stderr.fileno()
        for fd in (self.stdin, self.stdout, self.stderr):
            os.set_blocking(fd, False)
        self.lines = LineBuffer()
        self.tail = OutputTail(output_cap)
        self.spoke = False  # wrote at least one valid protocol line
        self.stray = False  # wrote a line to stdout outside the protocol
        self.items = 0  # items answered

    @property
    def returncode(self) -> int | None:
        return self.popen.poll()

    def signal_group(self, sig: int | None) -> None:
        """Signal the worker's whole process group (the Runner's kill_all calls this)."""
        if _POSIX and sig is not None:
            with contextlib.suppress(OSError):
                os.killpg(self.pid, sig)
        elif self.popen.poll() is None:  # pragma: no cover - Windows
            with contextlib.suppress(OSError):
                self.popen.kill()

    def exchange(self, data: bytes, item_id: str, *, deadline: float | None,
                 clock: Callable[[], float], stopping: Callable[[], bool]) -> Exchange:
        """Hand ``data`` (one item line) to the worker and wait for the answer."""
        self.tail = OutputTail(self.tail.cap)  # this item's output starts now
        offset = 0
        poller = select.poll()
        for fd in (self.stdout, self.stderr):
            if fd is not None:
                poller.register(fd, _readable())
        if self.stdin is None:
            return Exchange(exited=True)
        poller.register(self.stdin, select.POLLOUT)
        while True:
            if stopping():
                return Exchange(stopped=True)
            now = clock()
            if deadline is not None and now >= deadline:
                return Exchange(timed_out=True)
            wait = 0.2 if deadline is None else min(0.2, max(0.0, deadline - now))
            events = poller.poll(wait * 1000)
            if not events and self.popen.poll() is not None:  # exited; a child holds stdout
                self.drain()
                return Exchange(exited=True)
            for fd, _ in events:
                if fd == self.stdin:
                    offset = self._write(data, offset)
                    if offset >= len(data) or self.stdin is None:
                        with contextlib.suppress(KeyError):
                            poller.unregister(fd)
                elif fd == self.stderr:
                    if not self._read_stderr():
                        poller.unregister(fd)
                elif fd == self.stdout:
                    done = self._read_stdout(item_id)
                    if done is not None:
                        return done
                    if self.stdout is None:
                        poller.unregister(fd)
                else:  # a pipe closed meanwhile (e.g. by a kill on SIGTERM): not ours any more
                    with contextlib.suppress(KeyError):
                        poller.unregister(fd)
            if self.stdout is None:  # its stdout ended: nothing can answer any more
                self.drain()
                return Exchange(exited=True)

    def _write(self, data: bytes, offset: int) -> int:
        assert self.stdin is not None
        try:
            while offset < len(data):
                offset += os.write(self.stdin, data[offset:offset + 65536])
        except BlockingIOError:
            pass
        except OSError:  # EPIPE: it closed its stdin (it is exiting)
            self._close("stdin")
        return offset

    def _read_stderr(self) -> bool:
        """Read what is there into the tail; False once stderr has ended."""
        assert self.stderr is not None
        try:
            chunk = os.read(self.stderr, 65536)
        except BlockingIOError:
            return True
        except OSError:
            chunk = b""
        if not chunk:
            self._close("stderr")
            return False
        self.tail.add(chunk)
        return True

    def _read_stdout(self, item_id: str) -> Exchange | None:
        assert self.stdout is not None
        try:
            chunk = os.read(self.stdout, 65536)
        except BlockingIOError:
            return None
        except OSError:
            chunk = b""
        if not chunk:
            self._close("stdout")
            rest = self.lines.rest()
            if rest:
                self.tail.add(rest)
            return None
        for line, partial in self.lines.feed(chunk):
            if not is_protocol_line(line):
                self.stray = True
                self.tail.add(line)
                continue
            if partial:
                return Exchange(protocol="a protocol line longer than 1 MiB")
            try:
                reply = parse_reply(line, item_id)
            except ProtocolError as exc:
                self.tail.add(line[:2000])
                return Exchange(protocol=str(exc))
            self.spoke = True
            self.items += 1
            self.drain_stderr()  # what it wrote there before answering is this item's
            return Exchange(reply=reply)
        return None

    def drain(self) -> None:
        """Read the stderr (and stdout) already written, without waiting."""
        self.drain_stderr()
        if self.stdout is not None:
            with contextlib.suppress(OSError):
                chunk = os.read(self.stdout, 65536)
                if chunk:
                    self.tail.add(chunk)

    def drain_stderr(self) -> None:
        for _ in range(64):  # at most 4 MiB: the tail keeps only its cap anyway
            if self.stderr is None:
                break
            poller = select.poll()
            poller.register(self.stderr, _readable())
            if not poller.poll(0) or not self._read_stderr():
                break

    def _close(self, which: str) -> None:
        stream = getattr(self.popen, which)
        setattr(self, which, None)
        with contextlib.suppress(OSError):
            stream.close()

    def close_input(self) -> None:
        """Close the worker's stdin: a worker exits at the end of its input."""
        if self.stdin is not None:
            self._close("stdin")

    def stop(self, *, grace: float, term: bool = False) -> None:
        """End the worker: ``term`` sends SIGTERM first (a timeout); otherwise stdin is
        closed (the normal end: a worker exits at the end of its input). After ``grace``
        seconds its whole group is killed; nothing it started outlives it."""
        term_sig, kill_sig = stop_signals()
        if term:
            self.signal_group(term_sig)
        else:
            self.close_input()
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.popen.wait(grace)
        self.signal_group(kill_sig)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.popen.wait(5)
        self.drain()
        for which in ("stdin", "stdout", "stderr"):
            if getattr(self, which) is not None:
                self._close(which)
