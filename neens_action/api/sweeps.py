"""The server's answers about a model sweep, decoded once, at the client: the estimate, the
sweep (its arms and their child runs) and the sweep comparison (its verdict).

The conventions are those of :mod:`neens_action.api.answers` (tolerant; a missing or odd
field reads as the default named beside it; numbers through
:func:`~neens_action.api.values.number`; non-object entries of a list are dropped). Two
readings of text are used, chosen by how the field is shown:

* :func:`~neens_action.api.values.text` (the value as text when it is truthy, else ``""``)
  for names and messages;
* :func:`said` (the value as text, ``None`` when it is absent or null) where "not said" is
  shown differently from an empty value (a status printed as ``None``, a label shown blank).

``raw`` keeps the object exactly as the server sent it, for ``--json`` only.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from neens_action.api.values import Json, flag, number, obj, objs, text, whole


def said(value: Any) -> str | None:
    """The value as text; None when it is absent or null."""
    return None if value is None else str(value)


def _texts(value: Any) -> tuple[str, ...]:
    """Each entry of a list as text (``str``); () when it is not a list."""
    return tuple(str(v) for v in value) if isinstance(value, list) else ()


# ---------------------------------------------------------------- the estimate


@dataclass(frozen=True)
class EstimateArm:
    label: str | None = None
    model: str = ""
    runs: int | float | None = None
    calls: int | float | None = None
    usd: int | float | None = None  # None: the arm has no rate


@dataclass(frozen=True)
class Estimate:
    """The cost estimate (preview, or the one a created sweep carries)."""

    pass_k: int | float | None = None
    item_count: int | float | None = None
    total_runs: int | float | None = None
    total_calls: int | float | None = None
    total_usd: int | float | None = None
    per_arm: tuple[EstimateArm, ...] = ()
    partial: bool = False  # some arm has no rate: the total is a floor
    unpriced_models: tuple[str, ...] = ()
    unpriced_arms: tuple[str, ...] = ()
    basis: Json = field(default_factory=dict)  # shown as ``key=value``, in the server's order
    raw: Json = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def decode(cls, value: Any) -> Estimate:
        data = obj(value)
        return cls(
            pass_k=number(data.get("passK")), item_count=number(data.get("itemCount")),
            total_runs=number(data.get("totalRuns")), total_calls=number(data.get("totalCalls")),
            total_usd=number(data.get("totalUsd")),
            per_arm=tuple(EstimateArm(label=said(a.get("label")), model=text(a.get("model")),
                                      runs=number(a.get("runs")), calls=number(a.get("calls")),
                                      usd=number(a.get("usd")))
                          for a in objs(data.get("perArm"))),
            partial=bool(data.get("partial")), unpriced_models=_texts(data.get("unpricedModels")),
            unpriced_arms=_texts(data.get("unpricedArms")), basis=obj(data.get("basis")),
            raw=data)

    @classmethod
    def unwrap(cls, value: Any) -> tuple[Estimate | None, tuple[str, ...]]:
        """An estimate bare or as ``{"estimate": {...}, "refusals": [...]}``, and the
        refusals (None: the answer holds no estimate)."""
        if not isinstance(value, Mapping):
            return None, ()
        refusals = _texts(value.get("refusals"))
        if isinstance(value.get("estimate"), Mapping):
            return cls.decode(value["estimate"]), refusals
        if "perArm" in value or "totalRuns" in value:
            return cls.decode(value), refusals
        return None, refusals


# ---------------------------------------------------------------- the sweep and its arms


@dataclass(frozen=True)
class ArmRun:
    """One child run of an arm. ``status`` None: absent or null (still to be driven)."""

    run_id: str = ""
    status: str | None = None
    rep: int | None = None


@dataclass(frozen=True)
class SweepArm:
    label: str | None = None
    arm_id: str = ""
    model: str = ""
    status: str | None = None
    runner_mode: str | None = None
    k: int | float | None = None
    greens: int | float | None = None
    passed: bool | None = None
    runs_terminal: int | float | None = None
    runs_total: int | float | None = None
    error: str = ""
    runs: tuple[ArmRun, ...] = ()
    raw: Json = field(default_factory=dict, repr=False, compare=False)

    @property
    def name(self) -> str:
        """The label, else the arm id ("" when neither is said)."""
        return self.label or self.arm_id

    @classmethod
    def decode(cls, data: Json) -> SweepArm:
        return cls(
            label=said(data.get("label")), arm_id=text(data.get("armId")),
            model=text(data.get("model")), status=said(data.get("status")),
            runner_mode=said(data.get("runnerMode")), k=number(data.get("k")),
            greens=number(data.get("greens")), passed=flag(data.get("passed")),
            runs_terminal=number(data.get("runsTerminal")),
            runs_total=number(data.get("runsTotal")), error=text(data.get("error")),
            runs=tuple(ArmRun(text(r.get("runId")), said(r.get("status")), whole(r.get("rep")))
                       for r in objs(data.get("runs"))),
            raw=data)


@dataclass(frozen=True)
class Sweep:
    """The sweep (create, get or cancel answer)."""

    id: str = ""
    status: str | None = None
    void_reason: str = ""
    error: str = ""
    pass_k: int | float | None = None
    runner_mode: str | None = None
    version_label: str = ""
    arms: tuple[SweepArm, ...] = ()
    estimate: Estimate | None = None
    refusals: tuple[str, ...] = ()
    raw: Json = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def decode(cls, value: Any) -> Sweep:
        data = obj(value)
        estimate, refusals = Estimate.unwrap(data.get("estimate"))
        return cls(
            id=text(data.get("id")), status=said(data.get("status")),
            void_reason=text(data.get("voidReason")), error=text(data.get("error")),
            pass_k=number(data.get("passK")), runner_mode=said(data.get("runnerMode")),
            version_label=text(data.get("versionLabel")),
            arms=tuple(SweepArm.decode(a) for a in objs(data.get("arms"))),
            estimate=estimate, refusals=refusals, raw=data)

    def runs_progress(self) -> tuple[int, int]:
        """(child runs terminal, child runs in all), over every arm."""
        return (sum(int(a.runs_terminal or 0) for a in self.arms),
                sum(int(a.runs_total or 0) for a in self.arms))
