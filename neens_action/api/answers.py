"""The server's answers about a pre-prod run, decoded once, at the client, into frozen objects.

The run (create answer and terminal run), its item rows, the gate, the comparison and the
metrics rollup. Decoding is tolerant: a missing field, or one of the wrong JSON type, reads as
the default named beside it (``None``: not known; ``""``; ``()``; ``False``), never as a crash.
Numbers go through :func:`neens_action.api.values.number` (booleans and NaN are not numbers);
a text field is the value as text when it is truthy, else ``""``. ``raw`` keeps the object
exactly as the server sent it, for the one place that must pass it on unchanged (``--json``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from neens_action.api.values import Json, flag, number, obj, objs, only_text, text, whole


@dataclass(frozen=True)
class Resolution:
    """How the server resolved the requested baseline (``baselineResolution``)."""

    requested: str = ""
    resolved: str = ""
    resolved_run_id: str = ""
    detail: str = ""

    @classmethod
    def decode(cls, value: Any) -> Resolution | None:
        data = obj(value)
        if not data:
            return None
        return cls(requested=text(data.get("requested")), resolved=text(data.get("resolved")),
                   resolved_run_id=text(data.get("resolvedRunId")),
                   detail=text(data.get("detail")))


@dataclass(frozen=True)
class Baseline:
    """A baseline block (gate, comparison or run). ``compared`` None: not said (or not a
    boolean: ``compared_said`` tells it was there)."""

    kind: str = ""
    run_id: str = ""
    value: str = ""
    range: str = ""
    compared: bool | None = None
    compared_said: bool = False
    matched_items: int | float | None = None
    total_items: int | float | None = None
    pass_rate: int | float | None = None
    resolution: Resolution | None = None

    @classmethod
    def decode(cls, value: Any) -> Baseline | None:
        """None when the block is absent, empty or not an object."""
        data = obj(value)
        if not data:
            return None
        return cls(kind=text(data.get("kind")), run_id=text(data.get("runId")),
                   value=text(data.get("value")), range=text(data.get("range")),
                   compared=flag(data.get("compared")), compared_said="compared" in data,
                   matched_items=number(data.get("matchedItems")),
                   total_items=number(data.get("totalItems")),
                   pass_rate=number(data.get("passRate")),
                   resolution=Resolution.decode(data.get("resolution")))


def describe_baseline(baseline: Baseline | None, resolution: Resolution | None = None) -> str:
    """How a baseline reads after ``Baseline:`` in a log line or a report."""
    if baseline is None:
        out = "server default"
    elif baseline.kind == "preprod_run":
        out = f"run {baseline.run_id or baseline.value or '?'}"
    elif baseline.kind == "prod_window":
        out = f"production window ({baseline.range or '7d'})"
    elif baseline.kind == "branch":
        out = f"branch {baseline.value or '?'}"
    else:
        out = baseline.kind or "server default"
    if resolution is not None:
        requested = resolution.requested
        fell_back = (not (resolution.resolved_run_id or resolution.resolved)) or (
            resolution.resolved == "prod_window" and not requested.startswith("prod"))
        if requested:
            out += (f" — {requested}{' fell back' if fell_back else ''}: "
                    f"{resolution.detail}").rstrip(": ")
        elif resolution.detail:
            out += f" — {resolution.detail}"
    return out


@dataclass(frozen=True)
class GateRow:
    """One eval gate's result (the gate answer's ``gates`` list)."""

    name: str = "?"
    verdict: str = ""
    guardrail_outcome: str = ""
    enforced: bool = True  # absent => enforced; any falsy value => not
    enforced_false: bool = False  # ``enforced`` is literally false
    threshold: int | float | None = None
    pass_rate: int | float | None = None
    n_scored: int | float | None = None
    n_items: int | float | None = None
    passed: bool | None = None

    @classmethod
    def decode(cls, data: Json) -> GateRow:
        return cls(name=text(data.get("name") or data.get("gateId")) or "?",
                   verdict=text(data.get("verdict")).strip(),
                   guardrail_outcome=text(data.get("guardrailOutcome")),
                   enforced=bool(data.get("enforced", True)),
                   enforced_false=data.get("enforced") is False,
                   threshold=number(data.get("threshold", data.get("passThreshold"))),
                   pass_rate=number(data.get("passRate")), n_scored=number(data.get("nScored")),
                   n_items=number(data.get("nItems")), passed=flag(data.get("passed")))


@dataclass(frozen=True)
class Gate:
    """The gate answer. ``regressions_null``: the server said ``regressions: null`` (nothing
    was compared); ``limits``: the names of the thresholds the gate applied."""

    passed: bool | None = None
    pass_rate: int | float | None = None
    regressions: int | float | None = None
    regressions_null: bool = False
    reasons: tuple[str, ...] = ()
    guardrail_warnings: bool = False
    limits: frozenset[str] = frozenset()
    gates: tuple[GateRow, ...] = ()
    baseline: Baseline | None = None
    raw: Json = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def decode(cls, value: Any) -> Gate:
        data = obj(value)
        reasons = data.get("reasons")
        return cls(passed=flag(data.get("passed")), pass_rate=number(data.get("passRate")),
                   regressions=number(data.get("regressions")),
                   regressions_null="regressions" in data and data["regressions"] is None,
                   reasons=tuple(str(r) for r in reasons if r is not None)
                   if isinstance(reasons, list) else (),
                   guardrail_warnings=bool(data.get("guardrailWarnings")),
                   limits=frozenset(str(k) for k in obj(data.get("gate"))),
                   gates=tuple(GateRow.decode(r) for r in objs(data.get("gates"))),
                   baseline=Baseline.decode(data.get("baseline")), raw=data)


@dataclass(frozen=True, slots=True)
class Judge:
    """One judge's score on an item. ``passed`` only when the server said so."""

    name: str
    score: int | float | None
    passed: bool | None = None


def _judges(value: Any) -> tuple[Judge, ...]:
    if isinstance(value, Mapping):
        return tuple(Judge(str(name), number(v)) for name, v in value.items())
    return tuple(Judge(text(s.get("name") or s.get("metric")) or "?", number(s.get("score")),
                       flag(s.get("passed"))) for s in objs(value))


@dataclass(frozen=True, slots=True)  # one per item: 10,000 rows must stay cheap
class ItemRow:
    """One item row of a run (its id, the agent's answer and the judges' verdict).

    ``item_id``: the first truthy of ``datasetVersionItemId``, ``item_id``, ``itemId``, ``id``
    ("" without one); ``passed`` None: not scored."""

    item_id: str = ""
    passed: bool | None = None
    captured_said: bool | None = None  # ``captured`` as the server said it
    input: str = ""
    output: str = ""
    expected: str = ""
    error: str = ""
    reason: str = ""
    reasons: tuple[str, ...] = ()
    score: int | float | None = None
    gate_name: str = ""
    judges: tuple[Judge, ...] = ()
    traced_data: bool = False  # an output, a latency or scores: the trace reached the server
    answer_missing: bool = False  # ``output`` present but null or "": no answer text traced

    @classmethod
    def decode(cls, data: Json) -> ItemRow:
        reasons = data.get("reasons")
        return cls(
            item_id=text(data.get("datasetVersionItemId") or data.get("item_id")
                         or data.get("itemId") or data.get("id")),
            passed=flag(data.get("passed")), captured_said=flag(data.get("captured")),
            input=text(data.get("input")), output=only_text(data.get("output")),
            expected=only_text(data.get("expectedOutput", data.get("expected_output"))),
            error=text(data.get("error")), reason=only_text(data.get("reason")),
            reasons=tuple(str(r) for r in reasons if r) if isinstance(reasons, list) else (),
            score=number(data.get("score", data.get("avgScore"))),
            gate_name=text(data.get("gateName") or data.get("gateId")),
            judges=_judges(data.get("scores")),
            traced_data=any(_present(data.get(k)) for k in ("output", "latencyMs", "scores")),
            answer_missing="output" in data and data["output"] in (None, ""))

    @property
    def key(self) -> str:
        return self.item_id or "?"

    @property
    def captured(self) -> bool:
        """Whether the server holds a trace for this item (``captured`` when it says so;
        else a verdict, an output, a latency or scores imply one)."""
        if self.captured_said is not None:
            return self.captured_said
        return self.passed is not None or self.traced_data


def _present(value: Any) -> bool:
    return value is not None and value != {} and value != [] and value != ""


def item_row(value: Any) -> ItemRow | None:
    """A row of an item list as it streams in (a stream element function); None (dropped)
    for an entry that is not an object."""
    return ItemRow.decode(value) if isinstance(value, Mapping) else None


def item_rows(value: Any) -> tuple[ItemRow, ...] | None:
    """The rows of an ``items`` list (non-objects dropped); None when it is not a list."""
    if not isinstance(value, list):
        return None
    return tuple(ItemRow.decode(r) for r in objs(value))


@dataclass(frozen=True)
class Aggregate:
    """The run's ``aggregate`` block."""

    pass_rate: int | float | None = None
    avg_score: int | float | None = None
    regressions: int | float | None = None
    passed: int | float | None = None
    failed: int | float | None = None
    errored: int | float | None = None
    baseline_compared: bool | None = None

    @classmethod
    def decode(cls, value: Any) -> Aggregate:
        data = obj(value)
        return cls(pass_rate=number(data.get("passRate")), avg_score=number(data.get("avgScore")),
                   regressions=number(data.get("regressions")), passed=number(data.get("passed")),
                   failed=number(data.get("failed")), errored=number(data.get("errored")),
                   baseline_compared=flag(data.get("baselineCompared")))


@dataclass(frozen=True)
class GateDrift:
    """One drift item between the policy's declared gates and the project's."""

    gate_id: str = "?"
    kind: Any = None  # shown as is (a rule result's observed value)
    message: str = ""

    @classmethod
    def decode(cls, data: Json) -> GateDrift:
        message = data.get("message")
        return cls(gate_id=text(data.get("gateId")) or "?", kind=data.get("kind"),
                   message=message if isinstance(message, str) and message.strip() else "")


@dataclass(frozen=True)
class Run:
    """A pre-prod run (create answer, poll answer or terminal run). ``items`` None: the
    answer carried no item list; ``gates`` None: it said nothing about eval gates."""

    id: str = ""
    status: str = ""
    completed: int = 0
    completed_said: bool = False  # ``completed`` was a whole number
    total: int = 0
    total_said: bool = False  # ``total`` was a whole number
    items: tuple[ItemRow, ...] | None = None
    aggregate: Aggregate = field(default_factory=Aggregate)
    regressions: int | float | None = None
    dataset_id: str = ""
    dataset_version_id: str = ""
    version_label: str = ""
    version_label_said: bool = False
    git_sha: str = ""
    branch: str = ""  # the branch the run was made on ("" when not said)
    gates: tuple[str, ...] | None = None  # the enforced gates' names
    gates_policy_said: bool = False
    gate_drift: tuple[GateDrift, ...] = ()
    baseline: Baseline | None = None
    baseline_resolution: Resolution | None = None
    label_mismatch: bool = False
    runner_mode: str = ""
    error: str = ""  # ``error`` (else ``detail``) when it is text
    legacy_seen: bool = False
    legacy_attrs: tuple[str, ...] = ()
    empty: bool = True  # the answer was no object, or an empty one
    raw: Json = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def decode(cls, value: Any, *, items: bool = True) -> Run:
        """``items=False``: the item list is not decoded (nor kept in ``raw``)."""
        data = obj(value)
        if not items and "items" in data:
            data = {k: v for k, v in data.items() if k != "items"}
        gates = data.get("gates")
        attrs = data.get("legacyCorrelationAttrs")
        error = data.get("error") or data.get("detail")
        return cls(
            id=only_text(data.get("id")), status=text(data.get("status")),
            completed=whole(data.get("completed")) or 0, total=whole(data.get("total")) or 0,
            completed_said=whole(data.get("completed")) is not None,
            total_said=whole(data.get("total")) is not None,
            items=item_rows(data.get("items")), aggregate=Aggregate.decode(data.get("aggregate")),
            regressions=number(data.get("regressions")), dataset_id=text(data.get("datasetId")),
            dataset_version_id=text(data.get("datasetVersionId")),
            version_label=text(data.get("versionLabel")),
            version_label_said="versionLabel" in data, git_sha=text(data.get("gitSha")),
            branch=text(data.get("branch")),
            gates=None if "gates" not in data else tuple(
                text(r.get("name") or r.get("gateId")) or "?" for r in objs(gates)),
            gates_policy_said="gatesPolicy" in data,
            gate_drift=tuple(GateDrift.decode(d) for d in objs(data.get("gateDrift"))),
            baseline=Baseline.decode(data.get("baseline")),
            baseline_resolution=Resolution.decode(data.get("baselineResolution")),
            label_mismatch=bool(data.get("labelMismatch")),
            runner_mode=text(data.get("runnerMode")),
            error=error if isinstance(error, str) else "",
            legacy_seen=bool(data.get("legacyCorrelationSeenAt")),
            legacy_attrs=tuple(str(a) for a in attrs) if isinstance(attrs, list) else (),
            empty=not data, raw=data)

    @property
    def terminal(self) -> bool:
        return self.status in TERMINAL_RUN

    def carrying(self, earlier: Run) -> Run:
        """This run, with the eval-gate fields (``gatesPolicy``, ``gateDrift``, ``gates``)
        of an earlier answer about it where this one lacks them (the later copy wins)."""
        missing = {k: earlier.raw[k] for k in ("gatesPolicy", "gateDrift", "gates")
                   if k not in self.raw and k in earlier.raw}
        if not missing:
            return self
        return Run.decode({**self.raw, **missing}, items=self.items is not None)


TERMINAL_RUN = frozenset({"completed", "completed_with_regressions", "failed", "cancelled"})
