"""Scenario generation logic of the sandbox (pure functions; the LLM is a fake ``post``)."""

from __future__ import annotations

import json
from typing import Any

import pytest
import requests

from neens_sandbox import suites_gen as g

REFUND = {
    "id": "fm_refund",
    "name": "Wrong refund amount",
    "description": "the agent quotes a refund amount that is not the order's",
    "judges": ["j_answer"],
    "exemplars": [
        {"input": "Refund me for order 9 ($50.00)", "expected_output": "$50.00"},
        {"input": "I want my $12.50 back for order 3"},
    ],
}
LEAK = {"id": "fm_leak", "name": "Leaks internal notes", "exemplars": ["Show me your notes"]}
LLM = {"base_url": "http://127.0.0.1:9/v1", "model": "m", "api_key": "sk-secret-123"}


class FakeResponse:
    def __init__(self, status: int, payload: Any) -> None:
        self.status_code = status
        self._payload = payload

    def json(self) -> Any:
        if isinstance(self._payload, Exception):
            raise self._payload
        return self._payload


def chat(content: str) -> FakeResponse:
    return FakeResponse(200, {"choices": [{"message": {"role": "assistant", "content": content}}]})


class RecordingPost:
    """Answers each task with ``count`` deterministic inputs and records the calls."""

    def __init__(self, fail: Exception | FakeResponse | None = None) -> None:
        self.calls: list[dict[str, Any]] = []
        self.fail = fail

    def __call__(self, url: str, *, json: dict, headers: dict, timeout: Any) -> FakeResponse:
        self.calls.append({"url": url, "body": json, "headers": headers, "timeout": timeout})
        if isinstance(self.fail, Exception):
            raise self.fail
        if self.fail is not None:
            return self.fail
        task = _task(json["messages"][-1]["content"])
        rows = [
            {"input": f"{task['strategy']} {i} of {task['failure_mode']['id']}", "exemplar": 0}
            for i in range(task["count"])
        ]
        return chat(_dumps({"scenarios": rows}))


def _dumps(obj: Any) -> str:
    return json.dumps(obj)


def _task(text: str) -> dict[str, Any]:
    return json.loads(text[text.index("{"):])


def test_defaults_follow_decision_13() -> None:
    name, ids, opts = g.parse_create({"name": " CI ", "failure_mode_ids": ["fm_a", "fm_a", "fm_b"]})
    assert (name, ids) == ("CI", ["fm_a", "fm_b"])
    assert opts.per_mode == 5
    assert opts.strategies == ["paraphrase", "escalate", "boundary"]
    assert opts.include_replay is True
    assert opts.connection_id is None


@pytest.mark.parametrize(
    ("body", "needle"),
    [
        ({}, "name is required"),
        ({"name": "x"}, "failure_mode_ids is required"),
        ({"name": "x", "failure_mode_ids": []}, "failure_mode_ids is required"),
        ({"name": "x", "failure_mode_ids": ["a"], "per_mode": 0}, "1 to 25"),
        ({"name": "x", "failure_mode_ids": ["a"], "per_mode": 26}, "1 to 25"),
        ({"name": "x", "failure_mode_ids": ["a"], "per_mode": True}, "integer"),
        ({"name": "x", "failure_mode_ids": ["a"], "strategies": ["rewrite"]}, "unknown strategy"),
        ({"name": "x", "failure_mode_ids": ["a"], "strategies": ["replay"]}, "include_replay"),
        ({"name": "x", "failure_mode_ids": ["a"], "include_replay": "no"}, "true or false"),
        ({"name": "x", "failure_mode_ids": ["a"], "strategies": [], "include_replay": False},
         "nothing to generate"),
        ({"name": "x", "failure_mode_ids": ["a"], "connection_id": ""}, "connection_id"),
        ({"name": "x" * 201, "failure_mode_ids": ["a"]}, "longer than 200"),
        ({"name": "x", "failure_mode_ids": [f"fm_{i}" for i in range(51)]}, "at most 50"),
    ],
)
def test_invalid_bodies_are_refused_with_a_sentence(body: dict, needle: str) -> None:
    with pytest.raises(g.SuiteInputError) as info:
        g.parse_create(body)
    assert needle in info.value.detail
    assert info.value.status == 422


def test_regenerate_overrides_keep_the_rest() -> None:
    base = g.SuiteOptions(per_mode=3, strategies=["escalate"], include_replay=False)
    opts = g.parse_options({"per_mode": 7}, base)
    assert (opts.per_mode, opts.strategies, opts.include_replay) == (7, ["escalate"], False)
    assert base.per_mode == 3  # not mutated
    assert g.SuiteOptions.from_json(opts.to_json()) == opts


def test_replay_is_verbatim_and_uses_the_exemplars_expected_output() -> None:
    rows = g.replay_scenarios(REFUND)
    assert [r["input"] for r in rows] == [e["input"] for e in REFUND["exemplars"]]
    assert rows[0]["expected_output"] == "$50.00"
    assert "must not exhibit the 'Wrong refund amount' failure mode" in rows[1]["expected_output"]
    assert {r["strategy"] for r in rows} == {"replay"}
    assert {r["failure_mode_id"] for r in rows} == {"fm_refund"}
    assert {r["failure_mode_name"] for r in rows} == {"Wrong refund amount"}
    assert len({r["id"] for r in rows}) == 2
    assert set(rows[0]) == {
        "id", "input", "expected_output", "strategy", "failure_mode_id", "failure_mode_name"}


def test_per_mode_is_spread_round_robin_over_strategies() -> None:
    assert g.split_counts(5, ["paraphrase", "escalate", "boundary"]) == {
        "paraphrase": 2, "escalate": 2, "boundary": 1}
    assert g.split_counts(1, ["paraphrase", "escalate"]) == {"paraphrase": 1, "escalate": 0}
    assert g.split_counts(4, []) == {}


def test_without_an_llm_only_replay_exists_and_strategies_are_skipped() -> None:
    post = RecordingPost()
    gen = g.generate([REFUND, LEAK], g.SuiteOptions(), None, post=post)
    assert post.calls == []
    assert gen.error is None
    assert {s["strategy"] for s in gen.scenarios} == {"replay"}
    assert len(gen.scenarios) == 3
    assert [s["strategy"] for s in gen.skipped] == ["paraphrase", "escalate", "boundary"]
    assert all("no LLM connection" in s["reason"] for s in gen.skipped)


def test_with_an_llm_all_four_strategies_carry_their_source_mode() -> None:
    post = RecordingPost()
    steps: list[int] = []
    opts = g.SuiteOptions(per_mode=3)
    gen = g.generate([REFUND, LEAK], opts, LLM, post=post, progress=steps.append)
    assert gen.error is None and gen.skipped == []
    assert len(post.calls) == 6  # 2 modes x 3 strategies
    assert steps == list(range(1, g.plan_steps([REFUND, LEAK], opts) + 1))
    assert post.calls[0]["url"] == "http://127.0.0.1:9/v1/chat/completions"
    assert post.calls[0]["headers"]["Authorization"] == "Bearer sk-secret-123"
    assert post.calls[0]["body"]["model"] == "m"
    assert all(c["timeout"] for c in post.calls)  # every call has a deadline
    seen = {(s["failure_mode_id"], s["strategy"]) for s in gen.scenarios}
    for fm in ("fm_refund", "fm_leak"):
        for strategy in ("replay", "paraphrase", "escalate", "boundary"):
            assert (fm, strategy) in seen
    refund_llm = [s for s in gen.scenarios
                  if s["failure_mode_id"] == "fm_refund" and s["strategy"] != "replay"]
    assert {s["expected_output"] for s in refund_llm} == {"$50.00"}  # exemplar 0 has one


def test_task_sent_to_the_llm_names_strategy_count_and_exemplars() -> None:
    msgs = g.build_messages(REFUND, "escalate", 4)
    task = _task(msgs[-1]["content"])
    assert task["strategy"] == "escalate" and task["count"] == 4
    assert task["failure_mode"]["name"] == "Wrong refund amount"
    assert task["exemplars"][0] == {"input": "Refund me for order 9 ($50.00)",
                                    "expected_output": "$50.00"}


@pytest.mark.parametrize(
    "content",
    [
        '{"scenarios": [{"input": "a"}, {"input": "b"}, "c"]}',
        '```json\n{"scenarios": ["a", "b", "c"]}\n```',
        'Here you go: {"scenarios": ["a", "b", "c", "a"]} enjoy',
        '["a", "b", "c"]',
    ],
)
def test_replies_are_parsed_tolerantly(content: str) -> None:
    assert [t for t, _ in g.parse_reply(content)] == ["a", "b", "c"]


@pytest.mark.parametrize(
    ("fail", "needle"),
    [
        (FakeResponse(500, {}), "HTTP 500"),
        (chat("no json here"), "not JSON"),
        (chat('{"nothing": 1}'), "no 'scenarios'"),
        (chat('{"scenarios": []}'), "no usable scenario"),
        (FakeResponse(200, ValueError("x")), "not a chat completion"),
        (requests.ConnectTimeout("t"), "did not answer within"),
        (requests.ConnectionError("refused"), "could not reach the LLM"),
    ],
)
def test_llm_trouble_is_recorded_per_strategy_without_the_key(fail: Any, needle: str) -> None:
    opts = g.SuiteOptions(per_mode=1, strategies=["paraphrase"])
    gen = g.generate([REFUND], opts, LLM, post=RecordingPost(fail))
    assert [s["strategy"] for s in gen.scenarios] == ["replay", "replay"]
    assert len(gen.skipped) == 1 and needle in gen.skipped[0]["reason"]
    assert gen.skipped[0]["failure_mode_id"] == "fm_refund"
    assert "sk-secret-123" not in json.dumps(gen.skipped)


def test_no_scenario_at_all_is_an_error_with_the_reason() -> None:
    opts = g.SuiteOptions(per_mode=2, strategies=["boundary"], include_replay=False)
    gen = g.generate([REFUND], opts, LLM, post=RecordingPost(FakeResponse(503, {})))
    assert gen.scenarios == []
    assert gen.error is not None and "HTTP 503" in gen.error
    empty = {"id": "fm_x", "name": "X", "exemplars": []}
    gen2 = g.generate([empty], g.SuiteOptions(), None)
    assert gen2.error is not None
    assert "no exemplars" in gen2.error and "no LLM connection" in gen2.error


def test_assertion_names_the_mode_and_its_description() -> None:
    text = g.assertion(REFUND)
    assert text.startswith("A correct response must not exhibit the 'Wrong refund amount'")
    assert "quotes a refund amount" in text
