"""Decode OTLP/HTTP log exports and accept metric exports (protobuf or JSON); encode the
export responses in the request's encoding.

A decoded log record is ``{traceId, spanId, timeNs, name, body, attributes, resource,
scope}``: ids as lower-case hex ("" when absent), ``name`` the record's event name (the
``event_name`` field, else its ``event.name`` attribute; "" for a plain log line), ``body`` and
attribute values as Python values. GenAI instrumentations send the content of model calls as
such events (``gen_ai.client.inference.operation.details``, ``gen_ai.choice``).

Metrics are decoded only to check that the export is well formed: nothing reads them, but an
exporter that gets a 404 logs an export error at every exit.
"""

from __future__ import annotations

from typing import Any

from neens_sandbox.otlp import (
    JSON,
    PROTOBUF,
    OtlpError,
    get_key,
    json_attrs,
    json_id,
    json_value,
    load_json,
    nanos,
    pb_attrs,
    pb_value,
)


def _event_name(explicit: str, attributes: dict[str, Any]) -> str:
    if explicit:
        return explicit
    legacy = attributes.get("event.name")
    return str(legacy) if legacy else ""


def decode_logs_protobuf(body: bytes) -> list[dict[str, Any]]:
    from google.protobuf.message import DecodeError
    from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest

    req = ExportLogsServiceRequest()
    try:
        req.ParseFromString(body)
    except (DecodeError, ValueError, RuntimeError) as exc:
        raise OtlpError(f"could not decode the OTLP protobuf body ({exc})") from None
    records = []
    for rl in req.resource_logs:
        resource = pb_attrs(rl.resource.attributes)
        for sl in rl.scope_logs:
            for rec in sl.log_records:
                if len(rec.trace_id) not in (0, 16) or len(rec.span_id) not in (0, 8):
                    raise OtlpError("a log record has an invalid trace_id or span_id")
                attributes = pb_attrs(rec.attributes)
                records.append({
                    "traceId": rec.trace_id.hex(),
                    "spanId": rec.span_id.hex(),
                    "timeNs": int(rec.time_unix_nano or rec.observed_time_unix_nano),
                    "name": _event_name(getattr(rec, "event_name", ""), attributes),
                    "body": pb_value(rec.body) if rec.HasField("body") else None,
                    "attributes": attributes,
                    "resource": resource,
                    "scope": sl.scope.name,
                })
    return records


def _list(obj: dict[str, Any], key: str, what: str) -> list[Any]:
    value = get_key(obj, key) or []
    if not isinstance(value, list) or not all(isinstance(v, dict) for v in value):
        raise OtlpError(f"{what} must be a list of objects")
    return value


def decode_logs_json(body: bytes) -> list[dict[str, Any]]:
    data = load_json(body)
    records = []
    for rl in _list(data, "resourceLogs", "resourceLogs"):
        resource = json_attrs((rl.get("resource") or {}).get("attributes"))
        for sl in _list(rl, "scopeLogs", "scopeLogs"):
            scope = str((sl.get("scope") or {}).get("name") or "")
            for rec in _list(sl, "logRecords", "logRecords"):
                attributes = json_attrs(rec.get("attributes"))
                raw_body = rec.get("body")
                records.append({
                    "traceId": json_id(get_key(rec, "traceId"), 16, "traceId", False),
                    "spanId": json_id(get_key(rec, "spanId"), 8, "spanId", False),
                    "timeNs": nanos(get_key(rec, "timeUnixNano"))
                    or nanos(get_key(rec, "observedTimeUnixNano")),
                    "name": _event_name(str(get_key(rec, "eventName") or ""), attributes),
                    "body": json_value(raw_body) if raw_body is not None else None,
                    "attributes": attributes,
                    "resource": resource,
                    "scope": scope,
                })
    return records


def decode_logs(body: bytes, content_type: str) -> tuple[list[dict[str, Any]], str]:
    """Decode a log export by content type; returns (records, response content type)."""
    if content_type in ("application/json", "text/json"):
        return decode_logs_json(body), JSON
    if content_type in ("application/x-protobuf", "application/protobuf", ""):
        return decode_logs_protobuf(body), PROTOBUF
    raise OtlpError(f"unsupported content type '{content_type}' (use protobuf or JSON)")


def check_metrics(body: bytes, content_type: str) -> tuple[int, str]:
    """Decode a metric export (to reject a malformed one); returns (data points, type)."""
    if content_type in ("application/json", "text/json"):
        data = load_json(body)
        points = 0
        for rm in _list(data, "resourceMetrics", "resourceMetrics"):
            for sm in _list(rm, "scopeMetrics", "scopeMetrics"):
                points += len(_list(sm, "metrics", "metrics"))
        return points, JSON
    if content_type not in ("application/x-protobuf", "application/protobuf", ""):
        raise OtlpError(f"unsupported content type '{content_type}' (use protobuf or JSON)")
    from google.protobuf.message import DecodeError
    from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import (
        ExportMetricsServiceRequest,
    )

    req = ExportMetricsServiceRequest()
    try:
        req.ParseFromString(body)
    except (DecodeError, ValueError, RuntimeError) as exc:
        raise OtlpError(f"could not decode the OTLP protobuf body ({exc})") from None
    return sum(len(sm.metrics) for rm in req.resource_metrics for sm in rm.scope_metrics), \
        PROTOBUF


def encode_logs_response(content_type: str, rejected: int = 0, message: str = "") -> bytes:
    """An ExportLogsServiceResponse (empty unless records were rejected)."""
    if content_type == JSON:
        import json

        body: dict[str, Any] = {}
        if rejected:
            body["partialSuccess"] = {"rejectedLogRecords": str(rejected),
                                      "errorMessage": message}
        return json.dumps(body).encode()
    from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceResponse

    resp = ExportLogsServiceResponse()
    if rejected:
        resp.partial_success.rejected_log_records = rejected
        resp.partial_success.error_message = message
    return resp.SerializeToString()


def encode_metrics_response(content_type: str) -> bytes:
    """An empty ExportMetricsServiceResponse (every data point accepted)."""
    if content_type == JSON:
        return b"{}"
    from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import (
        ExportMetricsServiceResponse,
    )

    return ExportMetricsServiceResponse().SerializeToString()
