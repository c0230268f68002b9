"""The Pydantic AI quickstart (its own OpenTelemetry instrumentation, no Logfire)."""

from __future__ import annotations

import json

from tests.integration.frameworks.support import (
    SMALL,
    assert_caught,
    assert_good,
    run_quickstart,
)

NAME = "pydantic_ai"


def test_text_output_passes(frameworks, sandbox, llm_good):
    assert_good(run_quickstart(sandbox, llm_good, NAME, label="pai-text", record="pydantic_ai"))


def test_structured_output_passes(frameworks, sandbox, llm_good):
    run = run_quickstart(sandbox, llm_good, NAME, label="pai-structured",
                         record="pydantic_ai_structured", version=SMALL,
                         AGENT_OUTPUT="structured")
    assert_good(run, count=2)
    answer = json.loads(run.items["it_1"]["output"])  # the final_result, as JSON
    assert answer["answer"].startswith("Your refund of $42.00")


def test_a_bad_model_is_caught(frameworks, sandbox, llm_bad):
    assert_caught(run_quickstart(sandbox, llm_bad, NAME, label="pai-bad",
                                 version=SMALL, AGENT_OUTPUT="structured"))
