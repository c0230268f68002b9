"""The runner's fast path: one agent driven by one ``poll(2)`` loop (Linux and other POSIX
systems with ``select.poll``; Windows has none and uses :mod:`neens_action.agents.portable`).

:func:`communicate` has the portable path's signature, so the runner picks one or the other
per child (:attr:`neens_action.agents.launcher.Child.portable`). ``select.poll`` and its
``POLL*`` names are read only here, and only when an agent is driven.
"""

from __future__ import annotations

import contextlib
import os
import select
from collections.abc import Callable

from neens_action.agents.launcher import Child
from neens_action.agents.proc import OutputTail, feed, read_output

_PIPE_PAGE = 4096  # PIPE_BUF: every pipe takes this much at once, even at the pipe limit


def communicate(child: Child, text: str, *, timeout: float | None, grace: float, drain: float,
                output_cap: int, clock: Callable[[], float], stopping: Callable[[], bool],
                term: int | None, kill: int | None) -> tuple[bool, OutputTail]:
    """Feed stdin, collect the output tail, wait for the exit (or the deadline).

    Built for the common case of a short agent, with as few system calls as possible
    (each one hands the GIL to another worker and back): an input that fits one pipe
    page is written at once and stdin closed; one ``poll(2)`` then waits for output,
    its end and, through a pidfd (Linux), the exit; the output left after the last
    writer closed is read without waiting again. Without a pidfd the exit is checked
    when the output has ended and on every quiet wake-up (at least every 0.1 s, which
    is also when the timeout, the kill on interrupt, and a leader that exited while
    something it started still holds the output are handled).
    """
    tail = OutputTail(output_cap)
    data = (text or "").encode("utf-8", errors="replace")
    out = child.stdout
    assert out is not None and child.stdin is not None
    poller = select.poll()
    poller.register(out, select.POLLIN | select.POLLHUP)
    offset = _write_small(child, data)
    if offset < len(data):  # a larger input goes in as the agent reads it
        os.set_blocking(child.stdin, False)
        offset = feed(child.stdin, data, offset)
        if offset < len(data):
            poller.register(child.stdin, select.POLLOUT)
        else:
            child.close_stdin()
    exit_fd = child.open_pidfd()
    if exit_fd is not None:
        poller.register(exit_fd, select.POLLIN)
    deadline = clock() + timeout if timeout else None
    timed_out = False
    exited = False
    term_at: float | None = None  # when SIGTERM was sent
    drain_until: float | None = None  # stop reading by then (after exit or kill)
    eof = False
    try:
        while True:
            now = clock()
            if not exited:
                if stopping():
                    child.signal_group(kill)
                if deadline is not None and not timed_out and now >= deadline:
                    timed_out, term_at = True, now
                    child.signal_group(term)
                if term_at is not None and now - term_at >= grace:
                    child.signal_group(kill)
                    term_at = None
            elif eof:
                break
            elif drain_until is None:
                drain_until = now + drain
            elif now >= drain_until:
                break
            wait = 0.1
            if deadline is not None and not timed_out:
                wait = min(wait, deadline - now)
            if drain_until is not None:
                wait = min(wait, drain_until - now)
            wait = max(0.0, wait)
            if eof and child.stdin is None and exit_fd is None:  # only the exit left
                exited = child.wait(wait)
                continue
            events = poller.poll(wait * 1000)
            for fd, happened in events:
                if fd == out:
                    eof = read_output(out, tail, closed=bool(happened & select.POLLHUP))
                    if eof:
                        poller.unregister(out)
                elif fd == exit_fd:
                    poller.unregister(exit_fd)
                    exit_fd = None
                    exited = child.poll()
                elif child.stdin is not None:  # stdin can take more
                    offset = feed(child.stdin, data, offset)
                    if offset >= len(data):
                        poller.unregister(child.stdin)
                        child.close_stdin()
            if not exited and exit_fd is None and (eof or not events):
                exited = child.poll()
    finally:
        child.close_pipes()
        # Nothing of this item may outlive it (leader exited, or timed out/killed).
        child.signal_group(kill)
        if not child.poll():
            child.wait(drain)
        child.close()
    return timed_out, tail


def _write_small(child: Child, data: bytes) -> int:
    """Write an input of at most one pipe page to the new, empty pipe (which takes it
    without blocking) and close stdin; returns how much is written (0: a larger input)."""
    if len(data) > _PIPE_PAGE:
        return 0
    assert child.stdin is not None
    if data:
        with contextlib.suppress(OSError):  # EPIPE: the agent closed its stdin already
            os.write(child.stdin, data)
    child.close_stdin()
    return len(data)
