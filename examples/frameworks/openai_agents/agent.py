"""A refund agent on the OpenAI Agents SDK, traced by OpenInference. Reads the question on
stdin, prints the answer.
"""

from __future__ import annotations

import os
import sys

from agents import Agent, Runner, set_default_openai_api
from openinference.instrumentation.openai_agents import OpenAIAgentsInstrumentor
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor

# OTLP over HTTP to OTEL_EXPORTER_OTLP_ENDPOINT/v1/traces (phoenix.otel.register() would need
# the full .../v1/traces URL: without the path it switches to gRPC on :4317). The resource
# picks up OTEL_RESOURCE_ATTRIBUTES (the Neens run and item ids).
tracer_provider = TracerProvider()
tracer_provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
# exclusive_processor: OpenInference replaces the SDK's own trace export (to OpenAI's
# platform), so traces go only where OTEL_* says.
OpenAIAgentsInstrumentor().instrument(tracer_provider=tracer_provider, exclusive_processor=True)
# Chat Completions, which any OpenAI-compatible endpoint (OPENAI_BASE_URL) serves.
set_default_openai_api("chat_completions")

SYSTEM = "You are a refund assistant. State the refund amount as $X.XX."


def main() -> int:
    question = sys.stdin.read().strip() or os.environ.get("NEENS_ITEM_INPUT", "")
    agent = Agent(name="Refunds", instructions=SYSTEM,
                  model=os.environ.get("NEENS_EVAL_MODEL", "gpt-4o-mini"))
    try:
        print(Runner.run_sync(agent, question).final_output)
    finally:
        tracer_provider.shutdown()  # flush: nothing is sent otherwise
    return 0


if __name__ == "__main__":
    sys.exit(main())
