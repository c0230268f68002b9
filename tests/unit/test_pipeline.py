"""The one pipeline: signal handlers, the policy evaluated after the outcome, the verdict, the
surfaces (a failing publisher never changes the exit code)."""

from __future__ import annotations

import io
import os
import signal
from typing import Any

import pytest

from neens_action import pipeline
from neens_action.api.answers import Gate, Run
from neens_action.api.comparison import Comparison, Metrics
from neens_action.errors import Interrupted
from neens_action.jobs import JOBS
from neens_action.outcome import Outcome
from neens_action.policy import build_policy
from neens_action.report.model import Report
from neens_action.settings.run import EvalRunSettings
from neens_action.world import World


def world() -> World:
    return World(environ={}, err=io.StringIO(), out=io.StringIO())


def test_the_guard_turns_sigterm_into_interrupted_once_and_restores_handlers() -> None:
    before = signal.getsignal(signal.SIGTERM)
    guard = pipeline.SignalGuard()
    with pytest.raises(Interrupted), guard:
        os.kill(os.getpid(), signal.SIGTERM)
        for _ in range(1000):  # the handler runs between bytecodes of the main thread
            pass
    assert guard.received == signal.SIGTERM
    assert signal.getsignal(signal.SIGTERM) is before
    quiet = pipeline.SignalGuard()
    with quiet:
        quiet.disarm()  # once the flow is done a signal is only recorded
        os.kill(os.getpid(), signal.SIGTERM)
        for _ in range(1000):
            pass
    assert quiet.received == signal.SIGTERM


def test_the_policy_is_evaluated_after_the_outcome_and_decides_the_verdict() -> None:
    policy = build_policy(None, {"min_avg_score": 0.9})
    outcome = Outcome(mode="run", run_id="ppr_1", gate=Gate.decode({"passed": True}),
                      run=Run.decode({"status": "completed", "aggregate": {"avgScore": 0.5}}),
                      comparison=Comparison.decode({}), metrics=Metrics.decode({}))
    report = pipeline.conclude(outcome, job=JOBS["run"], world=world(), policy=policy)
    assert outcome.policy_eval is not None and outcome.policy_eval.blocked
    assert (outcome.exit_code, outcome.build_verdict) == (1, "blocked")
    assert report.verdict == "blocked"
    # without a gate (the flow never reached it) no policy is evaluated: a run error
    errored = Outcome(mode="run", run_id="ppr_1", error="the server stopped answering")
    pipeline.conclude(errored, job=JOBS["run"], world=world(), policy=policy)
    assert errored.policy_eval is None and errored.exit_code == 2


class Failing:
    name = "broken surface"

    def publish(self, report: Report, outcome: Any, doc: Any) -> dict[str, str]:
        raise OSError("disk full")


class Keeping:
    name = "files"

    def __init__(self) -> None:
        self.doc: dict[str, Any] | None = None

    def publish(self, report: Report, outcome: Any, doc: Any) -> dict[str, str]:
        self.doc = doc
        return {"extra": "1"}


def test_a_failing_publisher_is_a_warning_and_the_others_still_publish() -> None:
    w = world()
    keeping = Keeping()
    outcome = Outcome(mode="run", run_id="ppr_1", gate=Gate.decode({"passed": False}))
    settings = EvalRunSettings(base_url="http://127.0.0.1:9", api_key="nk_live_k")
    finished = pipeline.run_job(JOBS["run"], settings, world=w, flow=lambda: outcome,
                                publishers=[Failing(), keeping], report_ci=False,
                                handle_signals=False)
    assert finished.code == 1 and finished.outcome is outcome
    assert "neens: warning: broken surface: disk full" in w.err.getvalue()
    assert keeping.doc is not None and keeping.doc["exitCode"] == 1
    assert finished.report.outputs["extra"] == "1"


def test_an_interrupt_outside_the_flow_is_130_with_the_jobs_blank_outcome() -> None:
    def flow() -> Outcome:
        raise Interrupted("interrupted by SIGTERM")

    settings = EvalRunSettings(base_url="http://127.0.0.1:9", api_key="nk_live_k")
    finished = pipeline.run_job(JOBS["push"], settings, world=world(), flow=flow,
                                report_ci=False, handle_signals=False)
    assert finished.code == 130 and finished.outcome.mode == "push"
    assert finished.outcome.base_url == "http://127.0.0.1:9"
