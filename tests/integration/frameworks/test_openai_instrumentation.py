"""The official OpenAI instrumentation quickstart (opentelemetry-instrumentation-openai-v2)."""

from __future__ import annotations

import subprocess

from tests.integration.frameworks.support import (
    SMALL,
    assert_caught,
    assert_good,
    command,
    run_quickstart,
)

NAME = "openai_instrumentation"


def test_content_on_spans_passes(frameworks, sandbox, llm_good):
    run = run_quickstart(sandbox, llm_good, NAME, label="oi-spans", record="openai_v2_spans")
    assert_good(run)


def test_logs_and_metrics_export_without_errors(frameworks, sandbox, llm_good):
    """The agent alone: its log and metric exporters get 200s, so nothing is logged at exit."""
    env = sandbox.agent_env(OPENAI_BASE_URL=llm_good, OPENAI_API_KEY="sk-fake-key",
                            OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT="event_only")
    proc = subprocess.run(command(NAME), input="Refund for order 42 ($42.00)?", env=env,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "$42.00" in proc.stdout
    assert proc.stderr == ""  # no "Failed to export ... 404"


def test_content_only_in_log_records_passes(frameworks, sandbox, llm_good):
    run = run_quickstart(sandbox, llm_good, NAME, label="oi-events", record="openai_v2_events",
                         version=SMALL,
                         OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT="event_only")
    assert_good(run, count=2)


def test_a_bad_model_is_caught(frameworks, sandbox, llm_bad):
    run = run_quickstart(sandbox, llm_bad, NAME, label="oi-bad", version=SMALL,
                         OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT="event_only")
    assert_caught(run)
