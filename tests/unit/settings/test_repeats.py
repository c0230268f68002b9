"""``--repeat``, ``--baseline-runs``, ``--on-inconclusive``: their defaults and the
combinations refused in one line (sharding, ``--run-id``), at both front doors."""

from __future__ import annotations

import io

import pytest

from neens_action.ci import main as ci_main
from neens_action.cli.app import invoke
from neens_action.settings.names import SettingError
from neens_action.settings.repeats import RepeatPlan, parse_repeat
from neens_action.settings.run import EvalRunSettings

BASE = "http://127.0.0.1:9"
KEY = "nk_live_repeats"


def test_defaults_follow_the_repeats() -> None:
    assert (RepeatPlan(1, None, None).history, RepeatPlan(1, None, None).noise_aware) == (1, False)
    plan = RepeatPlan("3", None, None)
    assert (plan.repeats, plan.adaptive, plan.history, plan.on_inconclusive) == (3, False, 5,
                                                                                 "warn")
    auto = RepeatPlan("AUTO", 2, "block")
    assert (auto.repeats, auto.adaptive, auto.history, auto.on_inconclusive) == (5, True, 2,
                                                                                 "block")
    assert RepeatPlan(1, 3, None).noise_aware and not RepeatPlan(1, 3, None).repeated


@pytest.mark.parametrize("value", ["0", "21", "x", "2.5", True, -1])
def test_bad_repeat_is_refused(value: object) -> None:
    with pytest.raises(SettingError) as exc:
        parse_repeat(value)
    assert exc.value.field == "repeat"


@pytest.mark.parametrize(("extra", "words"), [
    (["--run-id", "ppr_1"], "cannot drive --run-id"),
    (["--run-id", "ppr_1", "--shard", "1/2"], "not supported with --shard"),
])
def test_cli_refuses_repeats_it_cannot_do(extra: list[str], words: str,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["eval", "run", "--base-url", BASE, "--api-key", KEY, "--repeat", "3", *extra,
            "--", "true"]
    assert invoke(argv) == 2
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and words in err[0], err


@pytest.mark.parametrize("mode", ["push", "stress", "shard", "create", "finish"])
def test_ci_modes_other_than_run_refuse_repeat(mode: str) -> None:
    stream = io.StringIO()
    env = {"INPUT_MODE": mode, "INPUT_API-KEY": KEY, "INPUT_BASE-URL": BASE,
           "INPUT_REPEAT": "3"}
    assert ci_main.run(env, stream=stream) == 2
    lines = stream.getvalue().splitlines()
    assert lines == [f"neens: error: input repeat: does not apply to mode {mode}: repeats and "
                     "history are for mode run (a sweep has its own k)"], lines


def test_settings_keep_the_plan() -> None:
    s = EvalRunSettings(base_url=BASE, api_key=KEY, create=True, dataset="ds",
                        version_label="v", command=["true"], repeat="2").validate()
    assert s.noise_plan.repeats == 2 and s.noise_plan.history == 5
