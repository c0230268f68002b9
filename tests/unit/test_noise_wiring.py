"""The wiring of the noise-aware verdict: the rep create bodies, the exit code and build
verdict when ``Outcome.noise`` is set, and the noise rules in the ci-result body."""

from __future__ import annotations

from neens_action.api.answers import Gate, Run
from neens_action.flows.repeats import rep_body
from neens_action.noise import NoiseRules, NoiseSettings, decide, judge, records_from
from neens_action.noise.evidence import NoiseEvidence, RepRun
from neens_action.outcome import Outcome
from neens_action.verdict import ci_result_payload
from neens_action.verdict import decide as decide_exit

BODY = {"name": "pr", "version_label": "pr", "dataset_id": "ds", "branch": "main",
        "gate": {"max_regressions": 0, "min_pass_rate": 0.9, "cost": {"max_usd": 1}}}


def test_rep_bodies_drop_the_noise_knobs_and_only_rep_1_carries_the_branch() -> None:
    first = rep_body(BODY, 1, 3)
    assert first["gate"] == {"cost": {"max_usd": 1}} and first["branch"] == "main"
    assert "dataset_version_id" not in first
    second = rep_body(BODY, 2, 3, "dsv_1")
    assert "branch" not in second and second["dataset_version_id"] == "dsv_1"
    assert second["name"] == "pr (rep 2/3)" and second["gate"] == {"cost": {"max_usd": 1}}
    assert "gate" not in rep_body({**BODY, "gate": {"max_regressions": 0}}, 1, 2)
    assert BODY["gate"]["max_regressions"] == 0  # the build's body is left as it was


def _outcome(history: list[dict[str, bool]], reps: list[dict[str, bool]], *,
             on_inconclusive: str = "warn", rep_gates: tuple[bool | None, ...] = (True, True),
             max_regressions: int | None = 0) -> Outcome:
    records = records_from(history, reps)
    verdict = decide(records, NoiseSettings())
    decision = judge(verdict, NoiseRules(max_regressions=max_regressions,
                                         on_inconclusive=on_inconclusive))  # type: ignore[arg-type]
    noise = NoiseEvidence(repeat=len(reps), reps=tuple(
        RepRun(i, f"ppr_{i}", "completed", None, g, len(reps[0]))
        for i, g in enumerate(rep_gates, 1)), history=(), history_requested=len(history),
        history_end="", records=tuple(records), verdict=verdict, decision=decision)
    return Outcome(mode="run", run_id="ppr_1", gate=Gate(passed=True),
                   run=Run(id="ppr_1", status="completed", completed=len(reps[0]),
                           completed_said=True, empty=False), noise=noise)


STABLE = {f"i{n}": True for n in range(40)}


def test_a_regression_held_by_the_noise_verdict_blocks() -> None:
    broken = {**STABLE, **{f"i{n}": False for n in range(5)}}
    outcome = _outcome([STABLE] * 5, [broken] * 3, rep_gates=(True, True, True))
    assert outcome.noise is not None and outcome.noise.decision.outcome == "block"
    assert decide_exit(outcome) == (1, "blocked")
    rules = [r for r in ci_result_payload(outcome)["rules"] if r["rule"].startswith("noise:")]
    assert {"rule": "noise:max-regressions", "observed": "5", "threshold": "0",
            "severity": "block", "outcome": "fail", "message": ""} in rules


def test_no_change_passes_inconclusive_warns_or_blocks() -> None:
    assert decide_exit(_outcome([STABLE] * 5, [STABLE] * 3,
                                rep_gates=(True, True, True))) == (0, "passed")
    small = {"a": True, "b": True}
    assert decide_exit(_outcome([small], [small, small])) == (0, "warned")
    assert decide_exit(_outcome([small], [small, small], on_inconclusive="block")) == (
        1, "blocked")


def test_a_reps_own_server_gate_stays_authoritative() -> None:
    outcome = _outcome([STABLE] * 5, [STABLE] * 3, rep_gates=(True, False, True))
    assert decide_exit(outcome) == (1, "blocked")
    outcome.enforced = False
    assert decide_exit(outcome) == (0, "warned")


def test_without_noise_the_payload_is_todays() -> None:
    outcome = Outcome(mode="run", run_id="ppr_1", gate=Gate(passed=True),
                      run=Run(id="ppr_1", status="completed", completed=1,
                              completed_said=True, empty=False))
    assert ci_result_payload(outcome)["rules"] == []
