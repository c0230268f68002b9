"""The scenario suite answer (create, get, regenerate), decoded once, at the client.

The conventions are those of :mod:`neens_action.api.answers`: tolerant, a missing or odd
field reads as the default named beside it, non-object entries of a list are dropped, and
``raw`` keeps the object exactly as the server sent it (``--json`` only).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from neens_action.api.sweeps import said
from neens_action.api.values import Json, obj, objs, only_text, text, whole


@dataclass(frozen=True)
class Scenario:
    """One scenario. ``id`` None: not said; ``input`` "" when absent or null."""

    id: str | None = None
    input: str = ""
    expected_output: str = ""
    strategy: str = ""
    failure_mode_id: str = ""
    failure_mode_name: str = ""

    @property
    def mode_label(self) -> str:
        """``name (id)``; the one that is said alone; ``unknown`` when neither is."""
        name, fid = self.failure_mode_name, self.failure_mode_id
        if name and fid and name != fid:
            return f"{name} ({fid})"
        return name or fid or "unknown"

    @classmethod
    def decode(cls, data: Json) -> Scenario:
        value = data.get("input")
        return cls(id=said(data.get("id")), input="" if value is None else str(value),
                   expected_output=text(data.get("expected_output")),
                   strategy=text(data.get("strategy")),
                   failure_mode_id=text(data.get("failure_mode_id")).strip(),
                   failure_mode_name=text(data.get("failure_mode_name")).strip())


@dataclass(frozen=True)
class SkippedStrategy:
    """A strategy the server skipped (``strategy``/``reason`` None: not said)."""

    strategy: str | None = None
    failure_mode_id: str = ""
    reason: str | None = None

    def line(self) -> str:
        where = f" for {self.failure_mode_id}" if self.failure_mode_id else ""
        return f"strategy {self.strategy} skipped{where}: {self.reason}"


@dataclass(frozen=True)
class Suite:
    """A scenario suite. ``id`` "" unless the server sent a string; ``scenario_count``
    None: not said (the scenarios are then counted)."""

    id: str = ""
    name: str = ""
    status: str = ""
    error: str = ""
    scenario_count: int | None = None
    progress_done: int | None = None
    progress_total: int | None = None
    dataset_version_id: str = ""
    failure_mode_ids: tuple[str, ...] = ()
    scenarios: tuple[Scenario, ...] = ()
    skipped: tuple[SkippedStrategy, ...] = ()
    raw: Json = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def decode(cls, value: Any) -> Suite:
        data = obj(value)
        progress, ids = obj(data.get("progress")), data.get("failureModeIds")
        return cls(
            id=only_text(data.get("id")), name=text(data.get("name")),
            status=text(data.get("status")), error=text(data.get("error")),
            scenario_count=whole(data.get("scenarioCount")),
            progress_done=whole(progress.get("done")),
            progress_total=whole(progress.get("total")),
            dataset_version_id=text(data.get("datasetVersionId")),
            failure_mode_ids=tuple(str(i) for i in ids) if isinstance(ids, list) else (),
            scenarios=tuple(Scenario.decode(s) for s in objs(data.get("scenarios"))),
            skipped=tuple(SkippedStrategy(said(r.get("strategy")),
                                          text(r.get("failure_mode_id")), said(r.get("reason")))
                          for r in objs(data.get("skippedStrategies"))),
            raw=data)
