"""Starting agent processes: one child with its stdin and its output on pipes we own.

``launch(argv, env)`` starts a child in its own session (POSIX) / process group (Windows)
with stdin on one pipe and stdout plus stderr on another, and returns a :class:`Child`
holding the parent's ends as plain file descriptors (and a pidfd where Linux has one).

On Linux with glibc 2.34 or newer the child is started by glibc's ``posix_spawn`` called
through ``ctypes``. A ctypes call releases the GIL for as long as it runs, and
``posix_spawn`` runs until the child has exec'd: the other worker threads keep working
meanwhile, and the parent pays for no copy of its page tables. ``subprocess.Popen`` and
``os.posix_spawn`` hold the GIL through that wait, so eight workers launching ``cat``
queue behind each other (measured in bench/README.md). Everywhere else, or if the C
library lacks what is needed, ``subprocess.Popen`` starts the child; both give the child
the same thing: the same argv, exactly ``env``, default SIGPIPE/SIGXFSZ handling, an empty
signal mask, a new session, and no descriptor but 0, 1 and 2.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import os
import select
import shutil
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from neens_action.agents.proc import pidfd as open_pidfd

_POSIX = os.name == "posix"
_SESSION: dict[str, Any] = (
    {"start_new_session": True} if _POSIX
    else {"creationflags": getattr(subprocess, "CREATE_NEW_PROCESS_GROUP", 0)})


class Child:
    """A started agent: ``stdin`` and ``stdout`` are the parent's pipe ends (fds, owned by
    this object; ``stdin`` is None once closed), ``pidfd`` is readable once it exits."""

    def __init__(self, pid: int, stdin: int, stdout: int,
                 popen: subprocess.Popen[bytes] | None = None) -> None:
        self.pid = pid
        self.stdin: int | None = stdin
        self.stdout: int | None = stdout
        self.returncode: int | None = None
        self._popen = popen
        self.pidfd: int | None = None  # opened when an exit has to be waited for

    def poll(self) -> int | None:
        """The exit code (negative: killed by that signal), or None while it runs."""
        if self.returncode is not None:
            return self.returncode
        if self._popen is not None:
            self.returncode = self._popen.poll()
            return self.returncode
        try:
            pid, status = os.waitpid(self.pid, os.WNOHANG)
        except ChildProcessError:  # reaped elsewhere (SIGCHLD ignored): status unknown
            self.returncode = 0
            return 0
        if pid:
            self.returncode = os.waitstatus_to_exitcode(status)
        return self.returncode

    def open_pidfd(self) -> int | None:
        """A pidfd of the child (readable once it has exited), or None where unsupported."""
        if self.pidfd is None:
            self.pidfd = open_pidfd(self.pid)
        return self.pidfd

    def wait(self, timeout: float) -> int | None:
        """Wait at most ``timeout`` seconds for the exit; the exit code or None."""
        if self._popen is not None:
            with contextlib.suppress(subprocess.TimeoutExpired):
                self._popen.wait(timeout)
            return self.poll()
        end = time.monotonic() + timeout
        delay = 0.0005
        if self.poll() is None:
            self.open_pidfd()
        while self.poll() is None:
            left = end - time.monotonic()
            if left <= 0:
                return None
            if self.pidfd is not None:
                select.select([self.pidfd], [], [], left)
            else:
                time.sleep(min(delay, left))
                delay = min(delay * 2, 0.05)
        return self.returncode

    def signal_group(self, sig: int | None) -> None:
        """Send ``sig`` to the child's whole process group (Windows: kill the child)."""
        try:
            if _POSIX and sig is not None:
                os.killpg(self.pid, sig)
            elif self._popen is not None:  # pragma: no cover - Windows
                self._popen.kill()
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


def launch_popen(argv: Sequence[str], env: Mapping[str, str]) -> Child:
    """Start ``argv`` with ``subprocess.Popen`` (every platform)."""
    return _with_pipes(lambda stdin, out: _popen(argv, env, stdin, out))


def _popen(argv: Sequence[str], env: Mapping[str, str], stdin: int,
           out: int) -> tuple[int, subprocess.Popen[bytes]]:
    proc = subprocess.Popen(list(argv), env=dict(env), stdin=stdin, stdout=out, stderr=out,
                            close_fds=True, **_SESSION)
    return proc.pid, proc


def _with_pipes(start: Callable[[int, int], tuple[int, subprocess.Popen[bytes] | None]],
                ) -> Child:
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


# -- glibc posix_spawn through ctypes ----------------------------------------------------------

_SETSIGDEF, _SETSIGMASK, _SETSID = 0x04, 0x08, 0x80  # glibc's POSIX_SPAWN_* flag values
_OPAQUE = 1024  # bytes for a posix_spawn_file_actions_t / posix_spawnattr_t / sigset_t
# (glibc's are 80 / 336 / 128 bytes on 64-bit Linux; the init functions fill them in)
_MEMO = 1024  # environment entries remembered, already encoded


class _Glibc:
    """The few libc functions and one shared spawn attribute set (built once)."""

    def __init__(self) -> None:
        libc = ctypes.CDLL(None, use_errno=True)
        vp, ci, cp = ctypes.c_void_p, ctypes.c_int, ctypes.c_char_p
        argvp = ctypes.POINTER(cp)
        prototypes = [("posix_spawn", [ctypes.POINTER(ci), cp, vp, vp, argvp, argvp]),
                      ("posix_spawn_file_actions_init", [vp]),
                      ("posix_spawn_file_actions_destroy", [vp]),
                      ("posix_spawn_file_actions_adddup2", [vp, ci, ci]),
                      ("posix_spawn_file_actions_addclosefrom_np", [vp, ci]),
                      ("posix_spawnattr_init", [vp]),
                      ("posix_spawnattr_setflags", [vp, ctypes.c_short]),
                      ("posix_spawnattr_setsigdefault", [vp, vp]),
                      ("posix_spawnattr_setsigmask", [vp, vp])]
        for name, argtypes in prototypes:
            fn = getattr(libc, name)  # AttributeError: this libc lacks it
            fn.argtypes = argtypes
            fn.restype = ci
        self.libc = libc
        self.memo: dict[tuple[str, str], bytes] = {}  # see _environ
        self.attr = ctypes.create_string_buffer(_OPAQUE)
        # Reset to the default action in the child: SIGPIPE and SIGXFSZ, which Python
        # ignores (what Popen's restore_signals does), and glibc's two internal signals
        # (32, 33), which its posix_spawn would otherwise leave ignored after the exec
        # (glibc's sigaddset refuses those two, so the set is written bit by bit).
        default = _sigset(signal.SIGPIPE, signal.SIGXFSZ, *range(32, signal.SIGRTMIN))
        empty = _sigset()
        for call in (lambda: libc.posix_spawnattr_init(self.attr),
                     lambda: libc.posix_spawnattr_setsigdefault(self.attr, default),
                     lambda: libc.posix_spawnattr_setsigmask(self.attr, empty),
                     lambda: libc.posix_spawnattr_setflags(
                         self.attr, _SETSIGDEF | _SETSIGMASK | _SETSID)):
            if call() != 0:
                raise OSError("posix_spawnattr set-up failed")

    def _environ(self, env: Mapping[str, str]) -> list[bytes]:
        """``env`` as ``NAME=value`` strings. Short entries are remembered (at most
        ``_MEMO`` of them): most of an item's environment is the same for every item."""
        memo = self.memo
        out = []
        for pair in env.items():
            entry = memo.get(pair)
            if entry is None:
                entry = _c_string(pair[0], name=True) + b"=" + _c_string(pair[1])
                if len(entry) <= 512 and len(memo) < _MEMO:
                    memo[pair] = entry
            out.append(entry)
        return out

    def start(self, argv: Sequence[str], env: Mapping[str, str], stdin: int,
              out: int) -> tuple[int, None]:
        libc = self.libc
        args = [_c_string(a) for a in argv]
        envp = self._environ(env)
        actions = ctypes.create_string_buffer(_OPAQUE)
        if libc.posix_spawn_file_actions_init(actions) != 0:
            raise OSError("posix_spawn_file_actions_init failed")
        try:
            for call in ((libc.posix_spawn_file_actions_adddup2, stdin, 0),
                         (libc.posix_spawn_file_actions_adddup2, out, 1),
                         (libc.posix_spawn_file_actions_adddup2, out, 2),
                         (libc.posix_spawn_file_actions_addclosefrom_np, 3)):
                err = call[0](actions, *call[1:])
                if err:
                    raise OSError(err, os.strerror(err))
            pid = ctypes.c_int()
            err = libc.posix_spawn(
                ctypes.byref(pid), args[0], actions, self.attr,
                (ctypes.c_char_p * (len(args) + 1))(*args, None),
                (ctypes.c_char_p * (len(envp) + 1))(*envp, None))
        finally:
            libc.posix_spawn_file_actions_destroy(actions)
        if err:
            raise OSError(err, os.strerror(err), argv[0])
        return pid.value, None


def _sigset(*signals: int) -> ctypes.Array[ctypes.c_ulong]:
    """A glibc ``sigset_t`` holding ``signals``: 1024 bits in unsigned longs, signal n at
    bit n - 1."""
    bits = 8 * ctypes.sizeof(ctypes.c_ulong)
    words = (ctypes.c_ulong * (1024 // bits))()
    for sig in signals:
        words[(sig - 1) // bits] |= 1 << ((sig - 1) % bits)
    return words


def _c_string(text: str, *, name: bool = False) -> bytes:
    raw = os.fsencode(text)
    if b"\0" in raw:
        raise ValueError("embedded null byte")
    if name and (not raw or b"=" in raw):
        raise ValueError(f"illegal environment variable name: {text[:100]!r}")
    return raw


_glibc: _Glibc | None = None
_glibc_checked = False
_glibc_lock = threading.Lock()


def _load_glibc() -> _Glibc | None:
    """The posix_spawn launcher, or None where it is not available (checked once)."""
    global _glibc, _glibc_checked
    if not _glibc_checked:
        with _glibc_lock:
            if not _glibc_checked:
                try:
                    version = os.confstr("CS_GNU_LIBC_VERSION") or ""  # "glibc 2.36"
                    major, minor = (int(x) for x in version.split()[1].split(".")[:2])
                    if version.startswith("glibc ") and (major, minor) >= (2, 34):
                        _glibc = _Glibc()
                except (AttributeError, IndexError, OSError, ValueError):
                    _glibc = None
                _glibc_checked = True
    return _glibc


def launch_spawn(argv: Sequence[str], env: Mapping[str, str]) -> Child:
    """Start ``argv`` with glibc's posix_spawn (OSError if this system has none)."""
    glibc = _load_glibc()
    if glibc is None:
        raise OSError("posix_spawn through ctypes needs Linux with glibc 2.34 or newer")
    return _spawn(glibc, argv, env)


def _spawn(glibc: _Glibc, argv: Sequence[str], env: Mapping[str, str]) -> Child:
    program = argv[0]
    if os.sep not in program:  # posix_spawn does not search PATH; Popen searches env's
        path = env.get("PATH", os.defpath)
        found = shutil.which(program, path=path)
        if found is None:
            raise _not_on_path(program, path)
        argv = [found, *argv[1:]]
    return _with_pipes(lambda stdin, out: glibc.start(argv, env, stdin, out))


def _not_on_path(program: str, path: str) -> OSError:
    """What exec would have said: EACCES if the program is there but not executable."""
    for folder in filter(None, path.split(os.pathsep)):
        if os.path.isfile(os.path.join(folder, program)):
            return PermissionError(errno.EACCES, os.strerror(errno.EACCES), program)
    return FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), program)


def launch(argv: Sequence[str], env: Mapping[str, str]) -> Child:
    """Start ``argv`` the fastest way this system allows (see the module docstring)."""
    glibc = _load_glibc()
    return launch_popen(argv, env) if glibc is None else _spawn(glibc, argv, env)
