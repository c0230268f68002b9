"""What a noise-aware eval learned, as the flows hand it to the verdict and the report.

The flow that replays K repetitions and reads the default branch's history fills one
:class:`NoiseEvidence` on ``Outcome.noise``; :func:`neens_action.noise.decide` and
:func:`neens_action.noise.judge` turn its records into the run verdict and the gate decision,
and every surface (console, summary, comment, JUnit, ``--json``) renders from it. Without
repeats or history (K = 1, N = 1) ``Outcome.noise`` stays None and every output is today's.
"""

from __future__ import annotations

from dataclasses import dataclass

from neens_action.noise.gate import GateDecision
from neens_action.noise.model import ItemRecord
from neens_action.noise.verdict import RunVerdict


@dataclass(frozen=True)
class RepRun:
    """One repetition of this run: a pre-prod run of its own, scored by Neens."""

    index: int  # 1-based, in replay order
    run_id: str
    status: str
    pass_rate: float | None  # the run's own aggregate pass rate
    gate_passed: bool | None  # the server's own gate on this repetition
    items_replayed: int  # with adaptive repeats, later repetitions replay fewer items


@dataclass(frozen=True)
class HistoryRun:
    """One earlier run of the default branch, reached by following resolved baselines."""

    run_id: str
    version_label: str
    pass_rate: float | None


@dataclass(frozen=True)
class NoiseEvidence:
    """Repeats, history and what the noise-aware verdict made of them."""

    repeat: int | str  # K, or "auto"
    reps: tuple[RepRun, ...]
    history: tuple[HistoryRun, ...]  # newest first
    history_requested: int  # --baseline-runs N
    history_end: str  # why the chain stopped ("" when N runs were found)
    records: tuple[ItemRecord, ...]
    verdict: RunVerdict
    decision: GateDecision
