"""A refund agent on Pydantic AI, traced with OpenTelemetry (no Logfire needed). Reads the
question on stdin, prints the answer.

``AGENT_OUTPUT=structured`` gives the agent a structured ``output_type``: the model then answers
by calling Pydantic AI's ``final_result`` tool, and the answer travels in its arguments (and in
the run span's ``final_result``), not as text.
"""

from __future__ import annotations

import os
import sys

from opentelemetry import trace
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor
from pydantic import BaseModel
from pydantic_ai import Agent
from pydantic_ai.models.openai import OpenAIChatModel

# OTLP over HTTP to OTEL_EXPORTER_OTLP_ENDPOINT/v1/traces; the resource picks up
# OTEL_RESOURCE_ATTRIBUTES (the Neens run and item ids).
tracer_provider = TracerProvider()
tracer_provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
trace.set_tracer_provider(tracer_provider)
# Every agent records its spans (model calls, tools, the run) with message content.
Agent.instrument_all()

SYSTEM = "You are a refund assistant. State the refund amount as $X.XX."


class Refund(BaseModel):
    """The structured answer."""

    answer: str
    approved: bool


def main() -> int:
    question = sys.stdin.read().strip() or os.environ.get("NEENS_ITEM_INPUT", "")
    model = OpenAIChatModel(os.environ.get("NEENS_EVAL_MODEL", "gpt-4o-mini"))
    try:
        if os.environ.get("AGENT_OUTPUT") == "structured":
            agent = Agent(model, instructions=SYSTEM, output_type=Refund)
            print(agent.run_sync(question).output.answer)
        else:
            agent = Agent(model, instructions=SYSTEM)
            print(agent.run_sync(question).output)
    finally:
        tracer_provider.shutdown()  # flush: nothing is sent otherwise
    return 0


if __name__ == "__main__":
    sys.exit(main())
