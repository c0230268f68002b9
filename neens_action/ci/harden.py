"""Process hardening of the front door: what an agent (a child we run) must not reach.

On Linux the front door marks itself non-dumpable (``prctl(PR_SET_DUMPABLE, 0)``): its
``/proc/<pid>/environ``, ``mem`` and friends then belong to root and need ``CAP_SYS_PTRACE``,
so an agent cannot read the parent's environment (the Neens key, ``GITHUB_TOKEN``,
``ACTIONS_RUNTIME_TOKEN``) from ``/proc/$PPID/environ``. A child gets its own flag back on
``execve``, so agents and their core dumps are unaffected.
"""

from __future__ import annotations

import ctypes
import sys

PR_SET_DUMPABLE = 4
PR_GET_DUMPABLE = 3


def _libc() -> ctypes.CDLL | None:
    if not sys.platform.startswith("linux"):
        return None
    try:
        return ctypes.CDLL(None, use_errno=True)
    except OSError:  # pragma: no cover - a Linux without a C library to load
        return None


def make_undumpable() -> bool:
    """Mark this process non-dumpable; True when it now is (False off Linux)."""
    libc = _libc()
    if libc is None:
        return False
    if libc.prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0:
        return False
    return dumpable() is False


def dumpable() -> bool | None:
    """This process's dumpable flag (None where it cannot be read)."""
    libc = _libc()
    if libc is None:
        return None
    value = libc.prctl(PR_GET_DUMPABLE, 0, 0, 0, 0)
    return None if value < 0 else bool(value)
