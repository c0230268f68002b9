#!/usr/bin/env python3
"""Example agent for Neens pre-prod evals: reads a prompt on stdin, prints an answer, and
records OpenTelemetry GenAI spans.

Configured ONLY by the standard OpenTelemetry variables:
  OTEL_EXPORTER_OTLP_ENDPOINT / OTEL_EXPORTER_OTLP_TRACES_ENDPOINT   where to export
  OTEL_EXPORTER_OTLP_HEADERS (e.g. "Authorization=Bearer nk_live_...")
  OTEL_EXPORTER_OTLP_PROTOCOL  http/protobuf (default) or http/json
  OTEL_RESOURCE_ATTRIBUTES     carries neens.eval_run_id, neens.dataset_item_id, ...
  OTEL_SERVICE_NAME, OTEL_BSP_SCHEDULE_DELAY, OTEL_EXPORTER_OTLP_TIMEOUT
plus NEENS_EVAL_MODEL (the model to "call"; default gpt-4o-mini) and, for tests,
AGENT_MODE = good | bad | leaky | slow | hang | crash | silent | ignore-model,
AGENT_SLOW_S (slow mode, default 2), AGENT_LOG (append one line per invocation).

Spans: a root ``invoke_agent`` span (input.value, output.value), an ``execute_tool`` span when
the prompt names an order, and a ``chat`` LLM span with gen_ai.request.model,
gen_ai.response.model, gen_ai.usage.input_tokens/output_tokens and gen_ai.output.messages.
Everything is force-flushed before exit. The installed OTLP exporter speaks protobuf only, so
http/json uses the small hand-written exporter below (OTLP/JSON from the SDK's span data).
"""

from __future__ import annotations

import json
import os
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Sequence
from pathlib import Path
from typing import Any
from urllib.parse import unquote

sys.path.insert(0, str(Path(__file__).resolve().parent))

from answers import ORDER, answer, usage

DEFAULT_MODEL = "gpt-4o-mini"


def _env(*names: str, default: str = "") -> str:
    for name in names:
        value = os.environ.get(name, "").strip()
        if value:
            return value
    return default


def traces_endpoint() -> str:
    explicit = _env("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
    if explicit:
        return explicit
    base = _env("OTEL_EXPORTER_OTLP_ENDPOINT", default="http://localhost:4318")
    return base.rstrip("/") + "/v1/traces"


def otlp_headers() -> dict[str, str]:
    raw = _env("OTEL_EXPORTER_OTLP_TRACES_HEADERS", "OTEL_EXPORTER_OTLP_HEADERS")
    headers = {}
    for part in raw.split(","):
        key, sep, value = part.partition("=")
        if sep and key.strip():
            headers[unquote(key.strip())] = unquote(value.strip())
    return headers


def _any_value(value: Any) -> dict[str, Any]:
    if isinstance(value, bool):
        return {"boolValue": value}
    if isinstance(value, int):
        return {"intValue": str(value)}
    if isinstance(value, float):
        return {"doubleValue": value}
    if isinstance(value, (list, tuple)):
        return {"arrayValue": {"values": [_any_value(v) for v in value]}}
    return {"stringValue": str(value)}


def _attrs(mapping: Any) -> list[dict[str, Any]]:
    return [{"key": k, "value": _any_value(v)} for k, v in (mapping or {}).items()]


def _load_sdk() -> Any:
    from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult

    class JsonSpanExporter(SpanExporter):
        """OTLP/HTTP JSON exporter built on the SDK's ReadableSpan data."""

        def __init__(self) -> None:
            self.endpoint = traces_endpoint()
            self.headers = {"Content-Type": "application/json", **otlp_headers()}
            self.timeout = float(_env("OTEL_EXPORTER_OTLP_TRACES_TIMEOUT",
                                      "OTEL_EXPORTER_OTLP_TIMEOUT", default="10"))

        def export(self, spans: Sequence[Any]) -> Any:
            by_resource: dict[int, tuple[Any, list[Any]]] = {}
            for span in spans:
                by_resource.setdefault(id(span.resource), (span.resource, []))[1].append(span)
            body = {"resourceSpans": [{
                "resource": {"attributes": _attrs(resource.attributes)},
                "scopeSpans": [{
                    "scope": {"name": "neens-example-agent"},
                    "spans": [self._span(s) for s in group],
                }],
            } for resource, group in by_resource.values()]}
            data = json.dumps(body).encode()
            request = urllib.request.Request(self.endpoint, data=data, headers=self.headers,
                                             method="POST")
            try:
                with urllib.request.urlopen(request, timeout=self.timeout) as resp:
                    resp.read()
            except (urllib.error.URLError, OSError) as exc:
                print(f"agent: OTLP/JSON export failed: {exc}", file=sys.stderr)
                return SpanExportResult.FAILURE
            return SpanExportResult.SUCCESS

        @staticmethod
        def _span(span: Any) -> dict[str, Any]:
            ctx = span.get_span_context()
            out = {
                "traceId": f"{ctx.trace_id:032x}", "spanId": f"{ctx.span_id:016x}",
                "name": span.name, "kind": int(span.kind.value) + 1,
                "startTimeUnixNano": str(span.start_time),
                "endTimeUnixNano": str(span.end_time),
                "attributes": _attrs(span.attributes),
            }
            if span.parent is not None:
                out["parentSpanId"] = f"{span.parent.span_id:016x}"
            return out

        def shutdown(self) -> None:
            return None

        def force_flush(self, timeout_millis: int = 30000) -> bool:
            return True

    return JsonSpanExporter


def make_provider() -> Any:
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor

    protocol = _env("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_EXPORTER_OTLP_PROTOCOL",
                    default="http/protobuf")
    if protocol == "http/json":
        exporter = _load_sdk()()
    elif protocol == "http/protobuf":
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

        exporter = OTLPSpanExporter()
    else:
        print(f"agent: unsupported OTEL_EXPORTER_OTLP_PROTOCOL {protocol!r}", file=sys.stderr)
        sys.exit(2)
    resource = Resource.create({"service.name": _env("OTEL_SERVICE_NAME",
                                                     default="refund-agent")})
    provider = TracerProvider(resource=resource)
    provider.add_span_processor(BatchSpanProcessor(exporter))
    return provider


def main() -> int:
    mode = _env("AGENT_MODE", default="good")
    prompt = sys.stdin.read() if not sys.stdin.isatty() else ""
    if not prompt.strip():
        prompt = os.environ.get("NEENS_ITEM_INPUT", "")
    log = _env("AGENT_LOG")
    if log:
        with open(log, "a", encoding="utf-8") as fh:
            fh.write(f"{os.environ.get('NEENS_DATASET_ITEM_ID', '')}\t{mode}\n")
    if mode == "crash":
        print("agent: crashing on purpose (AGENT_MODE=crash)", file=sys.stderr)
        return 3
    model = DEFAULT_MODEL if mode == "ignore-model" else _env("NEENS_EVAL_MODEL",
                                                              default=DEFAULT_MODEL)
    text = answer(prompt, mode)
    if mode == "silent":
        print(text)
        return 0
    provider = make_provider()
    tracer = provider.get_tracer("neens-example-agent")
    with tracer.start_as_current_span("invoke_agent refund-agent") as root:
        root.set_attribute("gen_ai.operation.name", "invoke_agent")
        root.set_attribute("gen_ai.agent.name", "refund-agent")
        root.set_attribute("input.value", prompt)
        order = ORDER.search(prompt)
        if order:
            with tracer.start_as_current_span("execute_tool lookup_order") as tool:
                tool.set_attribute("gen_ai.operation.name", "execute_tool")
                tool.set_attribute("gen_ai.tool.name", "lookup_order")
                tool.set_attribute("order.id", order.group(1))
        with tracer.start_as_current_span(f"chat {model}") as llm:
            in_tok, out_tok = usage(prompt, text)
            llm.set_attribute("gen_ai.operation.name", "chat")
            llm.set_attribute("gen_ai.provider.name", "example")
            llm.set_attribute("gen_ai.request.model", model)
            llm.set_attribute("gen_ai.response.model", model)
            llm.set_attribute("gen_ai.usage.input_tokens", in_tok)
            llm.set_attribute("gen_ai.usage.output_tokens", out_tok)
            llm.set_attribute("gen_ai.output.messages", json.dumps([{
                "role": "assistant", "parts": [{"type": "text", "content": text}],
                "finish_reason": "stop"}]))
            if mode == "slow":
                time.sleep(float(_env("AGENT_SLOW_S", default="2")))
            if mode == "hang":
                time.sleep(float(_env("AGENT_HANG_S", default="3600")))
        root.set_attribute("output.value", text)
    provider.force_flush(timeout_millis=15000)
    provider.shutdown()
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
