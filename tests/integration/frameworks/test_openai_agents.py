"""The OpenAI Agents SDK quickstart, traced by OpenInference."""

from __future__ import annotations

from tests.integration.frameworks.support import (
    SMALL,
    assert_caught,
    assert_good,
    run_quickstart,
)

NAME = "openai_agents"


def test_agent_passes_with_a_cost(frameworks, sandbox, llm_good):
    run = run_quickstart(sandbox, llm_good, NAME, label="oa-good", record="openai_agents")
    assert_good(run)  # llm.model_name and llm.token_count.* give the model and a cost
    assert not run.items["it_1"]["output"].startswith("[")  # not the whole output.value JSON


def test_a_bad_model_is_caught(frameworks, sandbox, llm_bad):
    assert_caught(run_quickstart(sandbox, llm_bad, NAME, label="oa-bad",
                                 version=SMALL))
