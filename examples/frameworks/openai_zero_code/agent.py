"""A refund agent on the OpenAI SDK with no tracing code at all: run it under the
OpenTelemetry distro's zero-code launcher, which sets up the SDK and the installed
instrumentations (here opentelemetry-instrumentation-openai-v2) from the environment.
Reads the question on stdin, prints the answer.

Run it under Neens: ``neens eval run ... -- opentelemetry-instrument python agent.py``. The
distro exports over gRPC unless told otherwise; ``neens eval run`` sets
``OTEL_EXPORTER_OTLP_TRACES_PROTOCOL=http/protobuf`` for the agent when no protocol is set,
since Neens receives OTLP over HTTP only. The answer text reaches the trace only with
``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=span_only`` (see README.md).
"""

from __future__ import annotations

import os
import sys

from openai import OpenAI

SYSTEM = "You are a refund assistant. State the refund amount as $X.XX."


def main() -> int:
    question = sys.stdin.read().strip() or os.environ.get("NEENS_ITEM_INPUT", "")
    reply = OpenAI().chat.completions.create(
        model=os.environ.get("NEENS_EVAL_MODEL", "gpt-4o-mini"),
        messages=[{"role": "system", "content": SYSTEM},
                  {"role": "user", "content": question}],
    )
    print(reply.choices[0].message.content)
    return 0  # the launcher's SDK flushes the spans at exit


if __name__ == "__main__":
    sys.exit(main())
