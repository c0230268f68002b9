"""``/v1/logs`` and ``/v1/metrics`` on the real sandbox: authenticated, protobuf and JSON; log
records correlate by their resource and carry the answer when the spans do not."""

from __future__ import annotations

import json

import requests
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import (
    ExportLogsServiceRequest,
    ExportLogsServiceResponse,
)
from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import (
    ExportMetricsServiceRequest,
    ExportMetricsServiceResponse,
)
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue

from tests.helpers import db_count
from tests.sandbox.integration.support import create, wait_terminal

TRACE = "0af7651916cd43dd8448eb211c80319c"
ANSWER = "Your refund of $42.00 for order 42 has been approved."
PB = "application/x-protobuf"


def _resource(run_id: str, item_id: str) -> list[dict]:
    return [{"key": "neens.eval_run_id", "value": {"stringValue": run_id}},
            {"key": "neens.dataset_item_id", "value": {"stringValue": item_id}}]


def _span_json(run_id: str, item_id: str, span_id: str) -> dict:
    """A chat span without content (content capture set to events only)."""
    attrs = {"gen_ai.operation.name": "chat", "gen_ai.request.model": "gpt-4o-mini",
             "gen_ai.response.model": "gpt-4o-mini"}
    return {"resourceSpans": [{"resource": {"attributes": _resource(run_id, item_id)},
                               "scopeSpans": [{"spans": [{
        "traceId": TRACE, "spanId": span_id, "name": "chat gpt-4o-mini",
        "startTimeUnixNano": "1000000", "endTimeUnixNano": "9000000",
        "attributes": [{"key": k, "value": {"stringValue": v}} for k, v in attrs.items()]
        + [{"key": "gen_ai.usage.input_tokens", "value": {"intValue": "5"}},
           {"key": "gen_ai.usage.output_tokens", "value": {"intValue": "10"}}],
    }]}]}]}


def _log_protobuf(run_id: str, item_id: str, text: str) -> bytes:
    req = ExportLogsServiceRequest()
    rl = req.resource_logs.add()
    for key, value in (("neens.eval_run_id", run_id), ("neens.dataset_item_id", item_id)):
        rl.resource.attributes.append(KeyValue(key=key, value=AnyValue(string_value=value)))
    rec = rl.scope_logs.add().log_records.add(time_unix_nano=8_000_000)
    rec.event_name = "gen_ai.client.inference.operation.details"
    part = AnyValue()
    for key, value in (("type", "text"), ("content", text)):
        part.kvlist_value.values.append(KeyValue(key=key, value=AnyValue(string_value=value)))
    msg = AnyValue()
    msg.kvlist_value.values.append(KeyValue(key="role", value=AnyValue(string_value="assistant")))
    parts = AnyValue()
    parts.array_value.values.append(part)
    msg.kvlist_value.values.append(KeyValue(key="parts", value=parts))
    out = AnyValue()
    out.array_value.values.append(msg)
    rec.attributes.append(KeyValue(key="gen_ai.output.messages", value=out))
    return req.SerializeToString()


def _log_json(run_id: str, item_id: str, text: str) -> dict:
    """An older-style gen_ai.choice event: the message in the body, the name as an attribute."""
    return {"resourceLogs": [{"resource": {"attributes": _resource(run_id, item_id)},
                              "scopeLogs": [{"logRecords": [{
        "timeUnixNano": "8000000",
        "attributes": [{"key": "event.name", "value": {"stringValue": "gen_ai.choice"}}],
        "body": {"kvlistValue": {"values": [{"key": "message", "value": {"kvlistValue": {
            "values": [{"key": "content", "value": {"stringValue": text}}]}}}]}},
    }]}]}]}


def _post(sandbox, path: str, body: bytes | dict, ctype: str = PB) -> requests.Response:
    data = json.dumps(body).encode() if isinstance(body, dict) else body
    return requests.post(sandbox.url + path, data=data, timeout=10,
                         headers={**sandbox.headers, "Content-Type": ctype})


def test_answers_in_log_records_score_the_items(sandbox):
    run = create(sandbox, {"dataset_id": "ds_refunds", "dataset_version_id": "dsv_refunds_1",
                           "version_label": "v1", "name": "logs"})
    rid = run["id"]
    # it_1: the log record (protobuf) arrives before the span; it_2: after it (JSON)
    resp = _post(sandbox, "/v1/logs", _log_protobuf(rid, "it_1", ANSWER))
    assert resp.status_code == 200 and resp.headers["Content-Type"] == PB
    assert not ExportLogsServiceResponse.FromString(resp.content).HasField("partial_success")
    for item, span_id in (("it_1", "00f067aa0ba902b7"), ("it_2", "00f067aa0ba902b8")):
        resp = _post(sandbox, "/v1/traces", _span_json(rid, item, span_id), "application/json")
        assert resp.status_code == 200, resp.text
    resp = _post(sandbox, "/v1/logs", _log_json(rid, "it_2", "Refund of $19.99 approved."),
                 "application/json")
    assert resp.status_code == 200 and resp.json() == {}
    assert sandbox.post(f"/preprod-evals/{rid}/start").status_code == 200
    done = wait_terminal(sandbox, rid)
    items = {i["datasetVersionItemId"]: i for i in done["items"]}
    assert items["it_1"]["output"] == ANSWER and items["it_1"]["passed"] is True
    assert items["it_2"]["output"] == "Refund of $19.99 approved."
    assert items["it_2"]["passed"] is True
    assert items["it_1"]["model"] == "gpt-4o-mini" and items["it_1"]["steps"] == 1
    assert db_count(sandbox, "events") == 2
    # a finished run takes no more records: partial success, nothing stored
    late = _post(sandbox, "/v1/logs", _log_json(rid, "it_1", "late"), "application/json")
    assert late.status_code == 200
    assert late.json()["partialSuccess"]["rejectedLogRecords"] == "1"
    assert db_count(sandbox, "events") == 2


def test_metrics_are_accepted_and_dropped(sandbox):
    resp = _post(sandbox, "/v1/metrics", ExportMetricsServiceRequest().SerializeToString())
    assert resp.status_code == 200
    ExportMetricsServiceResponse.FromString(resp.content)
    body = {"resourceMetrics": [{"scopeMetrics": [{"metrics": [{"name": "gen_ai.client"}]}]}]}
    resp = _post(sandbox, "/v1/metrics", body, "application/json")
    assert resp.status_code == 200 and resp.json() == {}


def test_logs_and_metrics_need_the_key_and_a_valid_body(sandbox):
    for path in ("/v1/logs", "/v1/metrics"):
        resp = requests.post(sandbox.url + path, data=b"{}", timeout=10,
                             headers={"Content-Type": "application/json"})
        assert resp.status_code == 401, path
        bad = requests.post(sandbox.url + path, data=b"\xff\x00garbage", timeout=10,
                            headers={**sandbox.headers, "Content-Type": PB})
        assert bad.status_code == 400 and bad.json()["detail"], path
        wrong = _post(sandbox, path, {"resourceLogs": 3, "resourceMetrics": 3},
                      "application/json")
        assert wrong.status_code == 400, path
    assert db_count(sandbox, "events") == 0
