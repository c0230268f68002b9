"""The trace reader on real payloads: spans and events captured from each framework quickstart
(tests/integration/frameworks, ``NEENS_RECORD_PAYLOADS``), item it_1 ("Refund for order 42
($42.00)?"), answered by the fake model: 5 prompt tokens, 10 completion tokens, gpt-4o-mini."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from neens_sandbox.sessions import session_from_spans
from neens_sandbox.trace_reading import span_kind

DATA = Path(__file__).parent / "data" / "frameworks"
PRICING = {"gpt-4o-mini": {"input": 0.15, "output": 0.60}}
ANSWER = "Your refund of $42.00 for order 42 has been approved."
COST = (5 * 0.15 + 10 * 0.60) / 1e6


def _load(name: str) -> tuple[list[dict], list[dict]]:
    data = json.loads((DATA / f"{name}.json").read_text())
    return data["spans"], data["events"]


def _session(name: str) -> dict:
    spans, events = _load(name)
    return session_from_spans(spans, PRICING, events)


def _check(session: dict, *, answer: str = ANSWER) -> None:
    assert session["output"] == answer
    assert session["model"] == "gpt-4o-mini"
    assert (session["inputTokens"], session["outputTokens"]) == (5, 10)
    assert session["costUsd"] == pytest.approx(COST)
    assert session["steps"] == 1


def test_genai_conventions_on_spans():
    """Official OpenAI instrumentation, content on the span (gen_ai.output.messages)."""
    spans, events = _load("openai_v2_spans")
    assert events == [] and "gen_ai.output.messages" in spans[0]["attributes"]
    _check(_session("openai_v2_spans"))


def test_genai_events_in_log_records():
    """event_only: the span has no content; the log record carries the structured messages."""
    spans, events = _load("openai_v2_events")
    assert "gen_ai.output.messages" not in spans[0]["attributes"]
    assert [e["name"] for e in events] == ["gen_ai.client.inference.operation.details"]
    assert events[0]["source"] == "log"
    _check(_session("openai_v2_events"))
    no_logs = session_from_spans(spans, PRICING, [])
    assert no_logs["output"] is None and no_logs["costUsd"] == pytest.approx(COST)


def test_openinference():
    """llm.output_messages / llm.model_name / llm.token_count.*; AGENT and CHAIN spans are not
    steps, and output.value (the whole response JSON) is not the answer."""
    spans, _ = _load("openai_agents")
    kinds = {s["attributes"].get("openinference.span.kind") for s in spans}
    assert {"LLM", "AGENT", "CHAIN"} <= kinds
    _check(_session("openai_agents"))


def test_openllmetry_langgraph():
    """Task and workflow spans carry gen_ai.operation.name and traceloop.entity.output (the
    serialized state): neither a step nor the answer."""
    spans, _ = _load("langgraph")
    tasks = [s for s in spans if s["attributes"].get("traceloop.span.kind") == "task"]
    assert tasks and all("gen_ai.operation.name" in s["attributes"] for s in tasks)
    assert all(span_kind(s["attributes"]) is None for s in tasks)
    _check(_session("langgraph"))


def test_pydantic_ai_text():
    spans, _ = _load("pydantic_ai")
    root = next(s for s in spans if not s["parentSpanId"])
    assert "gen_ai.aggregated_usage.input_tokens" in root["attributes"] or any(
        k.startswith("gen_ai.usage") for k in root["attributes"])
    _check(_session("pydantic_ai"))


def test_pydantic_ai_structured_output_is_a_tool_call():
    """The answer is the final_result tool call's arguments (and the run span's final_result)."""
    spans, _ = _load("pydantic_ai_structured")
    chat = next(s for s in spans if s["attributes"].get("gen_ai.operation.name") == "chat")
    assert '"tool_call"' in chat["attributes"]["gen_ai.output.messages"]
    session = _session("pydantic_ai_structured")
    assert json.loads(session["output"]) == {"answer": ANSWER, "approved": True}
    _check(session, answer=session["output"])
    without_root = session_from_spans([chat], PRICING)  # from the tool call alone
    assert json.loads(without_root["output"])["answer"] == ANSWER


def test_vercel_ai_genai_integration():
    """AI SDK 7's OpenTelemetry integration: the invoke_agent root repeats the call's usage."""
    spans, _ = _load("vercel_ai")
    root = next(s for s in spans if not s["parentSpanId"])
    assert root["attributes"]["gen_ai.usage.input_tokens"] == 5  # an aggregate
    _check(_session("vercel_ai"))


def test_vercel_ai_legacy_attributes():
    """ai.response.text, ai.usage.*, operation.name: ai.generateText totals its doGenerate."""
    spans, _ = _load("vercel_ai_legacy")
    ops = {s["attributes"].get("ai.operationId") for s in spans}
    assert {"ai.generateText", "ai.generateText.doGenerate"} <= ops
    assert not any("gen_ai.operation.name" in s["attributes"] for s in spans)
    _check(_session("vercel_ai_legacy"))


def test_crewai_openinference():
    """CrewAI: the crew (CHAIN) and task (AGENT) spans hold CrewAI's output objects as JSON in
    output.value; the answer, model and tokens are the OpenAI client's LLM span. CrewAI sends
    the question inside its task prompt (39 prompt tokens here), one model call, one step."""
    spans, _ = _load("crewai")
    kinds = [s["attributes"].get("openinference.span.kind") for s in spans]
    assert sorted(kinds) == ["AGENT", "CHAIN", "LLM"]
    root = next(s for s in spans if not s["parentSpanId"])
    assert json.loads(root["attributes"]["output.value"])["raw"] == ANSWER
    session = _session("crewai")
    assert session["output"] == ANSWER  # not the crew's output JSON
    assert session["model"] == "gpt-4o-mini"
    assert (session["inputTokens"], session["outputTokens"]) == (39, 10)
    assert session["costUsd"] == pytest.approx((39 * 0.15 + 10 * 0.60) / 1e6)
    assert session["steps"] == 1
    orchestration_only = [s for s in spans if s["attributes"]["openinference.span.kind"] != "LLM"]
    fallback = session_from_spans(orchestration_only, PRICING)  # the model client not traced
    assert json.loads(fallback["output"])["raw"] == ANSWER  # the crew's output.value, as is
    assert (fallback["model"], fallback["steps"], fallback["costUsd"]) == (None, 0, None)
