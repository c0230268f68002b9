"""The Pydantic AI quickstart in worker mode: examples/frameworks/pydantic_ai/worker.py (the
framework and its OpenTelemetry set-up loaded once, items answered through
``neens_action.agent.serve``) under ``neens eval run --workers 2`` against the real sandbox."""

from __future__ import annotations

import json

from tests.integration.frameworks.support import (
    SMALL,
    assert_caught,
    assert_good,
    run_quickstart,
    stored_payload,
)

NAME = "pydantic_ai"


def test_worker_mode_scores_each_item_as_its_own(frameworks, sandbox, llm_good):
    run = run_quickstart(sandbox, llm_good, NAME, label="pai-worker", workers=2)
    assert "Running 6 item(s) with 2 warm worker(s)" in run.proc.stderr
    # every item scored once, passed, with model, tokens, cost and 1 step as in per-item mode
    assert_good(run)
    assert sorted(i["itemId"] for i in run.doc["items"]) == sorted(run.items)
    outputs = {item_id: item["output"] for item_id, item in run.items.items()}
    assert len(set(outputs.values())) == 6  # distinct answers: none got another's
    processes = set()
    for item_id, item in run.items.items():
        spans = stored_payload(sandbox, run.doc["runId"], item_id)["spans"]
        names = sorted(s["name"] for s in spans)
        assert names == ["chat gpt-4o-mini", "invoke_agent agent"], (item_id, names)
        for span in spans:  # linked by the item's own resource attributes
            assert span["resource"]["neens.dataset_item_id"] == item_id
            assert span["resource"]["neens.eval_run_id"] == run.doc["runId"]
            assert span["resource"]["neens.version_label"] == "pai-worker"
            processes.add(span["resource"]["service.instance.id"])  # one per SDK set-up
        chat = next(s for s in spans if s["name"].startswith("chat"))
        # this item's question went to the model, and its answer is this item's output
        assert item["input"] in chat["attributes"]["gen_ai.input.messages"]
        said = json.loads(chat["attributes"]["gen_ai.output.messages"])
        assert said[0]["parts"][0]["content"] == item["output"], item_id
    assert 1 <= len(processes) <= 2  # warm: the framework was set up by 2 processes, not 6


def test_worker_mode_catches_a_bad_model(frameworks, sandbox, llm_bad):
    assert_caught(run_quickstart(sandbox, llm_bad, NAME, label="pai-worker-bad",
                                 version=SMALL, workers=2))
