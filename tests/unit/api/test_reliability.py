"""Reliability rules of issue 10 with fakes at the edge: a failed ci-result on an errored run
stays one error line, and a signal during the ci-result interrupts it (exit 130, our run
cancelled). Polling through transient faults is tested in tests/unit/flows/test_polling.py."""

from __future__ import annotations

import io

from neens_action import pipeline
from neens_action.api.answers import Gate
from neens_action.errors import Interrupted, NeensApiError
from neens_action.jobs import JOBS
from neens_action.outcome import Outcome
from neens_action.world import World
from tests.fakes.clock import FakeClock


def world() -> World:
    return World(environ={}, err=io.StringIO(), out=io.StringIO(), clock=FakeClock())


def transient() -> NeensApiError:
    return NeensApiError("GET /preprod-evals/r failed: connection reset", status=None)


class ReportClient:
    base_url = "http://neens.test"

    def __init__(self, fail: Exception | None = None) -> None:
        self.fail = fail
        self.cancelled: list[str] = []

    def post_ci_result(self, run_id, body, quick=False):
        if self.fail is not None:
            raise self.fail

    def cancel_run(self, run_id, quick=False):
        self.cancelled.append(run_id)


def test_failed_report_of_an_errored_run_is_folded_into_the_error_line():
    w = world()
    outcome = Outcome(mode="run", run_id="r1", error="GET /x failed: connection refused")
    assert pipeline.report_ci_result(outcome, ReportClient(transient()), world=w) is False
    assert w.err.getvalue() == ""
    assert outcome.error.endswith("the build verdict could not be reported to Neens either")


def test_failed_report_of_a_gated_run_is_one_warning():
    w = world()
    outcome = Outcome(mode="run", run_id="r1", gate=Gate.decode({"passed": True}))
    pipeline.report_ci_result(outcome, ReportClient(transient()), world=w)
    assert w.err.getvalue().startswith("neens: warning: could not report the build verdict")
    assert outcome.error is None


def test_a_signal_during_the_report_interrupts_it_and_cancels_our_run():
    w = world()
    client = ReportClient(Interrupted("interrupted by SIGTERM"))
    outcome = Outcome(mode="run", run_id="r1", gate=Gate.decode({"passed": True}), created=True)
    report = pipeline.conclude(outcome, job=JOBS["run"], world=w, client=client)
    assert report.verdict == "errored"
    assert outcome.interrupted and (outcome.exit_code, outcome.build_verdict) == (130, "errored")
    assert client.cancelled == ["r1"]
    assert "while reporting the build verdict" in outcome.error
