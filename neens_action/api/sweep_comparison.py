"""The sweep comparison answer (per-arm quality, pass^k, cost, the server's verdict), decoded
once, at the client (the conventions are those of :mod:`neens_action.api.sweeps`)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from neens_action.api.sweeps import said
from neens_action.api.values import Json, flag, number, obj, objs, text


@dataclass(frozen=True)
class ArmRef:
    """An arm as a verdict or the baseline names it. None: not said."""

    label: str | None = None
    arm_id: str | None = None

    @property
    def name(self) -> str:
        return text(self.label) or text(self.arm_id)

    @classmethod
    def decode(cls, data: Json) -> ArmRef:
        return cls(said(data.get("label")), said(data.get("armId")))


@dataclass(frozen=True)
class Quality:
    rate: int | float | None = None
    n: int | float | None = None
    ci_low: int | float | None = None
    ci_high: int | float | None = None


@dataclass(frozen=True)
class PassK:
    greens: int | float | None = None
    k: int | float | None = None
    passed: bool | None = None


@dataclass(frozen=True)
class Cost:
    per_case_usd: int | float | None = None
    priced: bool | None = None  # False: the arm has no rate (never $0)
    partial: bool = False


@dataclass(frozen=True)
class ComparedArm:
    ref: ArmRef = field(default_factory=ArmRef)
    model: str = ""
    quality: Quality = field(default_factory=Quality)
    pass_k: PassK = field(default_factory=PassK)
    cost: Cost = field(default_factory=Cost)
    regressions: int | float | None = None  # a bare count or ``{"count": n}``
    distinguishable: bool | None = None  # from the baseline

    @property
    def name(self) -> str:
        return self.ref.name

    @classmethod
    def decode(cls, data: Json) -> ComparedArm:
        quality, pass_k, cost = (obj(data.get(k)) for k in ("quality", "passK", "cost"))
        regressions = data.get("regressions")
        if isinstance(regressions, Mapping):
            regressions = regressions.get("count")
        return cls(
            ref=ArmRef.decode(data), model=text(data.get("model")),
            quality=Quality(number(quality.get("rate")), number(quality.get("n")),
                            number(quality.get("ciLow")), number(quality.get("ciHigh"))),
            pass_k=PassK(number(pass_k.get("greens")), number(pass_k.get("k")),
                         flag(pass_k.get("passed"))),
            cost=Cost(number(cost.get("costPerCaseUsd")), flag(cost.get("priced")),
                      bool(cost.get("partial"))),
            regressions=number(regressions),
            distinguishable=flag(data.get("distinguishableFromBaseline")))


@dataclass(frozen=True)
class Excluded:
    """An arm left out of the cost ranking and why (``reason_code`` None: not said)."""

    name: str = ""
    reason_code: str | None = None


@dataclass(frozen=True)
class SweepVerdict:
    """The server's verdict. ``winner``: the winner's name ("" unless the outcome is
    ``winner``; a winner named only by id is looked up among the arms)."""

    outcome: str | None = None
    reason: str | None = None
    winner: str = ""
    excluded: tuple[Excluded, ...] = ()
    tied_with: tuple[str, ...] = ()

    @property
    def has_winner(self) -> bool:
        return self.outcome == "winner"

    @classmethod
    def decode(cls, value: Any, arms: tuple[Json, ...]) -> SweepVerdict:
        data = obj(value)
        tied = data.get("tiedWith")
        return cls(
            outcome=said(data.get("outcome")), reason=said(data.get("reason")),
            winner=_winner(data, arms) if data.get("outcome") == "winner" else "",
            excluded=tuple(Excluded(ArmRef.decode(e).name, said(e.get("reasonCode")))
                           for e in objs(data.get("excluded"))),
            tied_with=tuple(text(said(t.get("label"))) if isinstance(t, Mapping) else
                            text(said(t)) for t in tied) if isinstance(tied, list) else ())


def _winner(verdict: Json, arms: tuple[Json, ...]) -> str:
    winner = verdict.get("winner")
    if isinstance(winner, Mapping):
        return ArmRef.decode(winner).name
    if isinstance(winner, str):
        return winner
    arm_id = verdict.get("winnerArmId")
    for arm in arms:
        if arm_id is not None and arm.get("armId") == arm_id:
            return ArmRef.decode(arm).name or str(arm_id)
    return ""


@dataclass(frozen=True)
class SweepWarning:
    """A server warning: a plain text (``plain`` not None) or a coded one."""

    plain: str | None = None
    code: str = ""
    message: str = ""
    arms: tuple[str, ...] = ()

    @classmethod
    def decode(cls, value: Any) -> SweepWarning:
        if not isinstance(value, Mapping):
            return cls(plain=text(said(value)))
        arms = value.get("arms") or []
        return cls(code=text(said(value.get("code"))), message=text(said(value.get("message"))),
                   arms=tuple(ArmRef.decode(a).name if isinstance(a, Mapping) else text(said(a))
                              for a in arms) if isinstance(arms, list) else ())


@dataclass(frozen=True)
class Pricing:
    unpriced_models: tuple[str, ...] = ()
    no_usage_cases: int | float | None = None
    unknown_model_cases: int | float | None = None


@dataclass(frozen=True)
class SweepComparison:
    """The sweep comparison. ``void``: refused (``status`` void or ``comparable`` false)."""

    sweep_id: str = ""
    status: str | None = None
    void: bool = False
    void_reason: str = ""
    bar: int | float | None = None  # the pass-rate bar
    bar_source: str = ""
    baseline: ArmRef = field(default_factory=ArmRef)
    item_count: int | float | None = None
    pass_k: int | float | None = None
    arms: tuple[ComparedArm, ...] = ()
    agents: tuple[AgentVerdict, ...] = ()
    warnings: tuple[SweepWarning, ...] = ()
    pricing: Pricing = field(default_factory=Pricing)
    verdict: SweepVerdict = field(default_factory=SweepVerdict)
    raw: Json = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def decode(cls, value: Any) -> SweepComparison:
        data = obj(value)
        arms, bar, pricing = objs(data.get("arms")), obj(data.get("bar")), obj(data.get("pricing"))
        models = pricing.get("unpricedModels") or []
        warnings = data.get("warnings") or []
        return cls(
            sweep_id=text(data.get("sweepId")), status=said(data.get("status")),
            void=data.get("status") == "void" or data.get("comparable") is False,
            void_reason=text(data.get("voidReason")),
            bar=number(bar.get("passRate")), bar_source=text(bar.get("source")),
            baseline=ArmRef.decode(obj(data.get("baseline"))),
            item_count=number(data.get("itemCount")), pass_k=number(data.get("passK")),
            arms=tuple(ComparedArm.decode(a) for a in arms),
            agents=tuple(AgentVerdict.decode(a) for a in objs(data.get("agents"))),
            warnings=tuple(SweepWarning.decode(w) for w in warnings)
            if isinstance(warnings, list) else (),
            pricing=Pricing(tuple(text(said(m)) for m in models)
                            if isinstance(models, list) else (),
                            number(pricing.get("noUsageCases")),
                            number(pricing.get("unknownModelCases"))),
            verdict=SweepVerdict.decode(data.get("verdict"), arms), raw=data)

    def for_sweep(self, sweep_id: str) -> SweepComparison:
        """The answer with ``sweepId`` set when the server left it out (it is then also
        added to ``raw``, so ``--json`` carries it)."""
        if "sweepId" in self.raw:
            return self
        return replace(self, sweep_id=text(sweep_id), raw={**self.raw, "sweepId": sweep_id})


@dataclass(frozen=True)
class AgentVerdict:
    """One agent's row (``agent`` None: unattributed)."""

    agent: str | None = None
    item_count: int | float | None = None
    reason: str | None = None

    @classmethod
    def decode(cls, data: Json) -> AgentVerdict:
        return cls(said(data.get("agent")), number(data.get("itemCount")),
                   said(obj(data.get("verdict")).get("reason")))
