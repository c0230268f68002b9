"""From captured spans (or a push reply) to a session, and from a session to item scores.

* :func:`session_from_reply` — the session of a push-mode call (traces: ``sessions``);
* :func:`price` / :func:`load_pricing` — USD from the seeded per-million-token rates
  (a model without a rate, a session without usage or without a model is *unpriced*:
  ``costUsd`` is null, never 0);
* :func:`score_session` — run the item's judges; an item passes when the mean of its judge
  scores is at least :data:`PASS_MARK`.
"""

from __future__ import annotations

from typing import Any

from neens_sandbox.db import Database, loads
from neens_sandbox.judges import run_judge
from neens_sandbox.trace_reading import num as _num

PASS_MARK = 0.7


def load_pricing(db: Database) -> dict[str, dict[str, float]]:
    """The seeded rates, model -> {input, output} (kept by ``Database.memo``: read only)."""
    return db.memo("pricing", lambda: {r["model"]: {"input": r["input"], "output": r["output"]}
                                       for r in db.all("SELECT * FROM pricing")})


def load_llm(db: Database) -> dict[str, Any] | None:
    """The seeded LLM connection for the LLM judges, or None."""
    def read() -> dict[str, Any] | None:
        row = db.one("SELECT value FROM settings WHERE key = 'llm'")
        return loads(row["value"]) if row else None
    return db.memo("llm", read)


def price(pricing: dict[str, dict[str, float]], model: str | None, input_tokens: Any,
          output_tokens: Any) -> float | None:
    """USD for one call, or None when it cannot be priced. A provider-prefixed name
    (``openai/gpt-4o-mini``, as LiteLLM names models) is priced as the model after the last
    ``/`` when the whole name has no rate."""
    if model and model not in pricing and "/" in model:
        model = model.rsplit("/", 1)[1]
    if not model or model not in pricing:
        return None
    if not isinstance(input_tokens, (int, float)) and not isinstance(output_tokens, (int, float)):
        return None
    rate = pricing[model]
    return ((input_tokens or 0) * rate["input"] + (output_tokens or 0) * rate["output"]) / 1e6


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
    rows = db.memo("judges", lambda: {r["id"]: loads(r["body"])
                                      for r in db.all("SELECT * FROM judges")})
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
