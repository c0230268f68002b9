"""From the spans and events of one item to its session: answer, model, tokens, latency,
steps and cost. What each value is read from is in ``trace_reading`` (one table of
conventions, ``docs/trace-conventions.md``); this module only combines them.

Events are span events and OTLP log records, each ``{spanId, timeNs, name, body,
attributes}``.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from neens_sandbox.calls import Facts, uncounted
from neens_sandbox.scoring import price
from neens_sandbox.trace_reading import (
    answer_of,
    event_answer,
    fallback_of,
    final_answer_of,
    model_of,
)

Span = dict[str, Any]


def _with_usage_below(spans: list[Span], facts: Facts) -> set[str]:
    """Ids of spans that have a descendant carrying token usage (their usage is an aggregate)."""
    parent = {s["spanId"]: s["parentSpanId"] for s in spans}
    marked: set[str] = set()
    for span in spans:
        if facts.usage(span) == (None, None):
            continue
        seen: set[str] = set()
        up = parent.get(span["spanId"], "")
        while up and up not in seen:
            seen.add(up)
            marked.add(up)
            up = parent.get(up, "")
    return marked


def _answer(spans: list[Span], events: Iterable[dict[str, Any]]) -> str | None:
    """Root answers, else an agent run's final answer, else the latest model-call or event
    answer, else ``output.value``."""
    ordered = sorted(spans, key=lambda s: (s["endNs"], s["startNs"]))
    roots = [s for s in ordered if not s["parentSpanId"]]
    for span in reversed(roots):
        text = answer_of(span["attributes"], root=True)
        if text is not None:
            return text
    # the run's final answer beats a model's intermediate text (a CodeAgent's code):
    # the root agent's, else the last final-answer tool's
    for span in [*reversed(roots), *reversed(ordered)]:
        text = final_answer_of(span["attributes"], root=not span["parentSpanId"])
        if text is not None:
            return text
    found: list[tuple[int, int, str]] = []  # (time, order, text)
    for n, span in enumerate(ordered):
        text = answer_of(span["attributes"], root=False)
        if text is not None:
            found.append((span["endNs"], n, text))
    for n, event in enumerate(events, start=len(ordered)):
        text = event_answer(event["name"], event["attributes"], event.get("body"))
        if text is not None:
            found.append((event["timeNs"], n, text))
    if found:
        return max(found)[2]
    for span in [*reversed(roots), *reversed(ordered)]:
        text = fallback_of(span["attributes"])
        if text is not None:
            return text
    return None


def session_from_spans(spans: list[Span], pricing: dict[str, dict[str, float]],
                       events: Iterable[dict[str, Any]] = ()) -> dict[str, Any]:
    """Summarise every span and event of one item into a session dict."""
    ordered = sorted(spans, key=lambda s: (s["endNs"], s["startNs"]))
    starts = [s["startNs"] for s in spans if s["startNs"]]
    ends = [s["endNs"] for s in spans if s["endNs"]]
    latency = (max(ends) - min(starts)) / 1e6 if starts and ends else None
    facts = Facts()
    skipped = uncounted(spans, facts)
    aggregates = _with_usage_below([s for s in spans if s["spanId"] not in skipped], facts)
    steps = 0
    in_tok = out_tok = 0
    any_usage = call_without_usage = unknown_model = False
    cost = 0.0
    models: list[str] = []
    unpriced: set[str] = set()
    for span in ordered:
        if span["spanId"] in skipped:
            continue
        kind = facts.kind(span)
        if kind is not None:
            steps += 1
        resp_model, req_model = model_of(span["attributes"])
        model = resp_model or req_model
        i, o = facts.usage(span)
        if span["spanId"] in aggregates:
            continue
        if model is None and i is None and o is None:
            continue
        if model and (kind == "llm" or i is not None or o is not None) and model not in models:
            models.append(model)
        if i is None and o is None:
            call_without_usage = call_without_usage or kind == "llm" or model is not None
            continue
        any_usage = True
        in_tok += int(i or 0)
        out_tok += int(o or 0)
        if not model:
            unknown_model = True
            continue
        usd = price(pricing, resp_model, i, o) if resp_model else None
        if usd is None and req_model:
            usd = price(pricing, req_model, i, o)
        if usd is None:
            unpriced.add(model)
        else:
            cost += usd
    priced = any_usage and not unpriced and not unknown_model and not call_without_usage
    service = next((s["resource"].get("service.name") for s in spans
                    if s["resource"].get("service.name")), None)
    return {
        "output": _answer(spans, events),
        "model": models[-1] if models else None,
        "models": models,
        "inputTokens": in_tok if any_usage else None,
        "outputTokens": out_tok if any_usage else None,
        "latencyMs": round(latency, 3) if latency is not None else None,
        "steps": steps,
        "costUsd": round(cost, 10) if priced else None,
        "unpricedModels": sorted(unpriced),
        "noUsage": not any_usage,
        "unknownModel": unknown_model or (any_usage and not models),
        "serviceName": service,
        "spanCount": len(spans),
    }
