"""The CrewAI quickstart (one agent, one task), traced by OpenInference's CrewAI and OpenAI
instrumentations."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.fakes import llm_server
from tests.integration.frameworks.support import (
    FRAMEWORKS,
    SMALL,
    VENVS,
    assert_caught,
    assert_good,
    run_quickstart,
)

# Imports the quickstart (its set-up runs at import) in a clean environment and asks CrewAI
# whether its own anonymous telemetry and its cloud tracing are on.
CREWAI_EXPORTS = """
import sys
sys.path.insert(0, sys.argv[1])
import agent
from crewai.events.listeners.tracing.utils import should_enable_tracing
from crewai.telemetry import Telemetry
from opentelemetry import trace
print(Telemetry().ready, should_enable_tracing(), type(trace.get_tracer_provider()).__name__)
agent.tracer_provider.shutdown()
"""

NAME = "crewai"


@pytest.fixture
def llm(tmp_path: Path) -> Iterator[llm_server.FakeLlm]:
    """The good fake model, with its log of the prompt tokens it answered."""
    fake = llm_server.start(tmp_path, "--refund", "good")
    yield fake
    fake.stop()


def test_crew_passes_in_one_step_with_a_cost(frameworks, sandbox, llm):
    run = run_quickstart(sandbox, llm.url, NAME, label="crew-good", record="crewai")
    # one model call per item: the crew and task spans are not steps, the answer is the
    # model's text (not the crew's output JSON), and the run has a cost
    assert_good(run, steps=1, wrapped=True)
    assert run.items["it_1"]["output"] == "Your refund of $42.00 for order 42 has been approved."
    # CrewAI wraps the question in its task prompt: the input tokens are the model's, one call
    # per item, as the fake model answered them
    answered = sorted(call["prompt_tokens"] for call in llm.calls())
    assert sorted(item["inputTokens"] for item in run.items.values()) == answered


def test_a_bad_model_is_caught(frameworks, sandbox, llm_bad):
    assert_caught(run_quickstart(sandbox, llm_bad, NAME, label="crew-bad", version=SMALL))


def test_crewai_sends_nothing_of_its_own(frameworks, tmp_path):
    """CrewAI's anonymous telemetry and cloud tracing are off, and no global tracer provider
    of CrewAI's replaces ours: the agent's traces go only to OTEL_EXPORTER_OTLP_ENDPOINT."""
    proc = subprocess.run(
        [str(VENVS / NAME / "bin" / "python"), "-c", CREWAI_EXPORTS, str(FRAMEWORKS / NAME)],
        env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}, cwd=tmp_path,
        capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["False", "False", "ProxyTracerProvider"]
