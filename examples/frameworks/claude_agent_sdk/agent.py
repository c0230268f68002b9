"""A refund agent on the Claude Agent SDK, traced by Claude Code's own OpenTelemetry export:
the SDK runs the Claude Code CLI, which sends spans (one ``claude_code.llm_request`` per model
call, with model and tokens) and log records (the answer, ``claude_code.assistant_response``)
over OTLP. Reads the question on stdin, prints the answer.

Run it under Neens: ``neens eval run ... -- python agent.py``. The model is whatever
``ANTHROPIC_BASE_URL`` / ``ANTHROPIC_API_KEY`` point at; ``NEENS_EVAL_MODEL`` picks the model.
The CLI is the one ``npm ci`` puts in ``node_modules`` here (else the SDK's bundled one).
"""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

# The settings that matter for Neens (see README.md); the CLI inherits them. Claude Code
# exports nothing unless telemetry is on, its spans need the enhanced-telemetry beta, and the
# answer text is "<REDACTED>" unless assistant responses are logged.
os.environ.update({name: os.environ.get(name, value) for name, value in {
    "CLAUDE_CODE_ENABLE_TELEMETRY": "1",
    "CLAUDE_CODE_ENHANCED_TELEMETRY_BETA": "1",
    "OTEL_TRACES_EXPORTER": "otlp",
    "OTEL_LOGS_EXPORTER": "otlp",
    "OTEL_METRICS_EXPORTER": "otlp",
    "OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf",  # Neens receives OTLP over HTTP
    "OTEL_LOG_ASSISTANT_RESPONSES": "1",
    "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
}.items()})

from claude_agent_sdk import ClaudeAgentOptions, ResultMessage, query

SYSTEM = "You are a refund assistant. State the refund amount as $X.XX."
CLI = Path(__file__).resolve().parent / "node_modules" / ".bin" / "claude"


async def answer(question: str) -> str:
    options = ClaudeAgentOptions(
        system_prompt=SYSTEM, max_turns=2,
        model=os.environ.get("NEENS_EVAL_MODEL", "claude-haiku-4-5"),
        cli_path=str(CLI) if CLI.exists() else None,
    )
    result = ""
    async for message in query(prompt=question, options=options):
        if isinstance(message, ResultMessage) and message.result:
            result = message.result
    return result  # the CLI has exited, and flushed its telemetry, when the stream ends


def main() -> int:
    question = sys.stdin.read().strip() or os.environ.get("NEENS_ITEM_INPUT", "")
    print(asyncio.run(answer(question)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
