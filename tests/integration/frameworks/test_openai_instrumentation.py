"""The official OpenAI instrumentation quickstart (opentelemetry-instrumentation-openai-v2)."""

from __future__ import annotations

from tests.integration.frameworks.support import (
    SMALL,
    assert_caught,
    assert_good,
    run_quickstart,
)

NAME = "openai_instrumentation"


def test_content_on_spans_passes(frameworks, sandbox, llm_good):
    run = run_quickstart(sandbox, llm_good, NAME, label="oi-spans", record="openai_v2_spans")
    assert_good(run)
    assert "export" not in run.proc.stderr.lower()  # logs and metrics exporters: no errors


def test_content_only_in_log_records_passes(frameworks, sandbox, llm_good):
    run = run_quickstart(sandbox, llm_good, NAME, label="oi-events", record="openai_v2_events",
                         version=SMALL,
                         OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT="event_only")
    assert_good(run, count=2)


def test_a_bad_model_is_caught(frameworks, sandbox, llm_bad):
    run = run_quickstart(sandbox, llm_bad, NAME, label="oi-bad", version=SMALL,
                         OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT="event_only")
    assert_caught(run)
