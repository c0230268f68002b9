"""What every handler and internal API call of the sandbox receives: ``Context``.

``ctx.db`` (:class:`~neens_sandbox.db.Database`), ``ctx.options`` (server options),
``ctx.api_keys`` (in memory only, never written), ``ctx.now()`` (wall clock, seconds),
``ctx.log(line)`` (stderr), ``ctx.spawn(name, fn)`` (a daemon background thread) and
``ctx.later(delay, fn)`` (a daemon timer). Handlers never keep state outside SQLite, so a
restart with the same database keeps every run.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from neens_sandbox.db import Database


@dataclass
class Options:
    grace: float = 3.0  # capture grace for items without a trace after /start (+ delay)
    score_delay: float = 0.0  # scoring "takes" this long after /start
    push_async: bool = False  # /run answers `running` and works in the background
    chaos: float = 0.0  # fraction of API requests that get a fault
    chaos_seed: int | None = None
    chaos_kinds: tuple[str, ...] = ("500", "429", "drop", "stall")
    stall_s: float = 2.0
    output_cap: int = 4000  # characters of captured output kept per item
    push_concurrency: int = 4
    finish_on_ingest: bool = False  # inline queue: a fully captured run finishes by itself


@dataclass
class Context:
    db: Database
    options: Options = field(default_factory=Options)
    api_keys: set[str] = field(default_factory=set)
    quiet: bool = False
    extras: dict[str, Any] = field(default_factory=dict)  # free slot for route modules

    def now(self) -> float:
        return time.time()

    def log(self, line: str) -> None:
        if not self.quiet:
            print(f"sandbox: {line}", file=sys.stderr, flush=True)

    def spawn(self, name: str, fn: Callable[[], Any]) -> threading.Thread:
        def guarded() -> None:
            try:
                fn()
            except Exception as exc:  # a background failure must never kill the server
                self.log(f"background task {name} failed: {type(exc).__name__}: {exc}")

        thread = threading.Thread(target=guarded, name=name, daemon=True)
        thread.start()
        return thread

    def later(self, delay: float, fn: Callable[[], Any]) -> threading.Timer:
        timer = threading.Timer(max(0.0, delay), lambda: self.spawn("timer", fn).join())
        timer.daemon = True
        timer.start()
        return timer
