"""The trace reader on payloads recorded from more frameworks, each instrumented as its own
docs say, run under ``neens eval run`` against the sandbox with the fake model
(tests/fakes/llm_server.py: OpenAI chat completions and Anthropic Messages, plain and
streamed), item it_1 ("Refund for order 42 ($42.00)?"). How each was recorded (versions, the
settings) is listed in docs/trace-conventions.md, "Other frameworks"."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from neens_sandbox.calls import uncounted
from neens_sandbox.sessions import session_from_spans

DATA = Path(__file__).parent / "data" / "frameworks"
PRICING = {"gpt-4o-mini": {"input": 0.15, "output": 0.60},
           "claude-haiku-4-5": {"input": 1.00, "output": 5.00}}
ANSWER = "Your refund of $42.00 for order 42 has been approved."


def _load(name: str) -> tuple[list[dict], list[dict]]:
    data = json.loads((DATA / f"{name}.json").read_text())
    return data["spans"], data["events"]


def _session(name: str) -> dict:
    spans, events = _load(name)
    return session_from_spans(spans, PRICING, events)


def _check(session: dict, *, model: str, tokens: tuple[int, int], steps: int,
           answer: str = ANSWER) -> None:
    rate = PRICING[model.rsplit("/", 1)[-1]]
    assert session["output"] == answer
    assert session["model"] == model
    assert (session["inputTokens"], session["outputTokens"]) == tokens
    cost = (tokens[0] * rate["input"] + tokens[1] * rate["output"]) / 1e6
    assert session["costUsd"] == pytest.approx(cost)
    assert session["steps"] == steps


def test_claude_code_traces_and_log_records():
    """Claude Code's own telemetry: an llm_request span (tokens, model) and the answer only in
    the claude_code.assistant_response log record's ``response`` attribute."""
    spans, events = _load("claude_code_otel")
    assert {s["attributes"].get("span.type") for s in spans} == {"interaction", "llm_request"}
    answers = [e for e in events if e["name"] == "assistant_response"]
    assert answers and answers[0]["source"] == "log"
    assert answers[0]["body"] == "claude_code.assistant_response"
    _check(_session("claude_code_otel"), model="claude-haiku-4-5", tokens=(5, 10), steps=1)
    # without OTEL_LOG_ASSISTANT_RESPONSES the text is a placeholder: no answer
    redacted = copy.deepcopy(events)
    for event in redacted:
        if event["name"] == "assistant_response":
            event["attributes"]["response"] = "<REDACTED>"
    assert session_from_spans(spans, PRICING, redacted)["output"] is None
    assert session_from_spans(spans, PRICING, [])["output"] is None


def test_claude_agent_sdk_openinference():
    """One AGENT span: the answer at llm.output_messages.0.message.content.0, usage on it; no
    model-call span, so no step."""
    spans, _ = _load("claude_agent_sdk_openinference")
    attrs = spans[0]["attributes"]
    assert len(spans) == 1 and attrs["openinference.span.kind"] == "AGENT"
    assert "llm.output_messages.0.message.content.0" in attrs
    _check(_session("claude_agent_sdk_openinference"), model="claude-haiku-4-5",
           tokens=(5, 10), steps=0)
    # the key alone (no output.value fallback) is the answer
    del attrs["output.value"]
    assert session_from_spans(spans, PRICING)["output"] == ANSWER


def test_strands_default_conventions():
    """The answer is the ``message`` attribute of gen_ai.choice span events: a JSON list of
    blocks on chat, plain text on invoke_agent (the latest, with its newline)."""
    spans, events = _load("strands")
    choices = [e for e in events if e["name"] == "gen_ai.choice"]
    assert len(choices) == 2 and all("message" in e["attributes"] for e in choices)
    assert any(e["attributes"]["message"].startswith("[") for e in choices)
    _check(_session("strands"), model="gpt-4o-mini", tokens=(5, 10), steps=1,
           answer=ANSWER + "\n")
    chat_only = [e for e in events if e["spanId"] == next(
        s["spanId"] for s in spans if s["name"] == "chat")]
    assert session_from_spans(spans, PRICING, chat_only)["output"] == ANSWER


@pytest.mark.parametrize("name", ["smolagents_code", "smolagents_toolcalling"])
def test_smolagents_final_answer_wins(name):
    """The root AGENT span's output (the final answer) beats the model's text ("Thought: ...
    final_answer(...)" for the CodeAgent); steps: one model call and the final-answer tool."""
    spans, _ = _load(name)
    llm = next(s for s in spans if s["attributes"].get("openinference.span.kind") == "LLM")
    texts = [v for k, v in llm["attributes"].items() if k.startswith("llm.output_messages")
             and k.endswith("text")]
    if name == "smolagents_code":
        assert texts and texts[0].startswith("Thought:")
    _check(_session(name), model="gpt-4o-mini", tokens=(7, 10), steps=2)
    # without the root, the final_answer tool's output still wins
    no_root = [s for s in spans if s["parentSpanId"]]
    assert session_from_spans(no_root, PRICING)["output"] == ANSWER


def test_anthropic_sdk_and_openllmetry_count_one_call():
    """The SDK's own anthropic.messages.create and OpenLLMetry's anthropic.chat describe one
    call (different scopes, overlapping, same model and usage): one step, tokens once."""
    spans, _ = _load("anthropic_openllmetry")
    assert {s["scope"] for s in spans} == {"com.anthropic.sdk.python",
                                           "opentelemetry.instrumentation.anthropic"}
    assert len(uncounted(spans)) == 1
    _check(_session("anthropic_openllmetry"), model="claude-haiku-4-5", tokens=(5, 10),
           steps=1)
    # the same scope twice is two calls (nothing says they are one)
    same = copy.deepcopy(spans)
    for span in same:
        span["scope"] = "one"
    assert session_from_spans(same, PRICING)["steps"] == 2


def test_anthropic_sdk_own_tracing_in_content_mode():
    """examples/frameworks/anthropic_sdk: one span, the answer in gen_ai.output.messages."""
    spans, _ = _load("anthropic_sdk_content")
    assert [s["scope"] for s in spans] == ["com.anthropic.sdk.python"]
    assert "gen_ai.output.messages" in spans[0]["attributes"]
    _check(_session("anthropic_sdk_content"), model="claude-haiku-4-5", tokens=(5, 10),
           steps=1)


def test_anthropic_sdk_default_tracing_has_no_answer():
    """metadata_only (the SDK's default) with messages.stream(): usage and model, no text."""
    session = _session("anthropic_no_content")
    assert session["output"] is None
    assert (session["inputTokens"], session["outputTokens"], session["steps"]) == (5, 10, 1)


def test_llamaindex_function_agent():
    """_prepare_chat_with_tools is marked LLM with neither answer nor usage beside the real
    astream_chat: not a step. The streamed call carries no usage, so tokens and cost are
    unknown, never 0."""
    spans, _ = _load("llamaindex_function_agent")
    hollow = next(s for s in spans if s["name"].endswith("_prepare_chat_with_tools"))
    assert uncounted(spans) == {hollow["spanId"]}
    session = _session("llamaindex_function_agent")
    assert session["output"] == ANSWER and session["model"] == "gpt-4o-mini"
    assert session["steps"] == 1
    assert session["inputTokens"] is None and session["costUsd"] is None


def test_adk_via_litellm_prices_the_prefixed_model():
    """ADK names the model openai/gpt-4o-mini: reported as named, priced as gpt-4o-mini; the
    answer is in the inference-details log record (SPAN_ONLY keeps it on the span too)."""
    _check(_session("adk_litellm"), model="openai/gpt-4o-mini", tokens=(5, 10), steps=1)
