"""The outside world a flow touches, built in one place and passed in.

Flows never read ``os.environ``, print, sleep or look at the clock directly: they use the
:class:`World` they are given, so tests hand in fakes at the edges only. The CI platform
(:mod:`neens_action.ci.platforms`) is resolved here, once, from the environment given (or
handed in by the CI front door, which resolved it from the job's).
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import TextIO, cast

from neens_action.ci import platforms
from neens_action.ci.platforms import Platform
from neens_action.errors import Interrupted


class Clock:
    """Real time. Tests may pass a subclass that does not sleep."""

    def monotonic(self) -> float:
        return time.monotonic()

    def sleep(self, seconds: float) -> None:
        if seconds > 0:
            time.sleep(seconds)

    def utcnow(self) -> datetime:
        return datetime.now(timezone.utc)


@dataclass
class World:
    environ: Mapping[str, str] = field(default_factory=lambda: dict(os.environ), repr=False)
    err: TextIO = field(default_factory=lambda: sys.stderr)  # human log
    out: TextIO = field(default_factory=lambda: sys.stdout)  # machine output (--json)
    clock: Clock = field(default_factory=Clock)
    platform: Platform = field(default=cast(Platform, None))  # None: detected from environ
    # called with the item count once the items are known, before the first agent starts
    # (the CI step posts its "running" PR comment there); None: nobody is listening
    on_start: Callable[[int], None] | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        if self.platform is None:
            self.platform = platforms.detect(self.environ)

    def log(self, message: str = "") -> None:
        """One human line on stderr, flushed (CI logs are read live)."""
        print(message, file=self.err, flush=True)

    def starting(self, items: int) -> None:
        """The agents are about to run ``items`` items: tell :attr:`on_start` (never fatal)."""
        if self.on_start is None:
            return
        try:
            self.on_start(items)
        except Interrupted:  # SIGTERM while the note was being posted: the run stops
            raise
        except Exception as exc:  # a progress note never stops the run
            self.log(f"neens: warning: could not post the progress comment: "
                     f"{type(exc).__name__}")
