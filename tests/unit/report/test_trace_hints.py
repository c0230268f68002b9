"""Why an item failed when the trace is the problem: no answer text in a captured trace (with
the capture setting per instrumentation family), or no trace at all (the agent's own output,
and a protocol Neens does not receive)."""

from __future__ import annotations

import pytest

from neens_action.api.answers import ItemRow
from neens_action.outcome import Invocation, Outcome
from neens_action.report.build.evidence import (
    agent_failures,
    failure_hints,
    item_verdicts,
    no_answer_note,
)


def _row(item: str, **kw) -> ItemRow:
    """A scored row as the client decodes it from the server's answer."""
    return ItemRow.decode({"datasetVersionItemId": item, "input": "q",
                           "expectedOutput": "$42.00", **kw})


def test_a_captured_trace_without_answer_text_says_so() -> None:
    rows = [_row("it_1", passed=False, captured=True, output=None),
            _row("it_2", passed=False, captured=True, output="$41.00"),
            _row("it_3", passed=None, captured=False, output=None)]
    items = {i.item_id: i for i in item_verdicts(Outcome(mode="run"), rows, [])}
    assert items["it_1"].reason.startswith("the trace carried no answer text")
    assert "no answer text" not in items["it_2"].reason + items["it_3"].reason
    note = no_answer_note(rows)
    assert note.startswith("1 item(s) failed because the trace carried no answer text")
    for setting in ("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=span_only",
                    "ANTHROPIC_OPEN_TELEMETRY_TRACES_CONTENT_MODE=content",
                    "TRACELOOP_TRACE_CONTENT=true", "OTEL_LOG_ASSISTANT_RESPONSES=1"):
        assert setting in note
    assert no_answer_note([_row("x", passed=False, output="no")]) == ""
    assert no_answer_note([_row("x", passed=False)]) == ""  # a server without `output`


@pytest.mark.parametrize("protocol", ["grpc", "http/json"])
def test_no_trace_shows_the_agents_output_and_names_the_protocol(monkeypatch,
                                                                  protocol) -> None:
    monkeypatch.delenv("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", raising=False)
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_PROTOCOL", protocol)
    inv = Invocation("it_1", "q", returncode=0, output="answer\nFailed to export traces")
    outcome = Outcome(mode="run", invocations=[inv])
    failures = agent_failures(outcome, [_row("it_1", passed=None, captured=False)])
    assert [(f.kind, f.stderr_tail) for f in failures] == [
        ("no_trace", "answer\nFailed to export traces")]
    hints = failure_hints(failures)
    assert hints[0].startswith(f"The agent's OTLP exporter protocol is `{protocol}`")
    monkeypatch.delenv("OTEL_EXPORTER_OTLP_PROTOCOL")
    assert not any("protocol is" in h for h in failure_hints(failures))
