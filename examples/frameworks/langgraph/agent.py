"""A one-node LangGraph refund agent, traced by OpenLLMetry's LangChain instrumentation.
Reads the question on stdin, prints the answer.
"""

from __future__ import annotations

import os
import sys

from langchain_core.messages import HumanMessage, SystemMessage
from langchain_openai import ChatOpenAI
from langgraph.graph import END, START, MessagesState, StateGraph
from opentelemetry import trace
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.instrumentation.langchain import LangchainInstrumentor
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor

# OTLP over HTTP to OTEL_EXPORTER_OTLP_ENDPOINT/v1/traces; the resource picks up
# OTEL_RESOURCE_ATTRIBUTES (the Neens run and item ids). TRACELOOP_TRACE_CONTENT (default
# true) must stay on: the answer is read from the LLM span's gen_ai.completion.* attributes.
tracer_provider = TracerProvider()
tracer_provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
trace.set_tracer_provider(tracer_provider)
LangchainInstrumentor().instrument()

SYSTEM = "You are a refund assistant. State the refund amount as $X.XX."


def build_graph():  # a compiled graph
    llm = ChatOpenAI(model=os.environ.get("NEENS_EVAL_MODEL", "gpt-4o-mini"))

    def agent(state: MessagesState) -> dict:
        return {"messages": [llm.invoke(state["messages"])]}

    graph = StateGraph(MessagesState)
    graph.add_node("agent", agent)
    graph.add_edge(START, "agent")
    graph.add_edge("agent", END)
    return graph.compile()


def main() -> int:
    question = sys.stdin.read().strip() or os.environ.get("NEENS_ITEM_INPUT", "")
    try:
        result = build_graph().invoke(
            {"messages": [SystemMessage(SYSTEM), HumanMessage(question)]})
        print(result["messages"][-1].content)
    finally:
        tracer_provider.shutdown()  # flush: nothing is sent otherwise
    return 0


if __name__ == "__main__":
    sys.exit(main())
