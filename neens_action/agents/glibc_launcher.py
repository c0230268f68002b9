"""The fast way to start an agent: glibc's ``posix_spawn`` called through ``ctypes``.

Everything that touches ctypes or glibc lives here and nowhere else;
:mod:`neens_action.agents.launcher` decides whether it is used (glibc 2.34 or newer, unless
``NEENS_LAUNCHER=popen``) and owns the pipes and the :class:`~neens_action.agents.launcher.Child`.

A ctypes call releases the GIL for as long as it runs, and ``posix_spawn`` runs until the
child has exec'd: the other worker threads keep working meanwhile, and the parent pays for no
copy of its page tables. ``subprocess.Popen`` and ``os.posix_spawn`` hold the GIL through that
wait, so eight workers launching ``cat`` queue behind each other (measured in bench/README.md).

The child gets what the Popen launcher gives it: the argv (the program looked up on the
``PATH`` of ``env``), exactly ``env``, default SIGPIPE/SIGXFSZ handling, an empty signal mask,
a new session, and no descriptor but 0, 1 and 2.
"""

from __future__ import annotations

import ctypes
import errno
import os
import shutil
import signal
import threading
from collections.abc import Mapping, Sequence

UNAVAILABLE = "posix_spawn through ctypes needs Linux with glibc 2.34 or newer"

_SETSIGDEF, _SETSIGMASK, _SETSID = 0x04, 0x08, 0x80  # glibc's POSIX_SPAWN_* flag values
_OPAQUE = 1024  # bytes for a posix_spawn_file_actions_t / posix_spawnattr_t / sigset_t
# (glibc's are 80 / 336 / 128 bytes on 64-bit Linux; the init functions fill them in)
_MEMO = 1024  # environment entries remembered, already encoded
_MIN_VERSION = (2, 34)  # posix_spawn_file_actions_addclosefrom_np


class Glibc:
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

    def start(self, argv: Sequence[str], env: Mapping[str, str], stdin: int, out: int) -> int:
        """Start ``argv`` (its program a path) on ``stdin`` / ``out``; returns the pid."""
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
        return pid.value


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


_glibc: Glibc | None = None
_glibc_checked = False
_glibc_lock = threading.Lock()


def load() -> Glibc | None:
    """The posix_spawn launcher, or None where it is not available (checked once)."""
    global _glibc, _glibc_checked
    if not _glibc_checked:
        with _glibc_lock:
            if not _glibc_checked:
                try:
                    version = os.confstr("CS_GNU_LIBC_VERSION") or ""  # "glibc 2.36"
                    major, minor = (int(x) for x in version.split()[1].split(".")[:2])
                    if version.startswith("glibc ") and (major, minor) >= _MIN_VERSION:
                        _glibc = Glibc()
                except (AttributeError, IndexError, OSError, ValueError):
                    _glibc = None
                _glibc_checked = True
    return _glibc


def spawn(argv: Sequence[str], env: Mapping[str, str], stdin: int, out: int) -> int:
    """Start ``argv`` with glibc's posix_spawn on the child's pipe ends; returns the pid.
    OSError if this system has no usable glibc, or as exec would have failed."""
    glibc = load()
    if glibc is None:
        raise OSError(UNAVAILABLE)
    program = argv[0]
    if os.sep not in program:  # posix_spawn does not search PATH; Popen searches env's
        path = env.get("PATH", os.defpath)
        found = shutil.which(program, path=path)
        if found is None:
            raise _not_on_path(program, path)
        argv = [found, *argv[1:]]
    return glibc.start(argv, env, stdin, out)


def _not_on_path(program: str, path: str) -> OSError:
    """What exec would have said: EACCES if the program is there but not executable."""
    for folder in filter(None, path.split(os.pathsep)):
        if os.path.isfile(os.path.join(folder, program)):
            return PermissionError(errno.EACCES, os.strerror(errno.EACCES), program)
    return FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), program)
