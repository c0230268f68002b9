"""``neens ci``: flags and the environment reach the one CI front door (the pipeline is replaced
by a recorder, as in tests/unit/test_jobs.py), the command after ``--`` is the agent command,
a flag wins over the environment, and secrets have no flag."""

from __future__ import annotations

import pytest

from neens_action.ci import inputs as ci_inputs
from neens_action.cli.app import invoke
from neens_action.cli.ci import FLAGGED, input_environment
from neens_action.jobs import JOBS
from tests.unit.test_jobs import URL, Recorder, recorder  # noqa: F401 (fixture)


def test_every_input_but_the_secrets_has_a_flag() -> None:
    names = {spec.name for spec in FLAGGED}
    assert names == {s.name for s in ci_inputs.INPUTS if s.kind != "secret"}
    assert {"api-key", "github-token"}.isdisjoint(names)


def test_flag_wins_over_every_spelling_in_the_environment() -> None:
    env = {"INPUT_MAX-REGRESSIONS": "5", "INPUT_MAX_REGRESSIONS": "6",
           "NEENS_INPUT_MAX_REGRESSIONS": "7", "NEENS_INPUT_DATASET": "ds"}
    out = input_environment(env, {"max-regressions": "0", "dataset": None})
    parsed = ci_inputs.parse_inputs(out, ["max-regressions", "dataset"])
    assert parsed["max-regressions"] == 0 and parsed["dataset"] == "ds"
    assert "INPUT_MAX-REGRESSIONS" not in out and "INPUT_MAX_REGRESSIONS" not in out


def test_words_after_dashes_are_the_command_quoted_once() -> None:
    out = input_environment({}, {}, ("python3", "my agent.py", "--x=a b"))
    assert ci_inputs.parse_inputs(out, ["command"])["command"] == [
        "python3", "my agent.py", "--x=a b"]


def test_command_twice_is_a_usage_error(recorder: Recorder) -> None:  # noqa: F811
    assert invoke(["ci", "--command", "a", "--", "b"]) == 2
    assert recorder.calls == []


def test_flags_and_environment_resolve_the_run_job(recorder: Recorder,  # noqa: F811
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NEENS_INPUT_BASE_URL", URL)
    monkeypatch.setenv("NEENS_API_KEY", "nk_test")
    monkeypatch.setenv("NEENS_INPUT_DATASET", "ds_env")
    code = invoke(["ci", "--version-label", "v", "--max-regressions", "0",
                   "--min-pass-rate", "0.9", "--timeout", "120", "--concurrency", "3",
                   "--no-gate", "false", "--", "python3", "agent.py"])
    assert code == 0
    job, settings = recorder.calls[0]
    assert (job.name, job.flow) == ("run", JOBS["run"].flow)  # the registry job (CI wording)
    assert settings.base_url == URL and settings.api_key == "nk_test"
    assert settings.dataset == "ds_env" and settings.command == ["python3", "agent.py"]
    assert settings.max_regressions == 0 and settings.min_pass_rate == 0.9
    assert settings.timeout == 120 and settings.concurrency == 3


@pytest.mark.parametrize("mode", ["push", "sweep", "finish"])
def test_mode_flag_picks_the_mode(recorder: Recorder, mode: str,  # noqa: F811
                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NEENS_API_KEY", "nk_test")
    extra = {"push": ["--agent-connection", "c", "--dataset", "ds", "--version-label", "v"],
             "sweep": ["--arms", "a=gpt-4o", "--dataset", "ds", "--version-label", "v",
                       "--command", "agent"],
             "finish": ["--run-id", "ppr_1"]}[mode]
    assert invoke(["ci", "--mode", mode, "--base-url", URL, *extra]) == 0
    assert (recorder.calls[0][0].name, recorder.calls[0][0].flow) == (mode, JOBS[mode].flow)


def test_secret_flag_does_not_exist(recorder: Recorder,  # noqa: F811
                                    capsys: pytest.CaptureFixture[str]) -> None:
    assert invoke(["ci", "--api-key", "nk_live_x"]) == 2
    err = capsys.readouterr().err
    assert "No such option" in err and "nk_live_x" not in err
    assert recorder.calls == []


def test_bad_input_is_one_line_exit_2(recorder: Recorder,  # noqa: F811
                                      capsys: pytest.CaptureFixture[str]) -> None:
    assert invoke(["ci", "--base-url", URL, "--min-pass-rate", "2", "--", "a"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ["neens: error: input min-pass-rate: must be at most 1, got 2"]
    assert recorder.calls == []
