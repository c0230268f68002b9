"""The comparison and metrics answers of a pre-prod run, decoded once, at the client (the
conventions are those of :mod:`neens_action.api.answers`)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from neens_action.api.answers import Baseline, ItemRow
from neens_action.api.values import Json, number, obj, objs, text, whole


@dataclass(frozen=True)
class Traits:
    """One side's traits in the comparison. ``n_said``: the side carried an ``n``."""

    n: int | float | None = None
    n_said: bool = False
    avg_cost: int | float | None = None
    avg_cost_null: bool = True  # ``avg_cost`` absent or null (an unpriced side)
    avg_latency: int | float | None = None
    avg_steps: int | float | None = None
    unpriced_models: tuple[str, ...] = ()

    @classmethod
    def decode(cls, value: Any) -> Traits | None:
        if not isinstance(value, Mapping):
            return None
        models = value.get("unpricedModels")
        return cls(n=number(value.get("n")), n_said="n" in value,
                   avg_cost=number(value.get("avg_cost")),
                   avg_cost_null=value.get("avg_cost") is None,
                   avg_latency=number(value.get("avg_latency")),
                   avg_steps=number(value.get("avg_steps")),
                   unpriced_models=tuple(str(m) for m in models)
                   if isinstance(models, list) else ())

    def average(self, trait: str) -> int | float | None:
        """``avg_cost`` / ``avg_latency`` / ``avg_steps`` by name."""
        return {"avg_cost": self.avg_cost, "avg_latency": self.avg_latency,
                "avg_steps": self.avg_steps}.get(trait)


@dataclass(frozen=True)
class Delta:
    before: int | float | None = None
    delta: int | float | None = None


@dataclass(frozen=True)
class Regression:
    """One regressed item of the comparison (a bare id in the list has no ``before``)."""

    item_id: str
    before: str = ""
    before_score: int | float | None = None


@dataclass(frozen=True)
class Comparison:
    """The comparison answer. ``regressions`` None: the answer carried no list."""

    regressions: tuple[Regression, ...] | None = None
    baseline: Baseline | None = None
    matrix: Mapping[str, int] = field(default_factory=dict)
    matrix_said: bool = False  # the answer carried a non-empty ``matrix`` object
    candidate_traits: Traits | None = None
    baseline_traits: Traits | None = None
    deltas: Mapping[str, Delta] = field(default_factory=dict)
    candidate_pass_rate: int | float | None = None
    new_passes: tuple[str, ...] | None = None  # items the baseline failed and that pass now
    raw: Json = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def decode(cls, value: Any) -> Comparison:
        data = obj(value)
        listed = data.get("regressions")
        regressions = None
        if isinstance(listed, list):
            regressions = tuple(
                Regression(str(r)) if isinstance(r, str) else
                Regression(ItemRow.decode(r).key, text(r.get("before")),
                           number(r.get("beforeScore", r.get("baselineScore"))))
                for r in listed if isinstance(r, (str, Mapping)))
        traits = obj(data.get("traits"))
        listed = data.get("newPasses")
        new_passes = tuple(
            str(p) if isinstance(p, str) else ItemRow.decode(p).key
            for p in listed if isinstance(p, (str, Mapping))) if isinstance(listed, list) else None
        return cls(
            regressions=regressions, baseline=Baseline.decode(data.get("baseline")),
            matrix={str(k): v for k, v in obj(data.get("matrix")).items()
                    if whole(v) is not None},
            matrix_said=bool(obj(data.get("matrix"))),
            candidate_traits=Traits.decode(traits.get("candidate")),
            baseline_traits=Traits.decode(traits.get("baseline")),
            deltas={str(k): Delta(number(obj(v).get("before")), number(obj(v).get("delta")))
                    for k, v in obj(data.get("deltas")).items()},
            candidate_pass_rate=number(obj(data.get("candidate")).get("passRate")),
            new_passes=new_passes, raw=data)

    def traits(self, side: str) -> Traits | None:
        return self.candidate_traits if side == "candidate" else self.baseline_traits


@dataclass(frozen=True)
class Metrics:
    """The metrics rollup: the mean score and the pass rate per metric key (the first row
    of a key wins)."""

    averages: Mapping[str, int | float | None] = field(default_factory=dict)
    pass_rates: Mapping[str, int | float | None] = field(default_factory=dict)
    raw: Json = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def decode(cls, value: Any) -> Metrics:
        data = obj(value)
        averages: dict[str, int | float | None] = {}
        rates: dict[str, int | float | None] = {}
        for row in objs(data.get("metrics")):
            key = row.get("metricKey")
            if isinstance(key, str) and key not in averages:
                averages[key] = number(row.get("avgScore"))
                rates[key] = number(row.get("passRate"))
        return cls(averages=averages, pass_rates=rates, raw=data)
