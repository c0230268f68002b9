"""From captured spans (or a push reply) to a session, and from a session to item scores.

* :func:`session_from_spans` — output text, model, tokens, latency, steps, cost of one item;
* :func:`price` / :func:`load_pricing` — USD from the seeded per-million-token rates
  (a model without a rate, a session without usage or without a model is *unpriced*:
  ``costUsd`` is null, never 0);
* :func:`score_session` — run the item's judges; an item passes when the mean of its judge
  scores is at least :data:`PASS_MARK`.
"""

from __future__ import annotations

import json
from typing import Any

from neens_sandbox.db import Database, loads
from neens_sandbox.judges import run_judge

PASS_MARK = 0.7
OUTPUT_KEYS = ("gen_ai.output.messages", "gen_ai.completion", "output.value", "neens.output")


def load_pricing(db: Database) -> dict[str, dict[str, float]]:
    return {r["model"]: {"input": r["input"], "output": r["output"]}
            for r in db.all("SELECT * FROM pricing")}


def price(pricing: dict[str, dict[str, float]], model: str | None, input_tokens: Any,
          output_tokens: Any) -> float | None:
    """USD for one call, or None when it cannot be priced."""
    if not model or model not in pricing:
        return None
    if not isinstance(input_tokens, (int, float)) and not isinstance(output_tokens, (int, float)):
        return None
    rate = pricing[model]
    return ((input_tokens or 0) * rate["input"] + (output_tokens or 0) * rate["output"]) / 1e6


def _messages_text(value: Any) -> str | None:
    """Text of ``gen_ai.output.messages`` (a JSON list of messages with parts or content)."""
    data = value
    if isinstance(value, str):
        try:
            data = json.loads(value)
        except ValueError:
            return value
    if isinstance(data, dict):
        data = [data]
    if not isinstance(data, list):
        return None
    texts: list[str] = []
    for msg in data:
        if isinstance(msg, str):
            texts.append(msg)
            continue
        if not isinstance(msg, dict):
            continue
        if isinstance(msg.get("content"), str):
            texts.append(msg["content"])
        for part in msg.get("parts") or []:
            if isinstance(part, dict) and isinstance(part.get("content"), str):
                texts.append(part["content"])
            elif isinstance(part, dict) and isinstance(part.get("text"), str):
                texts.append(part["text"])
    return "\n".join(texts) if texts else None


def output_of(attrs: dict[str, Any]) -> str | None:
    """The output text recorded on one span, from the usual GenAI attributes."""
    if "gen_ai.output.messages" in attrs:
        text = _messages_text(attrs["gen_ai.output.messages"])
        if text is not None:
            return text
    completion = [k for k in attrs if k.startswith("gen_ai.completion")]
    if completion:
        preferred = sorted(completion, key=lambda k: (not k.endswith(".content"), k))
        value = attrs[preferred[0]]
        return value if isinstance(value, str) else json.dumps(value)
    for key in ("output.value", "neens.output"):
        if key in attrs:
            value = attrs[key]
            return value if isinstance(value, str) else json.dumps(value)
    return None


def _num(value: Any) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return value
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


def session_from_spans(spans: list[dict[str, Any]],
                       pricing: dict[str, dict[str, float]]) -> dict[str, Any]:
    """Summarise every span of one item into a session dict (see module doc)."""
    ordered = sorted(spans, key=lambda s: (s["endNs"], s["startNs"]))
    roots = [s for s in ordered if not s["parentSpanId"]]
    output = None
    for span in reversed(roots):
        output = output_of(span["attributes"])
        if output is not None:
            break
    if output is None:
        for span in reversed(ordered):
            output = output_of(span["attributes"])
            if output is not None:
                break
    starts = [s["startNs"] for s in spans if s["startNs"]]
    ends = [s["endNs"] for s in spans if s["endNs"]]
    latency = (max(ends) - min(starts)) / 1e6 if starts and ends else None
    steps = 0
    in_tok = out_tok = 0
    any_usage = False
    cost = 0.0
    models: list[str] = []
    unpriced: set[str] = set()
    no_usage = unknown_model = False
    for span in ordered:
        attrs = span["attributes"]
        if "gen_ai.operation.name" in attrs:
            steps += 1
        req_model = attrs.get("gen_ai.request.model")
        resp_model = attrs.get("gen_ai.response.model")
        model = resp_model or req_model
        i = _num(attrs.get("gen_ai.usage.input_tokens", attrs.get("gen_ai.usage.prompt_tokens")))
        o = _num(attrs.get("gen_ai.usage.output_tokens",
                           attrs.get("gen_ai.usage.completion_tokens")))
        is_llm = model is not None or i is not None or o is not None
        if not is_llm:
            continue
        if model and model not in models:
            models.append(str(model))
        if i is None and o is None:
            no_usage = True
            continue
        any_usage = True
        in_tok += int(i or 0)
        out_tok += int(o or 0)
        if not model:
            unknown_model = True
            continue
        usd = price(pricing, str(resp_model), i, o) if resp_model else None
        if usd is None and req_model:
            usd = price(pricing, str(req_model), i, o)
        if usd is None:
            unpriced.add(str(model))
        else:
            cost += usd
    if not models and not any_usage:
        no_usage = True
    priced = any_usage and not unpriced and not unknown_model and not no_usage
    service = next((s["resource"].get("service.name") for s in spans
                    if s["resource"].get("service.name")), None)
    return {
        "output": output,
        "model": models[-1] if models else None,
        "models": models,
        "inputTokens": in_tok if any_usage else None,
        "outputTokens": out_tok if any_usage else None,
        "latencyMs": round(latency, 3) if latency is not None else None,
        "steps": steps,
        "costUsd": round(cost, 10) if priced else None,
        "unpricedModels": sorted(unpriced),
        "noUsage": no_usage and not any_usage,
        "unknownModel": unknown_model or (any_usage and not models),
        "serviceName": service,
        "spanCount": len(spans),
    }


def session_from_reply(output: str, model: str | None, usage: dict[str, Any] | None,
                       latency_ms: float, pricing: dict[str, dict[str, float]]) -> dict[str, Any]:
    """A push-mode session: one HTTP call to the agent's connection."""
    usage = usage if isinstance(usage, dict) else {}
    i, o = _num(usage.get("input_tokens")), _num(usage.get("output_tokens"))
    has_usage = i is not None or o is not None
    usd = price(pricing, model, i, o) if has_usage else None
    return {
        "output": output, "model": model, "models": [model] if model else [],
        "inputTokens": int(i) if i is not None else None,
        "outputTokens": int(o) if o is not None else None,
        "latencyMs": round(latency_ms, 3), "steps": None,
        "costUsd": round(usd, 10) if usd is not None else None,
        "unpricedModels": [model] if (model and has_usage and usd is None) else [],
        "noUsage": not has_usage, "unknownModel": model is None, "serviceName": None,
        "spanCount": 0,
    }


def load_judges(db: Database, ids: list[str]) -> list[dict[str, Any]]:
    rows = {r["id"]: loads(r["body"]) for r in db.all("SELECT * FROM judges")}
    return [rows[j] for j in ids if j in rows]


def score_session(
    judges: list[dict[str, Any]], session: dict[str, Any], *, item_input: str,
    expected: str | None, llm: dict[str, Any] | None,
) -> dict[str, Any]:
    """Run every judge; returns ``{scores, score, passed, reason, error}``.

    ``scores`` maps metric key -> 0..1 (judges sharing a metric are averaged). With no judge
    able to score, the item is unscored: ``passed``/``score`` null and ``error`` set.
    """
    per_metric: dict[str, list[float]] = {}
    reasons = []
    for judge in judges:
        verdict = run_judge(judge, session, item_input=item_input, expected=expected, llm=llm)
        reasons.append(verdict.reason)
        if verdict.score is not None:
            per_metric.setdefault(verdict.metric, []).append(verdict.score)
    scores = {k: round(sum(v) / len(v), 6) for k, v in per_metric.items()}
    reason = "; ".join(reasons)
    if not scores:
        error = "no judge could score this item" + (f" ({reason})" if reason else "")
        return {"scores": {}, "score": None, "passed": None, "reason": reason, "error": error}
    mean = sum(scores.values()) / len(scores)
    return {"scores": scores, "score": round(mean, 6), "passed": mean >= PASS_MARK - 1e-9,
            "reason": reason, "error": None}
