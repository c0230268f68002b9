"""Rules of the convention table that the recorded payloads do not exercise (tools, older
attribute names); the recorded ones are in test_framework_payloads.py."""

from __future__ import annotations

import pytest

from neens_sandbox.sessions import session_from_spans
from neens_sandbox.trace_reading import answer_of, span_kind, usage_of


@pytest.mark.parametrize(("attrs", "kind"), [
    ({"gen_ai.operation.name": "chat"}, "llm"),
    ({"gen_ai.operation.name": "execute_tool"}, "tool"),
    ({"gen_ai.operation.name": "invoke_agent"}, None),
    ({"openinference.span.kind": "LLM"}, "llm"),
    ({"openinference.span.kind": "TOOL"}, "tool"),
    ({"openinference.span.kind": "AGENT", "gen_ai.operation.name": "chat"}, None),
    ({"traceloop.span.kind": "tool"}, "tool"),
    ({"traceloop.span.kind": "task", "gen_ai.operation.name": "execute_task"}, None),
    ({"llm.request.type": "chat"}, "llm"),
    ({"operation.name": "ai.streamText.doStream fn"}, "llm"),
    ({"ai.operationId": "ai.toolCall"}, "tool"),
    ({"ai.operationId": "ai.generateText"}, None),
    ({"gen_ai.tool.name": "lookup_order"}, "tool"),
    ({"http.method": "GET"}, None),
])
def test_span_kind(attrs, kind):
    assert span_kind(attrs) == kind


def test_usage_and_answer_names():
    assert usage_of({"ai.usage.promptTokens": 3, "ai.usage.completionTokens": "4"}) == (3, 4.0)
    assert usage_of({"llm.token_count.prompt": 1}) == (1, None)
    assert answer_of({"gen_ai.completion.0.content": "a", "gen_ai.completion.1.content": "b"},
                     root=False) == "b"
    tool_only = ('[{"role":"assistant","parts":[{"type":"tool_call","name":"lookup",'
                 '"arguments":{}}]}]')
    assert answer_of({"gen_ai.output.messages": tool_only}, root=False) is None
    assert answer_of({"traceloop.entity.output": "state"}, root=True) is None


def test_tools_count_as_steps_and_aggregates_once():
    def span(sid, parent, attrs, end):
        return {"traceId": "t", "spanId": sid, "parentSpanId": parent, "name": sid,
                "startNs": 1, "endNs": end, "attributes": attrs, "resource": {}}

    usage = {"gen_ai.request.model": "m", "gen_ai.usage.input_tokens": 10,
             "gen_ai.usage.output_tokens": 1}
    spans = [
        span("root", "", {"gen_ai.operation.name": "invoke_agent", **usage,
                          "gen_ai.usage.input_tokens": 20, "gen_ai.usage.output_tokens": 2}, 9),
        span("c1", "root", {"gen_ai.operation.name": "chat", **usage}, 3),
        span("t1", "root", {"gen_ai.operation.name": "execute_tool"}, 4),
        span("c2", "root", {"gen_ai.operation.name": "chat", **usage,
                            "gen_ai.output.messages": '[{"role":"assistant","content":"done"}]'},
             8),
    ]
    s = session_from_spans(spans, {"m": {"input": 1e6, "output": 1e6}})
    assert (s["steps"], s["inputTokens"], s["outputTokens"]) == (3, 20, 2)
    assert s["costUsd"] == pytest.approx(22.0) and s["output"] == "done"
