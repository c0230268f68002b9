"""The Vercel AI SDK quickstart (Node), with the GenAI and the legacy ai.* integrations."""

from __future__ import annotations

from tests.integration.frameworks.support import (
    SMALL,
    assert_caught,
    assert_good,
    run_quickstart,
)

NAME = "vercel_ai"


def test_agent_passes(frameworks, sandbox, llm_good):
    # the invoke_agent root repeats the call's usage: counted once
    assert_good(run_quickstart(sandbox, llm_good, NAME, label="ai-good", record="vercel_ai"))


def test_legacy_attributes_pass(frameworks, sandbox, llm_good):
    # ai.response.text, ai.usage.*, operation.name; ai.generateText's totals counted once
    assert_good(run_quickstart(sandbox, llm_good, NAME, label="ai-legacy", version=SMALL,
                               record="vercel_ai_legacy", AI_TELEMETRY="legacy"), count=2)


def test_a_bad_model_is_caught(frameworks, sandbox, llm_bad):
    assert_caught(run_quickstart(sandbox, llm_bad, NAME, label="ai-bad",
                                 version=SMALL))
