"""The Pydantic AI refund agent as a warm worker: Pydantic AI, its instrumentation and the
OpenTelemetry SDK are imported and set up once per process, then ``serve`` hands it one item
after another (``neens eval run --workers N -- python worker.py``). Without ``--workers`` the
same file answers one question from stdin, like ``agent.py``.

The tracer provider is set (and Pydantic AI instrumented) *before* ``serve`` is called:
``serve`` hooks into it, so every span of an item carries that item's ``neens.*`` resource
attributes and is exported before the item is answered.

``AGENT_OUTPUT=structured`` as in ``agent.py``.
"""

from __future__ import annotations

import os

from opentelemetry import trace
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor
from pydantic import BaseModel
from pydantic_ai import Agent
from pydantic_ai.models.openai import OpenAIChatModel

from neens_action.agent import serve

# The same set-up as agent.py: OTLP over HTTP to OTEL_EXPORTER_OTLP_ENDPOINT/v1/traces.
tracer_provider = TracerProvider()
tracer_provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
trace.set_tracer_provider(tracer_provider)
Agent.instrument_all()

SYSTEM = "You are a refund assistant. State the refund amount as $X.XX."


class Refund(BaseModel):
    """The structured answer."""

    answer: str
    approved: bool


_agents: dict[tuple[str, bool], Agent] = {}


def agent_for(model: str, structured: bool) -> Agent:
    """One agent per model (a sweep sets NEENS_EVAL_MODEL per item), built once."""
    key = (model, structured)
    if key not in _agents:
        chat = OpenAIChatModel(model)
        _agents[key] = (Agent(chat, instructions=SYSTEM, output_type=Refund) if structured
                        else Agent(chat, instructions=SYSTEM))
    return _agents[key]


async def answer(question: str) -> str:
    # serve sets the item's NEENS_* variables in os.environ while it runs
    model = os.environ.get("NEENS_EVAL_MODEL", "gpt-4o-mini")
    structured = os.environ.get("AGENT_OUTPUT") == "structured"
    result = await agent_for(model, structured).run(question.strip())
    return result.output.answer if structured else result.output


if __name__ == "__main__":
    try:
        serve(answer)
    finally:
        tracer_provider.shutdown()  # flush what is left when the runner closes stdin
