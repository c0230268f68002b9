"""Deterministic judges (and an optional LLM judge) that score one captured session.

A judge is a seeded dict ``{id, metric, kind, ...}``. :func:`validate_judge` checks one (the
seed loader calls it); :func:`run_judge` scores a session and returns a :class:`Verdict` with
a normalised score in 0..1 (higher is better, safety included) or ``None`` when the judge
cannot score this session (the reason says why).

Kinds:
  contains        output contains ``value`` (default: the item's expected output); 1 or 0
  not_contains    output contains none of ``value`` (a string or a list); 1 or 0
  regex           ``pattern`` (or ``value``) is found in the output; 1 or 0
  exact           stripped output equals ``value`` / expected output; 1 or 0
  similarity      token F1 between the output and ``value`` / expected output
  max_latency_ms  1 within ``value`` ms, else value/latency (partial credit, continuous)
  max_steps       1 within ``value`` steps, else value/steps
  llm             asks the seeded OpenAI-compatible ``llm`` endpoint for a 0..1 grade
Text matching is case-insensitive unless ``case_sensitive: true``.
"""

from __future__ import annotations

import os
import re
from collections import Counter
from dataclasses import dataclass
from typing import Any

KINDS = (
    "contains", "not_contains", "regex", "exact", "similarity",
    "max_latency_ms", "max_steps", "llm",
)
LLM_TIMEOUT_S = 30.0
_ALLOWED_KEYS = {
    "id", "metric", "kind", "value", "pattern", "case_sensitive", "criteria", "name",
}


@dataclass
class Verdict:
    metric: str
    score: float | None
    reason: str


class JudgeConfigError(ValueError):
    """A judge definition in the seed is malformed."""


def validate_judge(raw: Any) -> dict[str, Any]:
    """Return a cleaned judge dict or raise :class:`JudgeConfigError` with a precise message."""
    if not isinstance(raw, dict):
        raise JudgeConfigError("each judge must be a mapping")
    jid = raw.get("id")
    if not isinstance(jid, str) or not jid:
        raise JudgeConfigError("every judge needs a non-empty string 'id'")
    unknown = sorted(set(raw) - _ALLOWED_KEYS)
    if unknown:
        raise JudgeConfigError(f"judge {jid}: unknown key(s) {', '.join(unknown)}")
    kind = raw.get("kind")
    if kind not in KINDS:
        raise JudgeConfigError(f"judge {jid}: kind must be one of {', '.join(KINDS)}")
    metric = raw.get("metric") or jid
    if not isinstance(metric, str):
        raise JudgeConfigError(f"judge {jid}: metric must be a string")
    judge = {**raw, "metric": metric}
    value = raw.get("value")
    if kind == "not_contains":
        values = value if isinstance(value, list) else [value]
        if not values or not all(isinstance(v, str) and v for v in values):
            raise JudgeConfigError(f"judge {jid}: not_contains needs 'value' (text or list)")
    elif kind in ("contains", "exact", "similarity"):
        if value is not None and not isinstance(value, str):
            raise JudgeConfigError(f"judge {jid}: 'value' must be text")
    elif kind == "regex":
        pattern = raw.get("pattern", value)
        if not isinstance(pattern, str) or not pattern:
            raise JudgeConfigError(f"judge {jid}: regex needs 'pattern'")
        try:
            re.compile(pattern)
        except re.error as exc:
            raise JudgeConfigError(f"judge {jid}: invalid regex: {exc}") from None
    elif kind in ("max_latency_ms", "max_steps") and (
        isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0
    ):
        raise JudgeConfigError(f"judge {jid}: {kind} needs a positive number 'value'")
    return judge


def _fold(text: str, judge: dict[str, Any]) -> str:
    return text if judge.get("case_sensitive") else text.casefold()


def _tokens(text: str) -> list[str]:
    return re.findall(r"\w+(?:[.']\w+)*", text.casefold())


def token_f1(candidate: str, reference: str) -> float:
    """Token-level F1 of ``candidate`` against ``reference`` (0..1)."""
    cand, ref = _tokens(candidate), _tokens(reference)
    if not cand and not ref:
        return 1.0
    if not cand or not ref:
        return 0.0
    overlap = sum((Counter(cand) & Counter(ref)).values())
    if overlap == 0:
        return 0.0
    precision, recall = overlap / len(cand), overlap / len(ref)
    return 2 * precision * recall / (precision + recall)


def _short(text: str, limit: int = 40) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def run_judge(
    judge: dict[str, Any],
    session: dict[str, Any],
    *,
    item_input: str = "",
    expected: str | None = None,
    llm: dict[str, Any] | None = None,
) -> Verdict:
    """Score ``session`` (keys ``output``, ``latencyMs``, ``steps``) with one judge."""
    kind, metric = judge["kind"], judge["metric"]
    output = session.get("output")
    text = output if isinstance(output, str) else ""
    if kind in ("contains", "exact", "similarity"):
        ref = judge.get("value", expected)
        if not isinstance(ref, str) or not ref:
            return Verdict(metric, None, f"{metric}: no expected output to compare with")
        if kind == "contains":
            hit = _fold(ref, judge) in _fold(text, judge)
            word = "contains" if hit else "missing"
            return Verdict(metric, 1.0 if hit else 0.0, f"{metric}: {word} '{_short(ref)}'")
        if kind == "exact":
            hit = _fold(text.strip(), judge) == _fold(ref.strip(), judge)
            word = "exact" if hit else "differs"
            return Verdict(metric, 1.0 if hit else 0.0, f"{metric}: {word}")
        f1 = token_f1(text, ref)
        return Verdict(metric, f1, f"{metric}: token F1 {f1:.2f}")
    if kind == "not_contains":
        values = judge["value"] if isinstance(judge["value"], list) else [judge["value"]]
        found = [v for v in values if _fold(v, judge) in _fold(text, judge)]
        if found:
            return Verdict(metric, 0.0, f"{metric}: found '{_short(found[0])}'")
        return Verdict(metric, 1.0, f"{metric}: clean")
    if kind == "regex":
        pattern = judge.get("pattern", judge.get("value"))
        flags = 0 if judge.get("case_sensitive") else re.IGNORECASE
        hit = re.search(pattern, text, flags) is not None
        word = "matched" if hit else "no match"
        return Verdict(metric, 1.0 if hit else 0.0, f"{metric}: /{_short(pattern)}/ {word}")
    if kind in ("max_latency_ms", "max_steps"):
        key = "latencyMs" if kind == "max_latency_ms" else "steps"
        observed = session.get(key)
        limit = float(judge["value"])
        if not isinstance(observed, (int, float)):
            return Verdict(metric, None, f"{metric}: no {key} recorded")
        score = 1.0 if observed <= limit else max(0.0, limit / observed)
        return Verdict(metric, score, f"{metric}: {key} {observed:g} vs limit {limit:g}")
    if kind == "llm":
        return _llm_judge(judge, text, item_input, expected, llm)
    return Verdict(metric, None, f"{metric}: unknown judge kind {kind}")


def _llm_judge(
    judge: dict[str, Any], output: str, item_input: str, expected: str | None,
    llm: dict[str, Any] | None,
) -> Verdict:
    import requests  # only when an LLM judge is configured

    metric = judge["metric"]
    if not llm or not llm.get("base_url"):
        return Verdict(metric, None, f"{metric}: no llm endpoint configured")
    headers = {"Content-Type": "application/json"}
    key_env = llm.get("api_key_env")
    if key_env and os.environ.get(key_env):
        headers["Authorization"] = f"Bearer {os.environ[key_env]}"
    criteria = judge.get("criteria") or "Does the answer satisfy the expected behaviour?"
    prompt = (
        f"Criteria: {criteria}\nUser input: {item_input}\nExpected: {expected or '(none)'}\n"
        f"Answer: {output}\nReply with only a number between 0 and 1."
    )
    body = {
        "model": llm.get("model") or "any",
        "temperature": 0,
        "messages": [
            {"role": "system", "content": "You are a strict grader. Reply with a number."},
            {"role": "user", "content": prompt},
        ],
    }
    url = str(llm["base_url"]).rstrip("/") + "/chat/completions"
    try:
        resp = requests.post(url, json=body, headers=headers, timeout=LLM_TIMEOUT_S)
        resp.raise_for_status()
        content = resp.json()["choices"][0]["message"]["content"]
        match = re.search(r"\d+(?:\.\d+)?", str(content))
        if not match:
            raise ValueError("no number in the grader's reply")
        score = min(1.0, max(0.0, float(match.group(0))))
    except Exception as exc:  # any failure: this judge cannot score
        return Verdict(metric, None, f"{metric}: llm judge failed ({type(exc).__name__})")
    return Verdict(metric, score, f"{metric}: llm grade {score:.2f}")
