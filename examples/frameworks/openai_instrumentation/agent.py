"""A refund agent on the OpenAI SDK, traced by the official OpenTelemetry instrumentation
(opentelemetry-instrumentation-openai-v2). Reads the question on stdin, prints the answer.

Run it under Neens: ``neens eval run ... -- python agent.py``. The model is whatever
``OPENAI_BASE_URL`` / ``OPENAI_API_KEY`` point at; ``NEENS_EVAL_MODEL`` picks the model name.
"""

from __future__ import annotations

import os
import sys

# The settings that matter for Neens (see README.md): the newest GenAI conventions, and where
# the content goes. The instrumentation accepts only span_only, event_only, span_and_event and
# no_content: "true" silently captures nothing. event_only puts the answer in log records.
os.environ.setdefault("OTEL_SEMCONV_STABILITY_OPT_IN", "gen_ai_latest_experimental")
os.environ.setdefault("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "span_only")

from openai import OpenAI
from opentelemetry import _logs, metrics, trace
from opentelemetry.exporter.otlp.proto.http._log_exporter import OTLPLogExporter
from opentelemetry.exporter.otlp.proto.http.metric_exporter import OTLPMetricExporter
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.instrumentation.openai_v2 import OpenAIInstrumentor
from opentelemetry.sdk._logs import LoggerProvider
from opentelemetry.sdk._logs.export import BatchLogRecordProcessor
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import PeriodicExportingMetricReader
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor

# OTLP over HTTP to OTEL_EXPORTER_OTLP_ENDPOINT (+ /v1/traces, /v1/logs, /v1/metrics); the
# resource picks up OTEL_RESOURCE_ATTRIBUTES, which carries the Neens run and item ids.
tracer_provider = TracerProvider()
tracer_provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
trace.set_tracer_provider(tracer_provider)
logger_provider = LoggerProvider()
logger_provider.add_log_record_processor(BatchLogRecordProcessor(OTLPLogExporter()))
_logs.set_logger_provider(logger_provider)
meter_provider = MeterProvider(metric_readers=[PeriodicExportingMetricReader(OTLPMetricExporter())])
metrics.set_meter_provider(meter_provider)
OpenAIInstrumentor().instrument()

SYSTEM = "You are a refund assistant. State the refund amount as $X.XX."


def main() -> int:
    question = sys.stdin.read().strip() or os.environ.get("NEENS_ITEM_INPUT", "")
    client = OpenAI()
    try:
        reply = client.chat.completions.create(
            model=os.environ.get("NEENS_EVAL_MODEL", "gpt-4o-mini"),
            messages=[{"role": "system", "content": SYSTEM},
                      {"role": "user", "content": question}],
        )
        print(reply.choices[0].message.content)
    finally:
        # Nothing is sent unless the providers flush before the process exits. Logs first:
        # the content is there before the span that completes the item's trace.
        logger_provider.shutdown()
        tracer_provider.shutdown()
        meter_provider.shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())
