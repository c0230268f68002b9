from __future__ import annotations

import json

import pytest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue

from neens_sandbox import otlp
from neens_sandbox.sessions import session_from_spans
from neens_sandbox.trace_reading import answer_of, fallback_of

TRACE = bytes(range(16))
ROOT, CHILD = bytes([1] * 8), bytes([2] * 8)


def _kv(key, **value):
    return KeyValue(key=key, value=AnyValue(**value))


def _protobuf() -> bytes:
    req = ExportTraceServiceRequest()
    rs = req.resource_spans.add()
    rs.resource.attributes.extend([_kv("neens.eval_run_id", string_value="ppr_1")])
    ss = rs.scope_spans.add()
    ss.scope.name = "agent"
    root = ss.spans.add(trace_id=TRACE, span_id=ROOT, name="root", start_time_unix_nano=1_000,
                        end_time_unix_nano=5_000_000)
    root.attributes.extend([_kv("output.value", string_value="hi"),
                            _kv("n", int_value=3), _kv("f", double_value=0.5),
                            _kv("b", bool_value=True)])
    child = ss.spans.add(trace_id=TRACE, span_id=CHILD, parent_span_id=ROOT, name="llm",
                         start_time_unix_nano=2_000, end_time_unix_nano=3_000)
    child.attributes.extend([_kv("gen_ai.operation.name", string_value="chat")])
    return req.SerializeToString()


def test_protobuf_decoding():
    spans = otlp.decode_protobuf(_protobuf())
    assert [s["name"] for s in spans] == ["root", "llm"]
    root, child = spans
    assert root["traceId"] == TRACE.hex() and root["parentSpanId"] == ""
    assert child["parentSpanId"] == ROOT.hex()
    assert root["attributes"] == {"output.value": "hi", "n": 3, "f": 0.5, "b": True}
    assert root["resource"] == {"neens.eval_run_id": "ppr_1"}
    assert (root["startNs"], root["endNs"]) == (1_000, 5_000_000)


def test_json_decoding_hex_and_base64_ids_and_snake_case():
    body = {"resourceSpans": [{
        "resource": {"attributes": [{"key": "k", "value": {"intValue": "7"}}]},
        "scopeSpans": [{"spans": [
            {"traceId": TRACE.hex(), "spanId": ROOT.hex(), "name": "a",
             "startTimeUnixNano": "10", "endTimeUnixNano": 20,
             "attributes": [{"key": "arr", "value": {"arrayValue": {"values": [
                 {"stringValue": "x"}, {"doubleValue": 1}]}}}]},
            {"trace_id": "AAECAwQFBgcICQoLDA0ODw==", "span_id": "AgICAgICAgI=",
             "parent_span_id": ROOT.hex(), "name": "b"},
        ]}]}]}
    spans = otlp.decode_json(json.dumps(body).encode())
    assert spans[0]["resource"] == {"k": 7}
    assert spans[0]["attributes"] == {"arr": ["x", 1.0]}
    assert spans[1]["traceId"] == TRACE.hex() and spans[1]["spanId"] == CHILD.hex()
    assert spans[1]["parentSpanId"] == ROOT.hex()


@pytest.mark.parametrize("body, ctype", [
    (b"\xff\xff\xff\xff\x0f", otlp.PROTOBUF),
    (b"{", otlp.JSON),
    (b"[]", otlp.JSON),
    (b'{"resourceSpans": [{"scopeSpans": [{"spans": [{"spanId": "0102030405060708"}]}]}]}',
     otlp.JSON),
    (b'{"resourceSpans": [{"scopeSpans": [{"spans": [{"traceId": "zz", "spanId": "zz"}]}]}]}',
     otlp.JSON),
    (b"x", "text/plain"),
])
def test_garbage_is_an_otlp_error(body, ctype):
    with pytest.raises(otlp.OtlpError):
        otlp.decode(body, ctype)


def test_export_responses():
    assert json.loads(otlp.encode_response(otlp.JSON)) == {}
    partial = json.loads(otlp.encode_response(otlp.JSON, 2, "unknown run"))
    assert partial == {"partialSuccess": {"rejectedSpans": "2", "errorMessage": "unknown run"}}
    resp = ExportTraceServiceResponse()
    resp.ParseFromString(otlp.encode_response(otlp.PROTOBUF, 1, "x"))
    assert resp.partial_success.rejected_spans == 1


def _span(span_id, parent="", attrs=None, start=0, end=0, resource=None):
    return {"traceId": "t", "spanId": span_id, "parentSpanId": parent, "name": span_id,
            "startNs": start, "endNs": end, "attributes": attrs or {},
            "resource": resource or {}}


def test_session_output_model_tokens_latency_steps_and_cost():
    pricing = {"gpt-4o-mini": {"input": 0.15, "output": 0.60}}
    messages = json.dumps([{"role": "assistant", "parts": [{"type": "text",
                                                             "content": "from llm"}]}])
    spans = [
        _span("root", attrs={"gen_ai.operation.name": "invoke_agent", "output.value": "final"},
              start=1_000_000, end=9_000_000, resource={"service.name": "svc"}),
        _span("llm", "root", {"gen_ai.operation.name": "chat",
                              "gen_ai.request.model": "gpt-4o-mini",
                              "gen_ai.usage.input_tokens": 1000,
                              "gen_ai.usage.output_tokens": 500,
                              "gen_ai.output.messages": messages}, 2_000_000, 3_000_000),
    ]
    s = session_from_spans(spans, pricing)
    assert s["output"] == "from llm"  # output.value is a fallback only
    assert s["model"] == "gpt-4o-mini" and s["steps"] == 1  # the model call; not the agent span
    assert (s["inputTokens"], s["outputTokens"]) == (1000, 500)
    assert s["latencyMs"] == 8.0 and s["serviceName"] == "svc"
    assert s["costUsd"] == pytest.approx((1000 * 0.15 + 500 * 0.60) / 1e6)
    no_llm_text = session_from_spans([spans[0], spans[1] | {"attributes": {}}], pricing)
    assert no_llm_text["output"] == "final"


def test_unpriced_sessions_are_null_never_zero():
    llm = {"gen_ai.request.model": "llama", "gen_ai.usage.input_tokens": 5}
    s = session_from_spans([_span("a", attrs=llm, start=1, end=2)], {})
    assert s["costUsd"] is None and s["unpricedModels"] == ["llama"]
    no_usage = session_from_spans([_span("a", attrs={"gen_ai.request.model": "m"})],
                                  {"m": {"input": 1, "output": 1}})
    assert no_usage["costUsd"] is None and no_usage["noUsage"] is True
    no_model = session_from_spans([_span("a", attrs={"gen_ai.usage.input_tokens": 5})], {})
    assert no_model["costUsd"] is None and no_model["unknownModel"] is True


def test_output_attribute_variants():
    def output_of(attrs):
        return answer_of(attrs, root=True) or fallback_of(attrs)

    assert output_of({"gen_ai.completion.0.content": "c", "gen_ai.completion.0.role": "r"}) == "c"
    assert output_of({"gen_ai.output.messages": '[{"role": "a", "content": "m"}]'}) == "m"
    assert output_of({"neens.output": "n"}) == "n"
    assert output_of({"other": 1}) is None
