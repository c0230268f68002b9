"""The gate fact never contradicts the verdict (issue 15): a blocking policy rule blocks a run
whose server gate passed, and a run error decides nothing, whatever the gate said."""

from __future__ import annotations

import io

from neens_action.api.answers import Gate, Run
from neens_action.api.comparison import Comparison, Metrics
from neens_action.jobs import JOBS
from neens_action.outcome import Outcome
from neens_action.pipeline import conclude
from neens_action.policy import build_policy
from neens_action.report.render.markdown import render_summary
from neens_action.report.render.text import render
from neens_action.world import World

RUN = {"status": "completed", "completed": 6, "total": 6, "regressions": 6,
       "aggregate": {"avgScore": 0.4, "passRate": 0.5}}


def _facts(outcome: Outcome, policy=None) -> tuple[dict[str, str], str, str]:
    world = World(environ={}, err=io.StringIO(), out=io.StringIO())
    report = conclude(outcome, job=JOBS[outcome.mode], world=world, policy=policy)
    return dict(report.facts), render(report), render_summary(report)


def test_a_policy_block_reads_blocked_not_passed() -> None:
    policy = build_policy(None, {"min_avg_score": 0.9})
    outcome = Outcome(mode="run", run_id="ppr_1", run=Run.decode(dict(RUN)),
                      comparison=Comparison.decode({}), metrics=Metrics.decode({}),
                      gate=Gate.decode({"passed": True, "passRate": 0.5, "regressions": 0}))
    facts, text, markdown = _facts(outcome, policy)
    assert outcome.exit_code == 1 and outcome.build_verdict == "blocked"
    assert facts["gate"] == "BLOCKED by policy (server gate passed)"
    assert "gate:        BLOCKED by policy" in text and "PASSED" not in text.split("gate:")[1][:20]
    assert "Blocked by policy" in markdown and "PASSED" not in markdown


def test_an_errored_push_run_does_not_claim_the_gate_failed() -> None:
    outcome = Outcome(mode="push", run_id="ppr_2", run=Run.decode(dict(RUN, status="failed")),
                      gate=Gate.decode({"passed": False, "regressions": 6,
                                        "reasons": ["6 regressions"]}),
                      error="run ppr_2 ended with status 'failed': the connection timed out")
    facts, text, markdown = _facts(outcome)
    assert (outcome.exit_code, outcome.build_verdict) == (2, "errored")
    assert facts["gate"] == "not decided (run error)"
    assert "FAILED" not in text and "FAILED" not in markdown


def test_an_interrupted_run_and_a_waived_gate() -> None:
    stopped = Outcome(mode="run", run_id="r", gate=Gate.decode({"passed": False}), interrupted=True,
                      error="interrupted (SIGINT/SIGTERM)")
    assert _facts(stopped)[0]["gate"] == "not decided (interrupted)"
    waived = Outcome(mode="run", run_id="r", gate=Gate.decode({"passed": False}), enforced=False)
    assert _facts(waived)[0]["gate"] == "FAILED  (--no-gate: not enforced)"
