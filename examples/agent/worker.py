#!/usr/bin/env python3
"""The example agent as a warm worker: the same answers and spans as ``agent.py``, served by
``neens_action.agent.serve``, so one file runs both ways:

    neens eval run ... -- python examples/agent/worker.py              # one process per item
    neens eval run ... --workers 4 -- python examples/agent/worker.py  # four warm workers

Tracing: by default the agent sets up its own global tracer provider at import (like an
instrumented framework would) and ``serve`` hooks into it; ``AGENT_PROVIDER=serve`` leaves it
to ``serve``, which builds one from the standard OTLP variables. Either way every span of an
item carries that item's ``neens.*`` resource attributes.

For tests: ``AGENT_MODE`` (good | bad | leaky, as ``answers.py``), ``AGENT_CRASH_ON`` /
``AGENT_HANG_ON`` / ``AGENT_RAISE_ON`` (a text: an item whose prompt contains it kills the
process / hangs / raises), ``AGENT_LOG`` (append ``<item id> <pid>`` per item).
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from answers import ORDER, answer, usage
from opentelemetry import trace

from neens_action.agent import serve

if os.environ.get("AGENT_PROVIDER", "own") == "own":
    from agent import make_provider

    trace.set_tracer_provider(make_provider())

tracer = trace.get_tracer("neens-example-worker")  # before serve: like a framework would


def _when(var: str, prompt: str) -> bool:
    needle = os.environ.get(var, "")
    return bool(needle) and needle in prompt


def respond(prompt: str) -> str:
    mode = os.environ.get("AGENT_MODE", "good")
    log = os.environ.get("AGENT_LOG")
    if log:
        with open(log, "a", encoding="utf-8") as fh:
            fh.write(f"{os.environ.get('NEENS_DATASET_ITEM_ID', '')}\t{os.getpid()}\n")
    if _when("AGENT_CRASH_ON", prompt):
        print("agent: crashing on purpose (AGENT_CRASH_ON)", file=sys.stderr, flush=True)
        os._exit(3)
    model = os.environ.get("NEENS_EVAL_MODEL") or "gpt-4o-mini"
    text = answer(prompt, mode)
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
            if _when("AGENT_HANG_ON", prompt):
                time.sleep(3600)
            if _when("AGENT_RAISE_ON", prompt):
                raise RuntimeError("the model refused (AGENT_RAISE_ON)")
        root.set_attribute("output.value", text)
    return text


if __name__ == "__main__":
    serve(respond)
