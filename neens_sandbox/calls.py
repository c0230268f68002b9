"""Which spans of one item are *not* counted as model calls although they look like one.

Two cases, both read from the spans alone (``docs/trace-conventions.md``, "Combining rules"):

* **one call, two instrumentations**: the model client traces its own call and an
  instrumentation of that client traces it again (the Anthropic SDK's own
  ``anthropic.messages.create`` beside OpenLLMetry's ``anthropic.chat``). Two spans are one
  call when both are model calls, come from different instrumentation scopes, overlap in
  time, are siblings (or parent and child), and state the same model and the same token
  usage (an agent span's total is never one of them). The one that
  carries an answer is kept (else the one that started first); the other is not counted.
* **a hollow model span**: a span marked as a model call that has neither an answer nor
  usage, beside (under the same parent as) a model call that has either (LlamaIndex's
  ``_prepare_chat_with_tools``, which only builds the request: its ``output.value`` is the
  request, not an answer). It is not a step, and it does not make the item's cost unknown.

A model call without usage or answer that has no such sibling is still counted (and still
makes the cost unknown): only a span that another one explains away is dropped.
"""

from __future__ import annotations

from typing import Any

from neens_sandbox.trace_reading import answer_of, model_of, span_kind, usage_of

Span = dict[str, Any]


class Facts:
    """What the combining rules ask of each span (its kind, its usage, whether it states an
    answer), worked out once per span: ``_hollow`` asks again for every sibling."""

    def __init__(self) -> None:
        self._kind: dict[int, str | None] = {}
        self._usage: dict[int, tuple[float | None, float | None]] = {}
        self._answer: dict[int, bool] = {}

    def kind(self, span: Span) -> str | None:
        key = id(span)
        if key not in self._kind:
            self._kind[key] = span_kind(span["attributes"])
        return self._kind[key]

    def usage(self, span: Span) -> tuple[float | None, float | None]:
        key = id(span)
        if key not in self._usage:
            self._usage[key] = usage_of(span["attributes"])
        return self._usage[key]

    def has_answer(self, span: Span) -> bool:
        key = id(span)
        if key not in self._answer:
            self._answer[key] = answer_of(span["attributes"], root=False) is not None
        return self._answer[key]


def _overlap(a: Span, b: Span) -> bool:
    return a["startNs"] <= b["endNs"] and b["startNs"] <= a["endNs"]


def _related(a: Span, b: Span) -> bool:
    """Siblings, or parent and child."""
    return (a["parentSpanId"] == b["parentSpanId"] or a["parentSpanId"] == b["spanId"]
            or b["parentSpanId"] == a["spanId"])


def _same_call(a: Span, b: Span, facts: Facts) -> bool:
    scope_a, scope_b = a.get("scope") or "", b.get("scope") or ""
    if not scope_a or not scope_b or scope_a == scope_b:
        return False
    usage = facts.usage(a)
    if usage == (None, None) or usage != facts.usage(b):
        return False
    models_a = {m for m in model_of(a["attributes"]) if m}
    models_b = {m for m in model_of(b["attributes"]) if m}
    return bool(models_a & models_b) and _overlap(a, b) and _related(a, b)


def _duplicates(spans: list[Span], facts: Facts) -> set[str]:
    calls = sorted((s for s in spans if facts.kind(s) == "llm"
                    and facts.usage(s) != (None, None)),
                   key=lambda s: (s["startNs"], s["spanId"]))
    dropped: set[str] = set()
    for n, a in enumerate(calls):
        if a["spanId"] in dropped:
            continue
        for b in calls[n + 1:]:
            if b["spanId"] in dropped or not _same_call(a, b, facts):
                continue
            if facts.has_answer(b) and not facts.has_answer(a):
                dropped.add(a["spanId"])
                break
            dropped.add(b["spanId"])
    return dropped


def _hollow(spans: list[Span], dropped: set[str], facts: Facts) -> set[str]:
    def real(span: Span) -> bool:
        return span["spanId"] not in dropped and facts.kind(span) == "llm" and (
            facts.usage(span) != (None, None) or facts.has_answer(span))

    hollow: set[str] = set()
    for span in spans:
        if facts.kind(span) != "llm" or facts.usage(span) != (None, None):
            continue
        if facts.has_answer(span):
            continue
        if any(r["parentSpanId"] == span["parentSpanId"] and real(r) for r in spans):
            hollow.add(span["spanId"])
    return hollow


def uncounted(spans: list[Span], facts: Facts | None = None) -> set[str]:
    """Ids of spans that describe a model call counted elsewhere, or no call at all."""
    facts = facts or Facts()
    dropped = _duplicates(spans, facts)
    return dropped | _hollow(spans, dropped, facts)
