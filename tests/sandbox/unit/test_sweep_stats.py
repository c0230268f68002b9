"""The sandbox's sweep figures and verdict (decision 12), as pure functions."""

from __future__ import annotations

from neens_sandbox import sweeps_stats as stats


def test_wilson_matches_the_textbook_values():
    assert stats.wilson(4, 8) == (0.215216, 0.784784)
    assert stats.wilson(8, 8) == (0.675592, 1.0)
    assert stats.wilson(0, 4) == (0.0, 0.489891)
    assert stats.wilson(0, 0) == (None, None)


def case(arm, item, passed, *, rep=1, cost=0.001, model="m", service=None, **session):
    return {"armId": arm, "rep": rep, "itemId": item, "passed": passed,
            "session": {"costUsd": cost, "models": [model], "serviceName": service,
                        "unpricedModels": [] if cost is not None else [model], **session}}


ARMS = [{"armId": "A", "label": "a", "model": "ma"}, {"armId": "B", "label": "b", "model": "mb"},
        {"armId": "C", "label": "c", "model": "mc"}]


def rows_for(cases, k=1, n=4, baseline="A"):
    return stats.arm_rows(ARMS, cases, k=k, n_items=n, baseline_id=baseline,
                          trials_per_arm=n * k)


def test_quality_counts_unscored_as_not_passed_and_null_without_data():
    cases = [case("A", "1", True), case("A", "2", None), case("B", "1", None)]
    rows = {r["armId"]: r for r in rows_for(cases, n=2)}
    assert rows["A"]["quality"]["rate"] == 0.5 and rows["A"]["quality"]["n"] == 2
    assert rows["B"]["quality"]["rate"] is None and rows["B"]["regressions"] == {"count": None}
    assert rows["C"]["quality"]["rate"] is None


def test_cost_partial_and_unpriced_never_zero():
    assert stats.cost([case("A", "1", True, cost=0.002), case("A", "2", True, cost=None)]) == {
        "costPerCaseUsd": 0.002, "priced": True, "partial": True, "pricedCases": 1, "cases": 2}
    assert stats.cost([case("A", "1", True, cost=None)])["costPerCaseUsd"] is None
    assert stats.cost([{"armId": "A", "itemId": "1", "passed": None, "session": None}]) == {
        "costPerCaseUsd": None, "priced": False, "partial": False, "pricedCases": 0, "cases": 0}


def test_cheapest_clearing_priced_arm_wins_with_its_saving():
    cases = [case(arm, str(i), True, cost=cost)
             for arm, cost in (("A", 0.004), ("B", 0.001), ("C", None)) for i in range(4)]
    rows = rows_for(cases)
    verdict = stats.verdict(rows, bar=0.9, baseline_id="A")
    assert verdict["outcome"] == "winner" and verdict["winner"]["label"] == "b"
    assert verdict["reason"] == "b clears the 90% bar at $0.001000 per case — 75% cheaper than a"
    assert verdict["excluded"] == [{"armId": "C", "label": "c", "reasonCode": "unpriced"}]
    assert verdict["tiedWith"] == ["a", "c"]


def test_only_unpriced_arms_clear_highest_rate_wins_with_a_reason_code():
    cases = ([case("A", str(i), i < 2) for i in range(4)]
             + [case("B", str(i), i < 3, cost=None) for i in range(4)]
             + [case("C", str(i), True, cost=None) for i in range(4)])
    verdict = stats.verdict(rows_for(cases), bar=0.7, baseline_id="A")
    assert verdict["winner"]["label"] == "c"
    assert verdict["reasonCode"] == "no_priced_arm_clears"
    assert "no fully priced arm clears" in verdict["reason"]


def test_partially_priced_arms_are_not_ranked_on_cost():
    cases = ([case("A", str(i), True, cost=0.01) for i in range(4)]
             + [case("B", str(i), True, cost=0.0001 if i else None) for i in range(4)])
    rows = rows_for(cases)
    verdict = stats.verdict(rows, bar=0.9, baseline_id="A")
    assert verdict["winner"]["label"] == "a"
    assert verdict["reason"].endswith("— a is the baseline")
    assert {"armId": "B", "label": "b", "reasonCode": "partially_priced"} in verdict["excluded"]


def test_none_clear_and_unavailable():
    cases = [case("A", str(i), i == 0) for i in range(4)]
    verdict = stats.verdict(rows_for(cases), bar=0.9, baseline_id="A")
    assert verdict == {"outcome": "none_clear", "excluded": [
        {"armId": "B", "label": "b", "reasonCode": "unpriced"},
        {"armId": "C", "label": "c", "reasonCode": "unpriced"}], "tiedWith": [], "winner": None,
        "reason": "no arm clears the 90% bar (best: a at 25%)"}
    assert stats.verdict(rows_for([]), bar=0.9, baseline_id="A")["outcome"] == "unavailable"


def test_winner_pricier_than_a_failing_baseline_says_so():
    cases = ([case("A", str(i), False, cost=0.001) for i in range(4)]
             + [case("B", str(i), True, cost=0.002) for i in range(4)])
    verdict = stats.verdict(rows_for(cases), bar=0.9, baseline_id="A")
    assert verdict["reason"].endswith("— 100% more expensive than a, which does not clear the bar")


def test_regressions_use_a_majority_of_reps():
    cases = []
    for rep in (1, 2, 3):
        cases += [case("A", "1", True, rep=rep), case("A", "2", rep != 3, rep=rep)]
        cases += [case("B", "1", rep == 1, rep=rep), case("B", "2", True, rep=rep)]
    rows = {r["armId"]: r for r in rows_for(cases, k=3, n=2)}
    assert rows["B"]["regressions"] == {"count": 1}  # item 1: baseline 3/3, b 1/3
    assert rows["A"]["regressions"] == {"count": 0}


def test_agents_group_by_service_name_and_warning_for_one_observed_model():
    cases = [case("A", "1", True, service="bot-1", model="same"),
             case("A", "2", False, service="bot-2", model="same"),
             case("B", "1", True, service="bot-1", model="same"),
             case("B", "2", True, service=None, model="same")]
    arms = ARMS[:2]
    agents = stats.agents(arms, cases, bar=0.9, baseline_id="A", k=1)
    assert [(a["agent"], a["itemCount"]) for a in agents] == [
        ("bot-1", 1), ("bot-2", 1), (None, 1)]
    assert agents[1]["verdict"]["reason"] == "no arm clears the 90% bar for bot-2 (best: a at 0%)"
    rows = stats.arm_rows(arms, cases, k=1, n_items=2, baseline_id="A")
    (warning,) = stats.warnings(rows)
    assert warning["code"] == "arms_same_observed_model" and warning["arms"] == ["a", "b"]
    different = [case("A", "1", True, model="x"), case("B", "1", True, model="y")]
    assert stats.warnings(stats.arm_rows(arms, different, k=1, n_items=1,
                                         baseline_id="A")) == []
