"""A refund agent on the Anthropic SDK, traced by the SDK itself: from 2.x every API call gets
a span (``anthropic.messages.create``, GenAI attributes) through the global tracer provider.
Reads the question on stdin, prints the answer.

Run it under Neens: ``neens eval run ... -- python agent.py``. The model is whatever
``ANTHROPIC_BASE_URL`` / ``ANTHROPIC_API_KEY`` point at; ``NEENS_EVAL_MODEL`` picks the model.
"""

from __future__ import annotations

import os
import sys

# The setting that matters for Neens (see README.md): the SDK's default content mode,
# metadata_only, leaves the answer out of the span; "content" puts it in
# gen_ai.output.messages. Read when the client is made.
os.environ.setdefault("ANTHROPIC_OPEN_TELEMETRY_TRACES_CONTENT_MODE", "content")

import anthropic
from opentelemetry import trace
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor

# OTLP over HTTP to OTEL_EXPORTER_OTLP_ENDPOINT (+ /v1/traces); the resource picks up
# OTEL_RESOURCE_ATTRIBUTES, which carries the Neens run and item ids. Set before the client.
tracer_provider = TracerProvider()
tracer_provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
trace.set_tracer_provider(tracer_provider)

SYSTEM = "You are a refund assistant. State the refund amount as $X.XX."


def main() -> int:
    question = sys.stdin.read().strip() or os.environ.get("NEENS_ITEM_INPUT", "")
    client = anthropic.Anthropic()
    try:
        message = client.messages.create(
            model=os.environ.get("NEENS_EVAL_MODEL", "claude-haiku-4-5"),
            max_tokens=512, system=SYSTEM,
            messages=[{"role": "user", "content": question}],
        )
        print("".join(block.text for block in message.content if block.type == "text"))
    finally:
        tracer_provider.shutdown()  # nothing is sent unless the provider flushes first
    return 0


if __name__ == "__main__":
    sys.exit(main())
