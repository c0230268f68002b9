"""Decode OTLP/HTTP trace exports (protobuf or JSON) into plain span dicts, and encode the
export response in the request's encoding. Log and metric exports: ``otlp_signals``.

A decoded span is ``{traceId, spanId, parentSpanId, name, startNs, endNs, attributes,
resource, scope, events}``: ids as lower-case hex ("" when absent), times as integers (ns),
attribute values as Python values (str, int, float, bool, list, dict); ``events`` are the
span events, ``[{name, timeNs, attributes}]``.
"""

from __future__ import annotations

import base64
import json
import re
from typing import Any

PROTOBUF = "application/x-protobuf"
JSON = "application/json"


_HEX = re.compile(r"[0-9a-fA-F]+")


class OtlpError(ValueError):
    """The body is not a valid OTLP trace export."""


# -- protobuf -----------------------------------------------------------------------------
def pb_value(value: Any) -> Any:
    kind = value.WhichOneof("value")
    if kind is None:
        return None
    if kind == "array_value":
        return [pb_value(v) for v in value.array_value.values]
    if kind == "kvlist_value":
        return {kv.key: pb_value(kv.value) for kv in value.kvlist_value.values}
    if kind == "bytes_value":
        return value.bytes_value.hex()
    return getattr(value, kind)


def pb_attrs(attrs: Any) -> dict[str, Any]:
    return {kv.key: pb_value(kv.value) for kv in attrs}


def decode_protobuf(body: bytes) -> list[dict[str, Any]]:
    from google.protobuf.message import DecodeError
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
        ExportTraceServiceRequest,
    )

    req = ExportTraceServiceRequest()
    try:
        req.ParseFromString(body)
    except (DecodeError, ValueError, RuntimeError) as exc:
        raise OtlpError(f"could not decode the OTLP protobuf body ({exc})") from None
    spans = []
    for rs in req.resource_spans:
        resource = pb_attrs(rs.resource.attributes)
        for ss in rs.scope_spans:
            for sp in ss.spans:
                if len(sp.trace_id) != 16 or len(sp.span_id) != 8:
                    raise OtlpError("a span has an invalid trace_id or span_id")
                spans.append({
                    "traceId": sp.trace_id.hex(),
                    "spanId": sp.span_id.hex(),
                    "parentSpanId": sp.parent_span_id.hex(),
                    "name": sp.name,
                    "startNs": int(sp.start_time_unix_nano),
                    "endNs": int(sp.end_time_unix_nano),
                    "attributes": pb_attrs(sp.attributes),
                    "resource": resource,
                    "scope": ss.scope.name,
                    "events": [{"name": ev.name, "timeNs": int(ev.time_unix_nano),
                                "attributes": pb_attrs(ev.attributes)} for ev in sp.events],
                })
    return spans


# -- JSON (OTLP/JSON: lowerCamelCase keys, hex ids; snake_case tolerated) ------------------
_SNAKE: dict[str, str] = {}  # lowerCamelCase key -> its snake_case spelling


def get_key(obj: dict[str, Any], camel: str, default: Any = None) -> Any:
    if camel in obj:
        return obj[camel]
    snake = _SNAKE.get(camel)
    if snake is None:
        snake = _SNAKE[camel] = "".join("_" + c.lower() if c.isupper() else c for c in camel)
    return obj.get(snake, default)


def json_value(value: Any) -> Any:
    if not isinstance(value, dict):
        raise OtlpError("an attribute value must be an AnyValue object")
    if len(value) == 1 and "stringValue" in value:  # the common case, the same answer
        got = value["stringValue"]
        if got is not None:
            return got
    for key in ("stringValue", "boolValue", "doubleValue"):
        got = get_key(value, key)
        if got is not None:
            return float(got) if key == "doubleValue" else got
    got = get_key(value, "intValue")
    if got is not None:
        try:
            return int(got)
        except (TypeError, ValueError):
            raise OtlpError("intValue is not an integer") from None
    arr = get_key(value, "arrayValue")
    if arr is not None:
        return [json_value(v) for v in (arr.get("values") or [])]
    kvl = get_key(value, "kvlistValue")
    if kvl is not None:
        return json_attrs(kvl.get("values") or [])
    got = get_key(value, "bytesValue")
    if got is not None:
        return base64.b64decode(got).hex()
    return None


def json_attrs(attrs: Any) -> dict[str, Any]:
    if attrs is None:
        return {}
    if not isinstance(attrs, list):
        raise OtlpError("attributes must be a list of {key, value}")
    out = {}
    for kv in attrs:
        if not isinstance(kv, dict) or not isinstance(kv.get("key"), str):
            raise OtlpError("an attribute must be {key, value}")
        out[kv["key"]] = json_value(kv.get("value") or {})
    return out


def json_id(value: Any, size: int, what: str, required: bool) -> str:
    if value in (None, ""):
        if required:
            raise OtlpError(f"a span has no {what}")
        return ""
    if not isinstance(value, str):
        raise OtlpError(f"{what} must be a hex string")
    if len(value) == size * 2 and _HEX.fullmatch(value):
        return value.lower()
    try:  # protobuf's canonical JSON mapping uses base64 for bytes
        raw = base64.b64decode(value, validate=True)
    except (ValueError, TypeError):
        raw = b""
    if len(raw) == size:
        return raw.hex()
    raise OtlpError(f"{what} is not {size} bytes of hex")


def nanos(value: Any) -> int:
    if value in (None, ""):
        return 0
    try:
        return int(value)
    except (TypeError, ValueError):
        raise OtlpError("a span time is not an integer (nanoseconds)") from None


def _json_events(events: Any) -> list[dict[str, Any]]:
    if events is None:
        return []
    if not isinstance(events, list) or not all(isinstance(e, dict) for e in events):
        raise OtlpError("a span's events must be a list of objects")
    return [{"name": str(e.get("name") or ""), "timeNs": nanos(get_key(e, "timeUnixNano")),
             "attributes": json_attrs(e.get("attributes"))} for e in events]


def load_json(body: bytes) -> dict[str, Any]:
    """The body as a JSON object (OtlpError otherwise)."""
    try:
        data = json.loads(body.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise OtlpError(f"could not decode the OTLP JSON body ({exc})") from None
    if not isinstance(data, dict):
        raise OtlpError("the OTLP JSON body must be an object")
    return data


def decode_json(body: bytes) -> list[dict[str, Any]]:
    data = load_json(body)
    spans = []
    resource_spans = get_key(data, "resourceSpans") or []
    if not isinstance(resource_spans, list):
        raise OtlpError("resourceSpans must be a list")
    for rs in resource_spans:
        if not isinstance(rs, dict):
            raise OtlpError("each resourceSpans entry must be an object")
        resource = json_attrs((rs.get("resource") or {}).get("attributes"))
        for ss in get_key(rs, "scopeSpans") or []:
            if not isinstance(ss, dict):
                raise OtlpError("each scopeSpans entry must be an object")
            scope = (ss.get("scope") or {}).get("name") or ""
            for sp in ss.get("spans") or []:
                if not isinstance(sp, dict):
                    raise OtlpError("each span must be an object")
                spans.append({
                    "traceId": json_id(get_key(sp, "traceId"), 16, "traceId", True),
                    "spanId": json_id(get_key(sp, "spanId"), 8, "spanId", True),
                    "parentSpanId": json_id(get_key(sp, "parentSpanId"), 8, "parentSpanId", False),
                    "name": str(sp.get("name") or ""),
                    "startNs": nanos(get_key(sp, "startTimeUnixNano")),
                    "endNs": nanos(get_key(sp, "endTimeUnixNano")),
                    "attributes": json_attrs(sp.get("attributes")),
                    "resource": resource,
                    "scope": str(scope),
                    "events": _json_events(sp.get("events")),
                })
    return spans


def decode(body: bytes, content_type: str) -> tuple[list[dict[str, Any]], str]:
    """Decode by content type; returns (spans, response content type)."""
    if content_type in ("application/json", "text/json"):
        return decode_json(body), JSON
    if content_type in ("application/x-protobuf", "application/protobuf", ""):
        return decode_protobuf(body), PROTOBUF
    raise OtlpError(f"unsupported content type '{content_type}' (use protobuf or JSON)")


def encode_response(content_type: str, rejected: int = 0, message: str = "") -> bytes:
    """An ExportTraceServiceResponse (empty unless spans were rejected)."""
    if content_type == JSON:
        body: dict[str, Any] = {}
        if rejected:
            body["partialSuccess"] = {"rejectedSpans": str(rejected), "errorMessage": message}
        return json.dumps(body).encode()
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
        ExportTraceServiceResponse,
    )

    resp = ExportTraceServiceResponse()
    if rejected:
        resp.partial_success.rejected_spans = rejected
        resp.partial_success.error_message = message
    return resp.SerializeToString()
