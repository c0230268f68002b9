"""Numbers with units (report/fmt.py) and one count per fact (report/build/eval.py)."""

from __future__ import annotations

from neens_action.outcome import Invocation
from neens_action.report import fmt
from neens_action.report.build.eval import build_eval_report
from neens_action.settings.names import CI, speaking
from neens_action.settings.policy_file import fmt as rule_number
from tests.unit.report.cases_honest import collapsed, prod_window_empty, timed_out_partial


def test_relative_changes_of_tiny_baselines_read_as_factors() -> None:
    assert fmt.relative(23.4) == "+23 %" and fmt.relative(-4.25) == "-4.2 %"
    assert fmt.relative(899) == "+899 %" and fmt.relative(1567) == "×16.7"
    assert fmt.relative(134983.2) == "×1,351"
    assert fmt.change_pct(0.00019, 0.0002104) == "+11 %"
    assert fmt.change_pct(0, 5) == "" and fmt.change_pct(5, 0) == ""  # not measured
    assert fmt.change_pct(None, 5) == ""


def test_latency_below_a_millisecond_is_never_zero() -> None:
    assert fmt.ms(0.31) == "0.31 ms" and fmt.ms(0.004) == "0.004 ms"
    assert fmt.ms(0) == "0 ms" and fmt.ms(401.2) == "401 ms" and fmt.ms(12345) == "12.3 s"


def test_no_e_notation_for_p_values_and_rule_numbers() -> None:
    assert fmt.p_value(2.8e-05) == "p < 0.001" and fmt.p_value(0.0321) == "p = 0.032"
    assert rule_number(1e-06) == "0.000001" and rule_number(1.5e16) == "15000000000000000"
    assert rule_number(0.0002104) == "0.0002104" and rule_number(20.0) == "20"


def test_a_number_never_wraps_away_from_its_unit() -> None:
    text = fmt.unbreakable("0 % ▼ 100 pp vs 100 % · 401 ms · 3 s · 2 items")
    assert text == ("0\u00a0% ▼\u00a0100\u00a0pp vs 100\u00a0% · 401\u00a0ms · 3\u00a0s · "
                    "2 items")


def test_a_console_run_counts_every_agent_not_only_the_failed_ones() -> None:
    """A console-only run keeps only the failed invocations (``agents_ok`` counts the
    others): the total is still every agent."""
    outcome = timed_out_partial()
    outcome.invocations = [i for i in outcome.invocations if not i.ok]
    outcome.agents_ok = 2
    report = build_eval_report(outcome)
    assert report.agent_total == 8
    assert ("agents", "6 of 8 agents timed out (after 60 s)") in report.facts
    assert ("regressions", "0") in report.facts and report.outputs["regressions"] == "0"
    assert report.headline == "Blocked: 6 of 8 agents timed out (after 60 s)."
    assert report.reasons == []  # "regressions 6 > 0" were the agent failures


def test_a_real_regression_beside_agent_failures_is_counted_once() -> None:
    outcome = timed_out_partial()
    outcome.invocations[0] = Invocation("it_1", "q", returncode=0, duration_s=0.5)
    report = build_eval_report(outcome)
    assert ("regressions", "1") in report.facts
    assert report.reasons == ["regressions 1 > max_regressions 0"]
    assert report.headline == ("Blocked: 5 of 8 agents timed out (after 60 s); regressions 1 "
                               "(max 0).")
    statuses = [i.status for i in report.items if i.state != "pass"]
    assert statuses == ["regressed"] + ["agent_failed"] * 5


def test_caveats_name_settings_in_the_words_of_the_door() -> None:
    cli = build_eval_report(prod_window_empty()).caveats
    with speaking(CI):
        ci = build_eval_report(prod_window_empty()).caveats
        passed = build_eval_report(collapsed()).caveats[-1]
    assert cli[0].startswith("--max-regressions could not be evaluated: no production "
                             "session of the last 1h matched these items.")
    assert "(set --baseline to prod:30d)" in cli[0]
    assert ci[0].startswith("the max-regressions input could not be evaluated")
    assert "(set the baseline input to prod:30d)" in ci[0]
    assert passed.endswith("set the min-pass-rate input to block on it.")
    assert not any("`" in c for c in [*cli, *ci, passed])
