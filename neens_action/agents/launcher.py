"""Starting agent processes: one child with its stdin and its output on pipes we own.

A launcher is ``launch(argv, env) -> Child``: it starts ``argv`` in its own session (POSIX) /
process group (Windows) with stdin on one pipe and stdout plus stderr on another, and returns
a :class:`Child` holding the parent's ends as plain file descriptors. Three launchers exist:

- :func:`launch_glibc`: glibc's ``posix_spawn`` through ctypes (all of that fenced in
  :mod:`neens_action.agents.glibc_launcher`); it releases the GIL while the child starts,
  so parallel workers do not queue behind each other. Linux with glibc 2.34 or newer.
- :func:`launch_popen`: ``subprocess.Popen``, everywhere.
- :func:`launch_portable`: Popen too, for the portable path
  (:mod:`neens_action.agents.portable`: threads instead of ``poll(2)``), used on Windows,
  wherever ``select.poll`` is missing, and whenever ``NEENS_LAUNCHER=portable``.

They give the child the same start: the argv, exactly ``env``, default SIGPIPE/SIGXFSZ
handling, an empty signal mask, a new session, and no descriptor but 0, 1 and 2.
Which one runs is decided in :mod:`neens_action.agents.driver` (``NEENS_LAUNCHER``).

Exit statuses are collected here for both (``waitpid`` on POSIX, woken by a pidfd where
Linux has one, waited on with ``poll``, so any descriptor number works). A status that cannot
be read (the child was reaped elsewhere, or the status makes no sense) is never taken for a
success: :attr:`Child.status_error` says why, and :attr:`Child.returncode` stays None.
"""

from __future__ import annotations

import contextlib
import os
import select
import signal
import subprocess
import time
from collections.abc import Callable, Iterator, Mapping, Sequence

from neens_action.agents import glibc_launcher, portable
from neens_action.agents.proc import pidfd as open_pidfd

_POSIX = os.name == "posix"
_waitpid = os.waitpid  # the one place exit statuses are read (tests fake its failures)


class Child:
    """A started agent: ``stdin`` and ``stdout`` are the parent's pipe ends (fds, owned by
    this object; None once closed), ``pidfd`` is readable once it exits. ``returncode``
    (negative: killed by that signal) and ``status_error`` are set once it has exited."""

    def __init__(self, pid: int, stdin: int, stdout: int,
                 popen: subprocess.Popen[bytes] | None = None) -> None:
        self.pid = pid
        self.stdin: int | None = stdin
        self.stdout: int | None = stdout
        self.returncode: int | None = None
        self.status_error: str | None = None  # it exited, but its status could not be read
        self._popen = popen  # Windows only: there Popen waits and kills
        self.pidfd: int | None = None  # opened when an exit has to be waited for
        self.portable = False  # True: the runner drives it with threads (portable.py)

    @property
    def exited(self) -> bool:
        """True once the exit has been collected (with its status, or with status_error)."""
        return self.returncode is not None or self.status_error is not None

    def poll(self) -> bool:
        """Collect the exit if it has happened (never blocks); True once it has."""
        if self.exited:
            return True
        if self._popen is not None:  # pragma: no cover - Windows
            self.returncode = self._popen.poll()
            return self.returncode is not None
        try:
            pid, status = _waitpid(self.pid, os.WNOHANG)
        except ChildProcessError as exc:  # reaped elsewhere (e.g. SIGCHLD ignored)
            self.status_error = f"agent exit status could not be read ({exc.strerror or exc})"
            return True
        if not pid:
            return False
        try:
            self.returncode = os.waitstatus_to_exitcode(status)
        except ValueError:  # neither an exit nor a signal
            self.status_error = f"agent exit status could not be read (status {status:#x})"
        return True

    def open_pidfd(self) -> int | None:
        """A pidfd of the child (readable once it has exited), or None where unsupported."""
        if self.pidfd is None and not self.exited:
            self.pidfd = open_pidfd(self.pid)
        return self.pidfd

    def wait(self, timeout: float) -> bool:
        """Wait at most ``timeout`` seconds for the exit; True once it has been collected."""
        if self.poll():
            return True
        if self._popen is not None:  # pragma: no cover - Windows
            with contextlib.suppress(subprocess.TimeoutExpired):
                self._popen.wait(timeout)
            return self.poll()
        end = time.monotonic() + timeout
        fd = self.open_pidfd() if hasattr(select, "poll") else None
        poller = None
        if fd is not None:
            poller = select.poll()  # poll, not select: a pidfd may be >= FD_SETSIZE
            poller.register(fd, select.POLLIN)
        delay = 0.0005
        while not self.poll():
            left = end - time.monotonic()
            if left <= 0:
                return False
            if poller is not None:
                poller.poll(left * 1000)
            else:
                time.sleep(min(delay, left))
                delay = min(delay * 2, 0.05)
        return True

    def signal_group(self, sig: int | None) -> None:
        """Send ``sig`` to the child's whole process group (Windows: kill the child)."""
        try:
            if _POSIX and sig is not None:
                os.killpg(self.pid, sig)
            elif not _POSIX and not self.exited:  # Windows: the whole tree, at once
                portable.kill_tree_windows(self.pid)
        except OSError:  # gone already, or not ours to signal
            pass

    def close_stdin(self) -> None:
        self._close("stdin")

    def close_pipes(self) -> None:
        """Close our ends of both pipes (a writer left in the group gets EPIPE)."""
        self._close("stdin")
        self._close("stdout")

    def close(self) -> None:
        """Close every descriptor this object holds (not the process)."""
        self.close_pipes()
        self._close("pidfd")

    def _close(self, name: str) -> None:
        fd = getattr(self, name)
        if fd is not None:
            setattr(self, name, None)
            with contextlib.suppress(OSError):
                os.close(fd)


Launch = Callable[[Sequence[str], Mapping[str, str]], Child]
_Start = Callable[[int, int], tuple[int, "subprocess.Popen[bytes] | None"]]


def launch_popen(argv: Sequence[str], env: Mapping[str, str]) -> Child:
    """Start ``argv`` with ``subprocess.Popen`` (every platform)."""
    return _with_pipes(lambda stdin, out: _popen(argv, env, stdin, out))


def launch_glibc(argv: Sequence[str], env: Mapping[str, str]) -> Child:
    """Start ``argv`` with glibc's posix_spawn (OSError if this system has none)."""
    return _with_pipes(lambda stdin, out: (glibc_launcher.spawn(argv, env, stdin, out), None))


def launch_portable(argv: Sequence[str], env: Mapping[str, str]) -> Child:
    """Start ``argv`` with ``subprocess.Popen`` for the portable path (threads, no poll)."""
    if not _POSIX:
        env = portable.windows_env(env)
    child = _with_pipes(lambda stdin, out: _popen(argv, env, stdin, out))
    child.portable = True
    return child


def _popen(argv: Sequence[str], env: Mapping[str, str], stdin: int,
           out: int) -> tuple[int, subprocess.Popen[bytes] | None]:
    if not _POSIX:
        proc = subprocess.Popen(list(argv), env=dict(env), stdin=stdin, stdout=out, stderr=out,
                                close_fds=True, creationflags=portable.creation_flags())
        return proc.pid, proc
    with _no_blocked_signals():
        proc = subprocess.Popen(list(argv), env=dict(env), stdin=stdin, stdout=out, stderr=out,
                                close_fds=True, start_new_session=True)
    # The Child reaps it (waitpid, so a status that cannot be read is not taken for 0, as
    # Popen does on ECHILD). A returncode disarms Popen's own reaping (its __del__ and
    # _cleanup would otherwise waitpid this pid, maybe reused by then); the object is dropped.
    proc.returncode = 0
    return proc.pid, None


@contextlib.contextmanager
def _no_blocked_signals() -> Iterator[None]:
    """No signal blocked in the calling thread while Popen forks: a child inherits the mask
    of the thread that forks it, and Popen, unlike posix_spawn, cannot set the child's (a
    ``preexec_fn`` is unsafe with threads). Only this thread's mask changes, for the length
    of the fork, and only if something is blocked. A signal already pending stays blocked
    (unblocking it would deliver it to us now, which whoever blocked it did not want)."""
    blocked = signal.pthread_sigmask(signal.SIG_BLOCK, ())
    if not blocked:
        yield
        return
    signal.pthread_sigmask(signal.SIG_SETMASK, blocked & signal.sigpending())
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, blocked)


def _with_pipes(start: _Start) -> Child:
    """Make the two pipes, let ``start`` start the child on the child's ends, keep ours."""
    child_in, our_in = os.pipe()
    try:
        our_out, child_out = os.pipe()
    except OSError:
        os.close(child_in)
        os.close(our_in)
        raise
    try:
        pid, popen = start(child_in, child_out)
    except BaseException:
        os.close(our_in)
        os.close(our_out)
        raise
    finally:
        os.close(child_in)
        os.close(child_out)
    return Child(pid, our_in, our_out, popen)
