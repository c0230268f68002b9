"""A one-agent, one-task CrewAI refund crew, traced by OpenInference's CrewAI instrumentation.
Reads the question on stdin, prints the answer.
"""

from __future__ import annotations

import os
import sys

# CrewAI's own anonymous telemetry and its cloud tracing each export to CrewAI's servers: both
# off, before crewai is imported. (OTEL_SDK_DISABLED would also turn off CrewAI's telemetry,
# but it disables this program's OpenTelemetry SDK too, and with it the traces Neens reads.)
os.environ.setdefault("CREWAI_DISABLE_TELEMETRY", "true")
os.environ.setdefault("CREWAI_TRACING_ENABLED", "false")

from crewai import LLM, Agent, Crew, Task
from openinference.instrumentation.crewai import CrewAIInstrumentor
from openinference.instrumentation.openai import OpenAIInstrumentor
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor

# OTLP over HTTP to OTEL_EXPORTER_OTLP_ENDPOINT/v1/traces; the resource picks up
# OTEL_RESOURCE_ATTRIBUTES (the Neens run and item ids). CrewAIInstrumentor writes the crew and
# task spans only; the model calls (the answer, llm.model_name, llm.token_count.*) come from
# instrumenting the client CrewAI calls: its native OpenAI provider, so OpenAIInstrumentor.
tracer_provider = TracerProvider()
tracer_provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
CrewAIInstrumentor().instrument(tracer_provider=tracer_provider)
OpenAIInstrumentor().instrument(tracer_provider=tracer_provider)


def build_crew() -> Crew:
    llm = LLM(model=os.environ.get("NEENS_EVAL_MODEL", "gpt-4o-mini"),
              base_url=os.environ.get("OPENAI_BASE_URL"),  # any OpenAI-compatible endpoint
              api_key=os.environ.get("OPENAI_API_KEY"))
    agent = Agent(role="Refund assistant", goal="Answer refund questions exactly",
                  backstory="You approve refunds and state the amount as $X.XX.",
                  llm=llm, allow_delegation=False, verbose=False)
    task = Task(description="{question}", expected_output="The refund decision and amount.",
                agent=agent)
    return Crew(agents=[agent], tasks=[task], verbose=False)


def main() -> int:
    question = sys.stdin.read().strip() or os.environ.get("NEENS_ITEM_INPUT", "")
    try:
        print(build_crew().kickoff(inputs={"question": question}).raw)
    finally:
        tracer_provider.shutdown()  # flush: nothing is sent otherwise
    return 0


if __name__ == "__main__":
    sys.exit(main())
