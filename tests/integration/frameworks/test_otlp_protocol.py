"""The exporter protocol and the answer text, with a real zero-code agent: the OpenAI SDK
under the OpenTelemetry distro's ``opentelemetry-instrument`` (examples/frameworks/
openai_zero_code), whose default exporter is gRPC.

* no protocol set: the runner sets ``OTEL_EXPORTER_OTLP_TRACES_PROTOCOL=http/protobuf`` for
  the agent, so it passes;
* gRPC or ``http/json``: every item is "no trace captured"; the report names the protocol and
  shows the exporter's own error from the agent's output; ``neens doctor`` fails on both;
* no content capture: the trace arrives without answer text, and the failing items say so,
  with the settings to turn on, in the console, the job summary and the comment.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.helpers import ROOT, run_cli
from tests.integration.frameworks.support import SMALL, VENVS, assert_good, run_quickstart

NAME = "openai_zero_code"
BIN = VENVS / NAME / "bin"
AGENT = [str(BIN / "opentelemetry-instrument"), str(BIN / "python"),
         str(ROOT / "examples" / "frameworks" / NAME / "agent.py")]
# what the quickstart's README sets: the content on spans, no metrics or logs exported
CONTENT = {"OTEL_SEMCONV_STABILITY_OPT_IN": "gen_ai_latest_experimental",
           "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "span_only"}
QUIET = {"OTEL_METRICS_EXPORTER": "none", "OTEL_LOGS_EXPORTER": "none"}


@pytest.fixture(scope="module")
def zero_code() -> None:
    proc = subprocess.run([str(ROOT / "scripts" / "frameworks"), NAME], cwd=ROOT,
                          capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr[-4000:]


def test_no_protocol_set_passes_through_the_runners_default(zero_code, sandbox, llm_good):
    run = run_quickstart(sandbox, llm_good, NAME, label="zero-code", version=SMALL,
                         agent=AGENT, **CONTENT, **QUIET)
    assert_good(run, count=2)


@pytest.mark.parametrize(("protocol", "exporter_error"), [
    ("grpc", "Failed to export traces"),
    ("http/json", "Unsupported OTLP protocol 'http/json'"),
])
def test_a_protocol_neens_does_not_receive_is_named(zero_code, sandbox, llm_good, protocol,
                                                    exporter_error):
    run = run_quickstart(sandbox, llm_good, NAME, label=f"proto-{protocol[:4]}",
                         version=SMALL, agent=AGENT, OTEL_EXPORTER_OTLP_PROTOCOL=protocol,
                         **CONTENT, **QUIET)
    assert run.proc.returncode == 2, run.proc.stderr  # no trace at all: nothing measured
    console = run.proc.stderr
    assert "2 of 2 agents exported no trace" in console
    assert f"The agent's OTLP exporter protocol is `{protocol}`" in console
    assert "agent output of it_1 (no trace captured), last lines:" in console
    assert exporter_error in console  # the exporter's own error, from the agent's output
    doctor = run_cli(["doctor"], sandbox.agent_env(OTEL_EXPORTER_OTLP_PROTOCOL=protocol),
                     timeout=60)
    assert doctor.returncode == 2, doctor.stderr
    assert f"FAIL OTLP exporter protocol: OTEL_EXPORTER_OTLP_PROTOCOL={protocol}" in doctor.stderr
    assert "fix: export OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf" in doctor.stderr


def test_a_trace_without_answer_text_says_so_everywhere(zero_code, sandbox, llm_good,
                                                        tmp_path: Path):
    """The instrumentation's default captures no content: the model, tokens and steps
    arrive, the answer does not."""
    run = run_quickstart(sandbox, llm_good, NAME, label="no-content", version=SMALL,
                         agent=AGENT, **QUIET)
    assert run.proc.returncode == 1, run.proc.stderr
    item = run.items["it_1"]
    assert item["output"] is None and item["passed"] is False
    assert (item["model"], item["outputTokens"], item["steps"]) == ("gpt-4o-mini", 10, 1)
    result = tmp_path / "result.json"
    result.write_text(run.proc.stdout)
    surfaces = {"console": run.proc.stderr}
    for fmt in ("markdown", "comment"):
        rendered = run_cli(["report", str(result), "--format", fmt], dict(sandbox.agent_env()))
        assert rendered.returncode == 0, rendered.stderr
        surfaces[fmt] = rendered.stdout
    for where, text in surfaces.items():
        text = text.replace("\\", "")  # Markdown escapes the underscores
        assert "the trace carried no answer text" in text, where
        assert "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=span_only" in text, where
        assert "TRACELOOP_TRACE_CONTENT=true" in text, where
    assert json.loads(run.proc.stdout)["verdict"] == "blocked"
