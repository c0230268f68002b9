"""A clock for flow tests: time moves only when the code under test sleeps."""

from __future__ import annotations

from neens_action.world import Clock


class FakeClock(Clock):
    def __init__(self) -> None:
        self.now = 0.0
        self.sleeps: list[float] = []  # every sleep asked for, in order

    def monotonic(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += max(seconds, 0.0)
