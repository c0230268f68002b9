from __future__ import annotations

import json

import pytest
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue

from neens_sandbox import otlp, otlp_signals
from neens_sandbox.trace_reading import event_answer


def test_span_events_are_decoded_from_protobuf_and_json():
    req = ExportTraceServiceRequest()
    span = req.resource_spans.add().scope_spans.add().spans.add(
        trace_id=bytes(range(16)), span_id=bytes([1] * 8), name="chat")
    ev = span.events.add(name="gen_ai.choice", time_unix_nano=42)
    ev.attributes.append(KeyValue(key="index", value=AnyValue(int_value=0)))
    (decoded,) = otlp.decode_protobuf(req.SerializeToString())
    assert decoded["events"] == [{"name": "gen_ai.choice", "timeNs": 42,
                                  "attributes": {"index": 0}}]
    body = {"resourceSpans": [{"scopeSpans": [{"spans": [{
        "traceId": bytes(range(16)).hex(), "spanId": "01" * 8, "name": "chat",
        "events": [{"name": "gen_ai.content.completion", "time_unix_nano": "7",
                    "attributes": [{"key": "gen_ai.completion",
                                    "value": {"stringValue": "[{\"content\": \"hi\"}]"}}]}],
    }]}]}]}
    (decoded,) = otlp.decode_json(json.dumps(body).encode())
    (event,) = decoded["events"]
    assert event["timeNs"] == 7
    assert event_answer(event["name"], event["attributes"], None) == "hi"
    with pytest.raises(otlp.OtlpError):
        otlp.decode_json(json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": [{
            "traceId": "00" * 16, "spanId": "01" * 8, "events": "x"}]}]}]}).encode())


def test_log_records_protobuf_event_name_field_and_attribute():
    req = ExportLogsServiceRequest()
    rl = req.resource_logs.add()
    rl.resource.attributes.append(KeyValue(key="neens.eval_run_id",
                                           value=AnyValue(string_value="ppr_1")))
    sl = rl.scope_logs.add()
    sl.scope.name = "openai"
    first = sl.log_records.add(observed_time_unix_nano=5, trace_id=bytes(range(16)),
                               span_id=bytes([2] * 8))
    first.event_name = "gen_ai.client.inference.operation.details"
    second = sl.log_records.add(time_unix_nano=9, body=AnyValue(string_value="plain"))
    second.attributes.append(KeyValue(key="event.name",
                                      value=AnyValue(string_value="gen_ai.choice")))
    a, b = otlp_signals.decode_logs_protobuf(req.SerializeToString())
    assert (a["name"], a["timeNs"], a["body"], a["spanId"]) == (
        "gen_ai.client.inference.operation.details", 5, None, "02" * 8)
    assert a["resource"] == {"neens.eval_run_id": "ppr_1"} and a["scope"] == "openai"
    assert (b["name"], b["timeNs"], b["body"], b["traceId"]) == ("gen_ai.choice", 9, "plain", "")


def test_log_records_json_and_errors():
    body = {"resource_logs": [{"scope_logs": [{"log_records": [{
        "eventName": "gen_ai.choice", "timeUnixNano": "3",
        "body": {"kvlistValue": {"values": [{"key": "message", "value": {"kvlistValue": {
            "values": [{"key": "content", "value": {"stringValue": "ok"}}]}}}]}}}]}]}]}
    (rec,) = otlp_signals.decode_logs_json(json.dumps(body).encode())
    assert rec["name"] == "gen_ai.choice" and rec["body"] == {"message": {"content": "ok"}}
    assert event_answer(rec["name"], rec["attributes"], rec["body"]) == "ok"
    assert event_answer("gen_ai.user.message", {}, {"content": "the question"}) is None
    for bad in (b"[]", b"{", json.dumps({"resourceLogs": [1]}).encode()):
        with pytest.raises(otlp.OtlpError):
            otlp_signals.decode_logs_json(bad)
    with pytest.raises(otlp.OtlpError):
        otlp_signals.decode_logs(b"{}", "text/plain")
    assert otlp_signals.check_metrics(b"{}", "application/json") == (0, otlp.JSON)
