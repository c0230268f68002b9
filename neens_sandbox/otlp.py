"""Decode OTLP/HTTP trace exports (protobuf or JSON) into plain span dicts, and encode the
export response in the request's encoding.

A decoded span is ``{traceId, spanId, parentSpanId, name, startNs, endNs, attributes,
resource, scope}``: ids as lower-case hex ("" when absent), times as integers (ns),
attribute values as Python values (str, int, float, bool, list, dict).
"""

from __future__ import annotations

import base64
import json
from typing import Any

PROTOBUF = "application/x-protobuf"
JSON = "application/json"


class OtlpError(ValueError):
    """The body is not a valid OTLP trace export."""


# -- protobuf -----------------------------------------------------------------------------
def _pb_value(value: Any) -> Any:
    kind = value.WhichOneof("value")
    if kind is None:
        return None
    if kind == "array_value":
        return [_pb_value(v) for v in value.array_value.values]
    if kind == "kvlist_value":
        return {kv.key: _pb_value(kv.value) for kv in value.kvlist_value.values}
    if kind == "bytes_value":
        return value.bytes_value.hex()
    return getattr(value, kind)


def _pb_attrs(attrs: Any) -> dict[str, Any]:
    return {kv.key: _pb_value(kv.value) for kv in attrs}


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
        resource = _pb_attrs(rs.resource.attributes)
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
                    "attributes": _pb_attrs(sp.attributes),
                    "resource": resource,
                    "scope": ss.scope.name,
                })
    return spans


# -- JSON (OTLP/JSON: lowerCamelCase keys, hex ids; snake_case tolerated) ------------------
def _get(obj: dict[str, Any], camel: str, default: Any = None) -> Any:
    if camel in obj:
        return obj[camel]
    snake = "".join("_" + c.lower() if c.isupper() else c for c in camel)
    return obj.get(snake, default)


def _json_value(value: Any) -> Any:
    if not isinstance(value, dict):
        raise OtlpError("an attribute value must be an AnyValue object")
    for key in ("stringValue", "boolValue", "doubleValue"):
        got = _get(value, key)
        if got is not None:
            return float(got) if key == "doubleValue" else got
    got = _get(value, "intValue")
    if got is not None:
        try:
            return int(got)
        except (TypeError, ValueError):
            raise OtlpError("intValue is not an integer") from None
    arr = _get(value, "arrayValue")
    if arr is not None:
        return [_json_value(v) for v in (arr.get("values") or [])]
    kvl = _get(value, "kvlistValue")
    if kvl is not None:
        return _json_attrs(kvl.get("values") or [])
    got = _get(value, "bytesValue")
    if got is not None:
        return base64.b64decode(got).hex()
    return None


def _json_attrs(attrs: Any) -> dict[str, Any]:
    if attrs is None:
        return {}
    if not isinstance(attrs, list):
        raise OtlpError("attributes must be a list of {key, value}")
    out = {}
    for kv in attrs:
        if not isinstance(kv, dict) or not isinstance(kv.get("key"), str):
            raise OtlpError("an attribute must be {key, value}")
        out[kv["key"]] = _json_value(kv.get("value") or {})
    return out


def _json_id(value: Any, size: int, what: str, required: bool) -> str:
    if value in (None, ""):
        if required:
            raise OtlpError(f"a span has no {what}")
        return ""
    if not isinstance(value, str):
        raise OtlpError(f"{what} must be a hex string")
    text = value.lower()
    if len(text) == size * 2 and all(c in "0123456789abcdef" for c in text):
        return text
    try:  # protobuf's canonical JSON mapping uses base64 for bytes
        raw = base64.b64decode(value, validate=True)
    except (ValueError, TypeError):
        raw = b""
    if len(raw) == size:
        return raw.hex()
    raise OtlpError(f"{what} is not {size} bytes of hex")


def _nanos(value: Any) -> int:
    if value in (None, ""):
        return 0
    try:
        return int(value)
    except (TypeError, ValueError):
        raise OtlpError("a span time is not an integer (nanoseconds)") from None


def decode_json(body: bytes) -> list[dict[str, Any]]:
    try:
        data = json.loads(body.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise OtlpError(f"could not decode the OTLP JSON body ({exc})") from None
    if not isinstance(data, dict):
        raise OtlpError("the OTLP JSON body must be an object")
    spans = []
    resource_spans = _get(data, "resourceSpans") or []
    if not isinstance(resource_spans, list):
        raise OtlpError("resourceSpans must be a list")
    for rs in resource_spans:
        if not isinstance(rs, dict):
            raise OtlpError("each resourceSpans entry must be an object")
        resource = _json_attrs((rs.get("resource") or {}).get("attributes"))
        for ss in _get(rs, "scopeSpans") or []:
            if not isinstance(ss, dict):
                raise OtlpError("each scopeSpans entry must be an object")
            scope = (ss.get("scope") or {}).get("name") or ""
            for sp in ss.get("spans") or []:
                if not isinstance(sp, dict):
                    raise OtlpError("each span must be an object")
                spans.append({
                    "traceId": _json_id(_get(sp, "traceId"), 16, "traceId", True),
                    "spanId": _json_id(_get(sp, "spanId"), 8, "spanId", True),
                    "parentSpanId": _json_id(_get(sp, "parentSpanId"), 8, "parentSpanId", False),
                    "name": str(sp.get("name") or ""),
                    "startNs": _nanos(_get(sp, "startTimeUnixNano")),
                    "endNs": _nanos(_get(sp, "endTimeUnixNano")),
                    "attributes": _json_attrs(sp.get("attributes")),
                    "resource": resource,
                    "scope": str(scope),
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
