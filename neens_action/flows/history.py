"""The default branch's history as the baseline: follow the resolved baseline back (the
candidate's baseline run, that run's own baseline run, ...) up to N runs over the same dataset
version, reading each run's per-item verdicts once (``item id -> passed``, nothing else kept).

The chain stops at a production window, a run over another dataset version or a run that
cannot be read; :attr:`History.end` says why ("" when N runs were found).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from neens_action.api.answers import Baseline, Run
from neens_action.errors import NeensApiError
from neens_action.noise.evidence import HistoryRun

if TYPE_CHECKING:
    from neens_action.api.client import NeensClient


@dataclass
class History:
    """What the chain gave: the runs (newest first), their verdicts, why it stopped."""

    runs: list[HistoryRun] = field(default_factory=list)
    verdicts: list[dict[str, bool]] = field(default_factory=list)
    end: str = ""


def verdicts_of(run: Run) -> dict[str, bool]:
    """``item id -> passed`` over the run's scored items (unscored items are absent)."""
    return {row.item_id: row.passed for row in run.items or () if row.item_id
            and row.passed is not None}


def _next(baseline: Baseline | None) -> tuple[str, str]:
    """(run id to read next, "") or ("", why the chain ends here)."""
    if baseline is None or not baseline.kind:
        return "", "no baseline run"
    if baseline.kind == "prod_window":
        return "", f"a production window ({baseline.range or '7d'})"
    run_id = baseline.run_id or baseline.value
    if baseline.kind != "preprod_run" or not run_id:
        return "", f"a {baseline.kind} baseline"
    return run_id, ""


def follow(client: NeensClient, candidate: Run, wanted: int, *,
           exclude: frozenset[str] = frozenset()) -> History:
    """Up to ``wanted`` runs back from ``candidate``'s resolved baseline (see module doc)."""
    history = History()
    version = candidate.dataset_version_id
    baseline = candidate.baseline
    seen = set(exclude) | {candidate.id}
    while len(history.runs) < wanted:
        run_id, why = _next(baseline)
        if not run_id:
            history.end = f"reached {why}"
            return history
        if run_id in seen:
            history.end = f"run {run_id} came round again"
            return history
        seen.add(run_id)
        try:
            run = client.get_run(run_id)
        except NeensApiError as exc:
            history.end = f"run {run_id} could not be read ({exc})"
            return history
        if version and run.dataset_version_id and run.dataset_version_id != version:
            history.end = f"run {run_id} is over another dataset version"
            return history
        history.runs.append(HistoryRun(run_id=run.id or run_id,
                                       version_label=run.version_label,
                                       pass_rate=run.aggregate.pass_rate))
        history.verdicts.append(verdicts_of(run))
        baseline = run.baseline
    return history
