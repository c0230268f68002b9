"""The Claude quickstarts against the fake Anthropic Messages endpoint
(tests/fakes/llm_server.py, ``ANTHROPIC_BASE_URL``): the Anthropic SDK traced by itself in
content mode, and the Claude Agent SDK traced by Claude Code's own OpenTelemetry export (the
Claude Code CLI from npm; the answer in a log record). Model, tokens, cost and steps equal
what the fake model served: words of the question in, 10 out, claude-haiku-4-5 at the seeded
rate."""

from __future__ import annotations

import pytest

from tests.integration.frameworks.support import SMALL, assert_caught, assert_good, run_quickstart

HAIKU = {"model": "claude-haiku-4-5", "rates": (1.00, 5.00)}


@pytest.mark.parametrize(("name", "record"), [("anthropic_sdk", "anthropic_sdk_content"),
                                              ("claude_agent_sdk", "claude_code_otel")])
def test_a_good_model_passes(frameworks, sandbox, llm_good, name, record):
    run = run_quickstart(sandbox, llm_good, name, label=f"{name}-good", record=record)
    assert_good(run, **HAIKU)


@pytest.mark.parametrize("name", ["anthropic_sdk", "claude_agent_sdk"])
def test_a_bad_model_is_caught(frameworks, sandbox, llm_bad, name):
    run = run_quickstart(sandbox, llm_bad, name, label=f"{name}-bad", version=SMALL)
    assert_caught(run)
