"""The settings of a gate that knows noise: ``--repeat K|auto``, ``--baseline-runs N`` and
``--on-inconclusive warn|block`` (one rule each, their names in :data:`NOISE_NAMES`).

With ``repeat`` >= 2 (or ``auto``) every item is replayed in K runs of its own; with
``baseline-runs`` >= 2 the default branch's history is read back that many runs. Both feed the
noise-aware verdict (``docs/noise.md``). ``repeat`` 1 with ``baseline-runs`` 1 is today's
gate, unchanged.
"""

from __future__ import annotations

from typing import Any

from neens_action.settings.names import Name, Ref, Rules, SettingError, table

AUTO = "auto"
MAX_REPEAT = 20  # repetitions of one item in one build
AUTO_CAP = 5  # adaptive repeats: at most this many repetitions of an item
MAX_BASELINE_RUNS = 50
HISTORY_WITH_REPEATS = 5  # --baseline-runs when repeats are on and it was not given
ON_INCONCLUSIVE = ("warn", "block")

NOISE_NAMES = table("baseline_runs", "on_inconclusive",
                    repeat=Name("--repeat", "repeat"))


def parse_repeat(value: Any) -> int | str:
    """``--repeat`` as given (``3``, ``"3"``, ``"auto"``) -> K or ``"auto"``; raises
    :class:`SettingError` naming ``repeat``."""
    if value is None:
        return 1
    if isinstance(value, str):
        text = value.strip().lower()
        if text == AUTO:
            return AUTO
        if text.isdigit():
            value = int(text)
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_REPEAT:
        raise SettingError("repeat", f"must be a whole number from 1 to {MAX_REPEAT}, or "
                                     f"auto, got {str(value)[:40]}")
    return value


def _repeat(field: str, value: Any) -> None:
    parse_repeat(value)


def _baseline_runs(field: str, value: Any) -> None:
    if value is None:
        return
    if isinstance(value, bool) or not isinstance(value, int) or not (
            1 <= value <= MAX_BASELINE_RUNS):
        raise SettingError(field, f"must be a whole number from 1 to {MAX_BASELINE_RUNS}, "
                                  f"got {str(value)[:40]}")


def _on_inconclusive(field: str, value: Any) -> None:
    if value is None:
        return
    if not isinstance(value, str) or value.strip().lower() not in ON_INCONCLUSIVE:
        raise SettingError(field, f"must be one of {', '.join(ON_INCONCLUSIVE)}, got "
                                  f"{str(value)[:40]!r}")


NOISE_RULES: Rules = {"repeat": _repeat, "baseline_runs": _baseline_runs,
                      "on_inconclusive": _on_inconclusive}


class RepeatPlan:
    """What the flags ask for: K (the cap with ``auto``), adaptive or not, N history runs."""

    def __init__(self, repeat: Any, baseline_runs: int | None, on_inconclusive: str | None):
        parsed = parse_repeat(repeat)
        self.adaptive = parsed == AUTO
        self.repeats = AUTO_CAP if self.adaptive else int(parsed)
        self.spelled: int | str = parsed
        if baseline_runs is None:
            baseline_runs = HISTORY_WITH_REPEATS if (self.adaptive or self.repeats >= 2) else 1
        self.history = int(baseline_runs)
        self.on_inconclusive = (on_inconclusive or "warn").strip().lower()

    @property
    def repeated(self) -> bool:
        """More than one replay of an item (K >= 2 or auto)."""
        return self.adaptive or self.repeats >= 2

    @property
    def noise_aware(self) -> bool:
        """The noise-aware verdict is on (repeats, or N >= 2 history runs)."""
        return self.repeated or self.history >= 2


def check_combinations(settings: Any) -> None:
    """``--repeat`` >= 2 needs runs this job creates, and is not for sharding."""
    plan = RepeatPlan(settings.repeat, settings.baseline_runs, settings.on_inconclusive)
    if not plan.repeated:
        return
    for other in ("shard", "no_start", "finish", "only_create"):
        if getattr(settings, other, None):
            raise SettingError("repeat", [f"{plan.spelled} is not supported with ", Ref(other),
                                          ": a sharded run is replayed once (leave ",
                                          Ref("repeat"), " at 1)"])
    if getattr(settings, "run_id", None):
        raise SettingError("repeat", [f"{plan.spelled} creates one run per repetition: it "
                                      "cannot drive ", Ref("run_id"), " (use ", Ref("create"),
                                      " or ", Ref("gates"), ")"])
