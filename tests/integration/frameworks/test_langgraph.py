"""The LangGraph quickstart, traced by OpenLLMetry's LangChain instrumentation."""

from __future__ import annotations

from tests.integration.frameworks.support import (
    SMALL,
    assert_caught,
    assert_good,
    run_quickstart,
)

NAME = "langgraph"


def test_single_call_graph_passes_in_one_step(frameworks, sandbox, llm_good):
    run = run_quickstart(sandbox, llm_good, NAME, label="lg-good", record="langgraph")
    assert_good(run, steps=1)  # the workflow and task spans are not steps
    assert '"lc"' not in run.items["it_1"]["output"]  # never the serialized task state


def test_a_bad_model_is_caught(frameworks, sandbox, llm_bad):
    assert_caught(run_quickstart(sandbox, llm_bad, NAME, label="lg-bad",
                                 version=SMALL))
