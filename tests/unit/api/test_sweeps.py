"""The sweep answers decoded at the client: the estimate envelope, tolerance of odd fields,
and ``raw`` kept as the server sent it (``--json``)."""

from __future__ import annotations

from neens_action.api.sweep_comparison import SweepComparison
from neens_action.api.sweeps import Estimate, Sweep


def test_unwrap_estimate_bare_and_enveloped():
    est = {"totalRuns": 2, "perArm": []}
    bare, refusals = Estimate.unwrap(est)
    assert bare is not None and bare.total_runs == 2 and bare.raw is est and refusals == ()
    wrapped, refusals = Estimate.unwrap({"estimate": est, "refusals": ["no"]})
    assert wrapped is not None and wrapped.raw is est and refusals == ("no",)
    assert Estimate.unwrap(None) == (None, ())
    assert Estimate.unwrap({"refusals": ["x"]}) == (None, ("x",))


def test_odd_fields_read_as_their_defaults_never_crash():
    sweep = Sweep.decode({"status": None, "passK": True, "arms": ["x", {"runs": [3, {}]}],
                          "estimate": "nope"})
    assert sweep.status is None and sweep.pass_k is None and sweep.estimate is None
    assert len(sweep.arms) == 1 and sweep.arms[0].runs[0].run_id == ""
    assert sweep.runs_progress() == (0, 0)
    assert Sweep.decode([1, 2]).arms == ()
    odd = SweepComparison.decode({"arms": [{"quality": "x", "cost": 5, "regressions": {}}],
                                  "verdict": "winner", "warnings": "w", "bar": 1})
    assert odd.arms[0].quality.rate is None and odd.arms[0].regressions is None
    assert odd.verdict.outcome is None and odd.warnings == () and odd.bar is None


def test_the_winner_named_only_by_id_is_looked_up_among_the_arms():
    comparison = SweepComparison.decode({
        "verdict": {"outcome": "winner", "winnerArmId": "a2"},
        "arms": [{"armId": "a1", "label": "big"}, {"armId": "a2", "label": "mini"}]})
    assert comparison.verdict.winner == "mini" and comparison.verdict.has_winner
    assert SweepComparison.decode({"verdict": {"outcome": "none_clear", "winner": "x"}}
                                  ).verdict.winner == ""


def test_for_sweep_adds_the_id_only_when_the_server_left_it_out():
    answer = {"status": "completed"}
    added = SweepComparison.decode(answer).for_sweep("msw-1")
    assert added.sweep_id == "msw-1" and added.raw == {"status": "completed", "sweepId": "msw-1"}
    assert answer == {"status": "completed"}  # the answer itself is not changed
    kept = SweepComparison.decode({"sweepId": "msw-9"}).for_sweep("msw-1")
    assert kept.sweep_id == "msw-9" and kept.raw == {"sweepId": "msw-9"}
