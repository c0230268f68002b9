"""Exit code / build verdict (spec 8.2) and the ci-result body (spec 4.9)."""

from __future__ import annotations

import math

import pytest

from neens_action import __version__
from neens_action.api.answers import Gate, Run
from neens_action.outcome import Invocation, Outcome
from neens_action.policy.result import PolicyEval as Eval
from neens_action.policy.result import RuleResult as Result
from neens_action.verdict import ci_result_payload, decide, decide_step, decide_sweep, decide_watch
from tests.fakes.sweeps import sweep_outcome


def outcome(**kw) -> Outcome:
    """An outcome as the flows make it: the gate answer decoded (None: no gate answer)."""
    kw.setdefault("gate", {"passed": True})
    if kw["gate"] is not None:
        kw["gate"] = Gate.decode(kw["gate"])
    if isinstance(kw.get("run"), dict):
        kw["run"] = Run.decode(kw["run"])
    return Outcome(mode="run", run_id="ppr_1", **kw)


@pytest.mark.parametrize("kw, expected", [
    ({}, (0, "passed")),
    ({"gate": {"passed": False}}, (1, "blocked")),
    ({"gate": {"passed": "yes"}}, (1, "blocked")),  # anything but true is a fail
    ({"gate": None}, (2, "errored")),  # nothing measured is never a pass
    ({"error": "poll timeout"}, (2, "errored")),
    ({"error": "x", "gate": {"passed": True}}, (2, "errored")),
    ({"interrupted": True, "error": "interrupted"}, (130, "errored")),
    ({"policy_eval": Eval(blocked=True, warned=False)}, (1, "blocked")),
    ({"policy_eval": Eval(blocked=False, warned=True)}, (0, "warned")),
    ({"gate": {"passed": True, "guardrailWarnings": [1]}}, (0, "warned")),
    ({"gate": {"passed": False}, "enforced": False}, (0, "warned")),
    ({"policy_eval": Eval(blocked=True, warned=False), "enforced": False}, (0, "warned")),
    ({"error": "boom", "enforced": False}, (2, "errored")),  # --no-gate waives the gate only
])
def test_decide(kw, expected):
    assert decide(outcome(**kw)) == expected


def test_ci_result_without_policy():
    o = outcome(gate={"passed": False})
    o.exit_code, o.build_verdict = decide(o)
    assert ci_result_payload(o) == {
        "verdict": "blocked", "exit_code": 1, "enforced": True, "gate_passed": False,
        "rules": [], "policy": None,
        "sdk": {"name": "neens-action", "version": __version__, "language": "python"},
    }


def test_ci_result_with_policy_rules_and_non_finite_numbers():
    results = [Result("cost", "warn", "warn", math.inf, 20.0, "cost +inf%"),
               Result("metric[f]", "block", "fail", 0.5, {"metric": "f", "min_avg": 0.8},
                      "f 0.5 < 0.8")]
    o = outcome(policy_eval=Eval(blocked=True, warned=True, results=results),
                policy_identity={"name": "pol.json", "sha256": "ab" * 32, "overridden": False},
                enforced=False)
    body = ci_result_payload(o)
    assert body["verdict"] == "warned" and body["exit_code"] == 0 and body["enforced"] is False
    assert body["gate_passed"] is True
    assert body["rules"] == [
        {"rule": "cost", "observed": None, "threshold": 20.0, "severity": "warn",
         "outcome": "warn", "message": "cost +inf%"},
        {"rule": "metric[f]", "observed": 0.5, "threshold": {"metric": "f", "min_avg": 0.8},
         "severity": "block", "outcome": "fail", "message": "f 0.5 < 0.8"},
    ]
    assert body["policy"]["name"] == "pol.json"


def test_ci_result_errored_and_interrupted():
    o = outcome(gate=None, error="no items to replay")
    assert ci_result_payload(o)["verdict"] == "errored"
    assert ci_result_payload(o)["exit_code"] == 2
    assert ci_result_payload(o)["gate_passed"] is None
    i = outcome(interrupted=True, error="interrupted")
    assert ci_result_payload(i)["exit_code"] == 130


# ---------------------------------------------------------------- the other rules


@pytest.mark.parametrize("kw, expected", [
    ({"mode": "create", "run_id": "ppr_1"}, (0, "created")),
    ({"mode": "shard", "run_id": "ppr_1"}, (0, "replayed")),
    ({"mode": "create", "run_id": ""}, (2, "errored")),  # nothing was created: no pass
    ({"mode": "shard", "run_id": "ppr_1", "error": "agents failed"}, (2, "errored")),
    ({"mode": "shard", "run_id": "ppr_1", "interrupted": True}, (130, "errored")),
])
def test_decide_step_never_claims_a_pass(kw, expected):
    assert decide_step(Outcome(**kw)) == expected


def test_decide_watch():
    assert decide_watch(1, interrupted=False) == 1
    assert decide_watch(0, interrupted=True) == 130
    assert decide_watch(None, interrupted=False) == 2  # no iteration ran: nothing measured


def _cmp(outcome: str, status: str = "completed", **kw) -> dict:
    return {"sweepId": "msw", "status": status, "verdict": {"outcome": outcome}, **kw}


@pytest.mark.parametrize("kw, expected", [
    # preview: an estimate (refusals included) is 0, none is 2
    ({"command": "preview", "estimate": {"totalRuns": 1}}, (0, "passed")),
    ({"command": "preview"}, (2, "errored")),
    # start/get: the state rule
    ({"command": "get", "sweep": {"status": "running"}}, (0, "passed")),
    ({"command": "get", "sweep": {"status": "running"}, "require_all_arms": True},
     (1, "blocked")),
    ({"command": "get"}, (2, "errored")),
    # decide / mode sweep: the require-winner rule
    ({"command": "decide", "comparison": _cmp("none_clear"), "require_winner": False},
     (0, "passed")),
    ({"command": "decide", "comparison": _cmp("none_clear"), "require_winner": True},
     (1, "blocked")),
    ({"command": "run", "comparison": _cmp("none_clear"), "require_winner": False},
     (0, "passed")),
    # sweep run (require_winner None): a winner passes, none fails, void errors
    ({"command": "run", "comparison": _cmp("winner")}, (0, "passed")),
    ({"command": "run", "comparison": _cmp("none_clear")}, (1, "blocked")),
    ({"command": "run", "comparison": _cmp("winner", comparable=False)}, (2, "errored")),
    ({"command": "run", "comparison": _cmp("winner", status="running")}, (2, "errored")),
    ({"command": "run"}, (2, "errored")),  # no comparison: nothing was measured
    ({"command": "run", "comparison": _cmp("winner"), "error": "x"}, (2, "errored")),
    ({"command": "run", "comparison": _cmp("winner"), "interrupted": True}, (130, "errored")),
])
def test_decide_sweep(kw, expected):
    assert decide_sweep(sweep_outcome(**kw)) == expected


# ---------------------------------------------------------------- fail closed


def _run(status: str = "completed", completed: int = 1, **kw: object) -> dict:
    return {"id": "ppr_1", "status": status, "completed": completed, "total": 1, **kw}


def _inv(ok: bool) -> Invocation:
    return Invocation("it_1", "q", returncode=0 if ok else 3, error=None if ok else "rc=3")


@pytest.mark.parametrize("kw, why", [
    ({"run": _run(completed=0), "enforced": False}, "no item was scored"),
    ({"run": _run(completed=0)}, "no item was scored"),
    ({"run": _run("cancelled")}, "not completed"),
    ({"run": _run("failed"), "gate": {"passed": False}}, "not completed"),
    ({"run": _run(), "invocations": [_inv(False), _inv(False)], "enforced": False},
     "every agent invocation failed"),
    ({"run": _run(completed=None, items=[{"passed": None}])}, "no item was scored"),
])
def test_nothing_measured_is_a_run_error_whatever_no_gate_says(kw, why):
    o = outcome(**kw)
    assert decide(o) == (2, "errored")
    assert why in (o.error or "")


@pytest.mark.parametrize("kw", [
    {"run": _run()},
    {"run": _run("completed_with_regressions", completed=3)},
    {"run": _run(), "invocations": [_inv(False), _inv(True)]},
    {"run": _run(completed=None, items=[{"passed": True}, {"passed": None}])},
])
def test_a_completed_scored_run_with_a_passed_gate_passes(kw):
    assert decide(outcome(**kw)) == (0, "passed")


def test_a_console_run_keeps_only_failures_and_counts_the_successes():
    """A console run keeps only the failed invocations: one failure among many successes
    is not "every agent invocation failed"."""
    o = outcome(run=_run(), invocations=[_inv(False)], agents_ok=9)
    assert decide(o) == (0, "passed")
    o = outcome(run=_run(), invocations=[_inv(False)], agents_ok=0)
    assert decide(o) == (2, "errored") and "every agent invocation failed" in (o.error or "")
