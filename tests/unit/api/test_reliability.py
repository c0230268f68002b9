"""Reliability rules of issue 10 with fakes at the edge: polling survives transient faults
within its budget, a failed ci-result on an errored run stays one error line, and a signal
during the ci-result interrupts it (exit 130, our run cancelled)."""

from __future__ import annotations

import io
import itertools

import pytest

from neens_action import pipeline
from neens_action.errors import Interrupted, NeensApiError, RunError
from neens_action.flows import common
from neens_action.items import ItemDigest
from neens_action.jobs import JOBS
from neens_action.outcome import Outcome
from neens_action.world import World
from tests.fakes.clock import FakeClock


def world() -> World:
    return World(environ={}, err=io.StringIO(), out=io.StringIO(), clock=FakeClock())


def transient() -> NeensApiError:
    return NeensApiError("GET /preprod-evals/r failed: connection reset", status=None)


def test_polling_survives_transient_faults():
    answers = [transient(), NeensApiError("x failed: HTTP 503", status=503),
               {"status": "running"}, transient(), {"status": "completed"}]

    def fetch():
        answer = answers.pop(0)
        if isinstance(answer, Exception):
            raise answer
        return answer

    w = world()
    run = common.poll_until(fetch, world=w, interval=1.0, timeout=60)
    assert run["status"] == "completed" and not answers
    log = w.err.getvalue()
    assert log.count("(still polling)") == 2 and "run status: completed" in log


def test_polling_gives_up_at_the_budget_or_after_a_long_outage():
    def down():
        raise transient()

    w = world()
    with pytest.raises(NeensApiError):
        common.poll_until(down, world=w, interval=5.0, timeout=30)
    assert 30 <= w.clock.now < 36
    w = world()
    with pytest.raises(NeensApiError):
        common.poll_until(down, world=w, interval=5.0, timeout=3600)
    assert common.MAX_OUTAGE <= w.clock.now < common.MAX_OUTAGE + 6


def test_polling_stops_at_once_on_a_permanent_error():
    calls = []

    def gone():
        calls.append(1)
        raise NeensApiError("GET /preprod-evals/r failed: HTTP 404: no such run", status=404)

    with pytest.raises(NeensApiError):
        common.poll_until(gone, world=world(), interval=1.0, timeout=60)
    assert len(calls) == 1


def test_poll_timeout_is_still_a_run_error():
    w = world()
    with pytest.raises(RunError):
        common.poll_until(lambda: {"status": "running"}, world=w, interval=1.0, timeout=3)


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
    outcome = Outcome(mode="run", run_id="r1", gate={"passed": True})
    pipeline.report_ci_result(outcome, ReportClient(transient()), world=w)
    assert w.err.getvalue().startswith("neens: warning: could not report the build verdict")
    assert outcome.error is None


def test_a_signal_during_the_report_interrupts_it_and_cancels_our_run():
    w = world()
    client = ReportClient(Interrupted("interrupted by SIGTERM"))
    outcome = Outcome(mode="run", run_id="r1", gate={"passed": True}, extra={"created": True})
    report = pipeline.conclude(outcome, job=JOBS["run"], world=w, client=client)
    assert report.verdict == "errored"
    assert outcome.interrupted and (outcome.exit_code, outcome.build_verdict) == (130, "errored")
    assert client.cancelled == ["r1"]
    assert "while reporting the build verdict" in outcome.error


def test_polling_is_fast_once_every_item_is_scored():
    states = [{"status": "running", "completed": 1, "total": 3}] * 3 + \
             [{"status": "running", "completed": 3, "total": 3}] * 4 + [{"status": "completed"}]
    answers = iter(states)
    w = world()
    starts = []

    def fetch():
        starts.append(w.clock.now)
        return next(answers)

    common.poll_until(fetch, world=w, interval=5.0, timeout=600,
                      nearly_done=common.all_scored)
    gaps = [b - a for a, b in itertools.pairwise(starts)]
    assert gaps[:3] == [0.5, 1.0, 2.0]  # backing off while items are being scored
    assert gaps[3:] == [common.FIRST_DELAY] * 4  # then fast: the verdict is imminent


def test_poll_run_reads_the_items_once_at_the_end():
    class Client:
        def __init__(self):
            self.calls = []

        def get_run_summary(self, run_id):
            self.calls.append("summary")
            return {"status": "completed", "completed": 1, "total": 1}

        def get_run(self, run_id, digest=None):
            self.calls.append(f"full digest={digest is not None}")
            rows = [{"datasetVersionItemId": "a", "passed": True},
                    {"datasetVersionItemId": "b", "passed": False}]
            if digest is None:
                return {"status": "completed", "items": rows}
            for row in rows:
                digest.add(row)
            return {"status": "completed"}

    client = Client()
    run = common.poll_run(client, "r", world=world(), interval=1, timeout=10)
    assert len(run["items"]) == 2 and client.calls == ["summary", "full digest=False"]
    client, digest = Client(), ItemDigest()
    run = common.poll_run(client, "r", world=world(), interval=1, timeout=10, digest=digest)
    assert "items" not in run and client.calls == ["summary", "full digest=True"]
    assert (digest.total, digest.passed, [r["datasetVersionItemId"] for r in digest.rows]) == (
        2, 1, ["b"])
