"""How agents are driven, decided in one place: :func:`make_runner`.

Four drivers exist; the job's settings and its environment pick one, once per runner:

- ``--workers N`` (``workers``): N long-lived worker processes
  (:class:`neens_action.agents.workers.WorkerRunner`; its module, and the ``poll(2)`` code of
  :mod:`~neens_action.agents.worker_proc`, are imported only then);
- otherwise one process per item, started by a launcher of
  :mod:`neens_action.agents.launcher` (:func:`choose_launch`): glibc's ``posix_spawn`` where
  Linux has glibc 2.34 or newer, ``subprocess.Popen`` elsewhere on POSIX, and the portable
  path (threads instead of ``poll(2)``, :mod:`neens_action.agents.portable`) wherever
  ``select.poll`` is missing (Windows). ``NEENS_LAUNCHER=popen|glibc|portable`` forces one.

Nothing here, or anywhere in the agents package, reads a platform constant at import time, so
every command imports on Windows; this module looks at ``select`` only when it chooses.
"""

from __future__ import annotations

import os
import select
from collections.abc import Mapping, Sequence
from typing import Any

from neens_action.agents import glibc_launcher
from neens_action.agents.launcher import Launch, launch_glibc, launch_popen, launch_portable
from neens_action.agents.runner import Runner
from neens_action.errors import UsageError

LAUNCHER_VAR = "NEENS_LAUNCHER"
LAUNCHERS = ("popen", "glibc", "portable")
_POSIX = os.name == "posix"


def fast_path_available() -> bool:
    """The runner's fast path needs POSIX pipes and ``select.poll`` (not on Windows)."""
    return _POSIX and hasattr(select, "poll")


def choose_launch(environ: Mapping[str, str]) -> Launch:
    """The launcher ``environ`` asks for (``NEENS_LAUNCHER``): ``popen``, ``glibc``
    (UsageError where it is unavailable), ``portable``, or unset/empty: the portable path
    where the fast path cannot run, else glibc where available, else Popen. Any other value
    is a UsageError (exit 2)."""
    value = environ.get(LAUNCHER_VAR, "").strip().lower()
    if value == "popen":
        return launch_popen
    if value == "portable" or (not value and not fast_path_available()):
        return launch_portable
    available = glibc_launcher.load() is not None
    if value == "glibc":
        if not available:
            raise UsageError(f"{LAUNCHER_VAR}=glibc: {glibc_launcher.UNAVAILABLE} "
                             f"(unset it or use {LAUNCHER_VAR}=popen)")
        return launch_glibc
    if value:
        raise UsageError(f"{LAUNCHER_VAR} must be {', '.join(LAUNCHERS[:-1])} or "
                         f"{LAUNCHERS[-1]} (got {value[:40]!r})")
    return launch_glibc if available else launch_popen


def make_runner(command: Sequence[str] | str, *, workers: int | None = None,
                environ: Mapping[str, str] | None = None, launch: Launch | None = None,
                **kwargs: Any) -> Runner:
    """The runner for ``command``: ``workers`` warm worker processes, or one process per item
    started by the launcher ``environ`` asks for (``launch`` overrides it). A bad
    ``NEENS_LAUNCHER`` is a UsageError either way."""
    chosen = launch or choose_launch(environ or {})
    if workers:
        from neens_action.agents.workers import WorkerRunner

        kwargs.pop("concurrency", None)
        return WorkerRunner(command, workers=workers, **kwargs)
    return Runner(command, launch=chosen, **kwargs)


__all__ = ["LAUNCHERS", "LAUNCHER_VAR", "choose_launch", "fast_path_available", "make_runner"]
