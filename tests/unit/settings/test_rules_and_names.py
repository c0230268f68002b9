"""Every settings class owns its rules and its names: one rule per field (``RULES``), one name
table (``NAMES``: CLI flag, CI input, environment variable), and both front doors word a broken
rule from that table, from the same raise.

Table-driven over every settings class and every field with a value rule: the rule is raised
by ``validate`` naming the field; the CLI (``neens ...``, run for real through
``neens_action.cli.app.invoke``) prints ``neens: error: <flag> <reason>``; the CI step
(``neens_action.ci.main.run`` with ``INPUT_*`` variables) prints ``neens: error: input <input>:
<reason>``. Both fail before any request (the base URL is a closed port on this machine).
"""

from __future__ import annotations

import dataclasses
import importlib
import io
import os
from typing import Any

import pytest

from neens_action.ci import inputs as ci_inputs
from neens_action.ci import main as ci_main
from neens_action.ci.inputs import InputError
from neens_action.ci.modes.common import input_rules
from neens_action.cli.app import invoke
from neens_action.settings.connection import Connection
from neens_action.settings.names import CI, SettingError, speaking
from neens_action.settings.push import EvalPushSettings
from neens_action.settings.run import EvalRunSettings
from neens_action.settings.stress import StressSettings
from neens_action.settings.sweep import SweepSettings

BASE = "http://127.0.0.1:9"  # nothing listens: a request would fail differently
KEY = "nk_live_rules_and_names"

# field -> (typed bad value, the same as the text a user types)
BAD: dict[str, tuple[Any, str]] = {
    "min_pass_rate": (1.5, "1.5"), "min_avg_score": (2.0, "2"),
    "max_cost_delta_pct": (-150.0, "-150"), "max_latency_delta_pct": (-150.0, "-150"),
    "max_regressions": (-2, "-2"), "max_abs_failures": (-2, "-2"),
    "concurrency": (0, "0"), "workers": (0, "0"), "timeout": (0.0, "0"),
    "poll_interval": (0.0, "0"), "poll_timeout": (-1.0, "-1"),
    "git_sha": ("xyz", "xyz"), "pr_number": (0, "0"), "pr_url": ("ftp://x", "ftp://x"),
    "per_mode": (30, "30"), "ready_timeout": (0.0, "0"),
    "bar": (1.5, "1.5"), "pass_k": (0, "0"), "budget_usd": (-2.0, "-2"),
    "repeat": (0, "0"), "baseline_runs": (0, "0"), "on_inconclusive": ("maybe", "maybe"),
}

# each settings class: a valid object, the CLI command that builds it, and the CI mode
VALID: dict[type, dict[str, Any]] = {
    EvalRunSettings: dict(run_id="ppr_1", command=["true"]),
    EvalPushSettings: dict(agent_connection="conn", dataset="ds", version_label="v1"),
    StressSettings: dict(failure_modes=["fm"], version_label="v1", command=["true"]),
    SweepSettings: dict(create=True, name="n", version_label="v1", arms=["a=m"],
                        dataset_id="ds", command=["true"]),
}
CLI: dict[type, tuple[list[str], list[str]]] = {  # (command and its needs, what ends it)
    EvalRunSettings: (["eval", "run", "--run-id", "ppr_1"], ["--", "true"]),
    EvalPushSettings: (["eval", "push", "--agent-connection", "conn", "--dataset", "ds",
                        "--version-label", "v1"], []),
    StressSettings: (["stress", "run", "--failure-mode", "fm", "--version-label", "v1"],
                     ["--", "true"]),
    SweepSettings: (["sweep", "run", "--create", "--name", "n", "--version-label", "v1",
                     "--arm", "a=m", "--dataset-id", "ds"], ["--", "true"]),
}
COMMANDS = {EvalRunSettings: ("neens_action.cli.eval_run", "run_command"),
            EvalPushSettings: ("neens_action.cli.eval_push", "push_command"),
            StressSettings: ("neens_action.cli.stress", "run_command"),
            SweepSettings: ("neens_action.cli.sweep", "run_command")}


def _flags(cls: type) -> set[str]:
    """The flags the class's CLI command takes."""
    module, name = COMMANDS[cls]
    command = getattr(importlib.import_module(module), name)
    return {opt for param in command.params for opt in param.opts}
MODE = {EvalRunSettings: "run", EvalPushSettings: "push", StressSettings: "stress",
        SweepSettings: "sweep"}
CLASSES = [EvalRunSettings, EvalPushSettings, StressSettings, SweepSettings]


def _validate(settings: Any) -> Any:
    if isinstance(settings, SweepSettings):
        return settings.validate("run")
    if isinstance(settings, StressSettings):
        return settings.validate_stress({})
    return settings.validate()


def _raised(cls: type, field: str) -> SettingError:
    settings = cls(base_url=BASE, api_key=KEY, **VALID[cls])
    _validate(settings)  # valid as given
    setattr(settings, field, BAD[field][0])
    with pytest.raises(SettingError) as exc:
        _validate(settings)
    return exc.value


CASES = [(cls, field) for cls in CLASSES for field in cls.RULES]  # type: ignore[attr-defined]


def test_every_settings_class_has_one_rule_per_field_and_names_for_each() -> None:
    for cls in [Connection, *CLASSES]:
        fields = {f.name for f in dataclasses.fields(cls)}
        assert set(cls.NAMES) <= fields, cls  # the table names only real fields
        for field in getattr(cls, "RULES", {}):
            assert field in fields and field in cls.NAMES, (cls, field)
            assert field in BAD, f"{cls.__name__}.{field}: add a bad value to this table"
    # a rule shared by two classes is the same validator, not a second copy
    by_field: dict[str, set[int]] = {}
    for cls in CLASSES:
        for field, rule in cls.RULES.items():  # type: ignore[attr-defined]
            by_field.setdefault(field, set()).add(id(rule))
    assert {f: len(ids) for f, ids in by_field.items() if len(ids) > 1} == {}
    # the CI inputs only type their values: no range is written there
    assert not {"minimum", "maximum", "positive"} & {
        f.name for f in dataclasses.fields(ci_inputs.Input)}


@pytest.mark.parametrize(("cls", "field"), CASES,
                         ids=[f"{c.__name__}.{f}" for c, f in CASES])
def test_a_broken_rule_names_the_field_and_each_door_words_it(
        cls: type, field: str, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    err = _raised(cls, field)
    assert err.field == field
    name = cls.NAMES.name(field)  # type: ignore[attr-defined]
    reason = err.input_reason()
    assert err.cli_line().startswith(name.flag)
    assert err.cli_line() == f"{name.flag}{err.sep}{err.text('cli')}"

    # the CLI door, for real (when the command takes the flag)
    for var in [v for v in os.environ if v.startswith(("NEENS_", "GITHUB_", "GITLAB_", "CI"))]:
        monkeypatch.delenv(var)
    if name.flag in _flags(cls):
        head, tail = CLI[cls]
        argv = [*head, "--base-url", BASE, "--api-key", KEY, f"{name.flag}={BAD[field][1]}",
                *tail]
        assert invoke(argv) == 2
        assert capsys.readouterr().err.splitlines() == [f"neens: error: {err.cli_line()}"]
    else:  # e.g. push runs no agent: another command takes the flag, with the same rule
        rule = cls.RULES[field]
        assert any(name.flag in _flags(other) and other.RULES.get(field) is rule
                   for other in CLASSES), (cls, field)

    # the CI door, for real: the same rule, named as the input
    if name.input is None:
        assert field in ("git_sha", "pr_number", "pr_url"), field  # the CI step detects these
        return
    stream = io.StringIO()
    env = {"INPUT_MODE": MODE[cls], "INPUT_API-KEY": KEY, "INPUT_BASE-URL": BASE,
           f"INPUT_{name.input.upper()}": BAD[field][1]}
    assert ci_main.run(env, stream=stream) == 2
    assert stream.getvalue().splitlines() == [f"neens: error: input {name.input}: {reason}"]
    # ...and the mode's own settings, validated in the CI step's words, say the same
    with speaking(CI):
        assert str(err) == f"input {name.input}: {reason}"
    assert InputError.of(err).why == reason


def test_every_ruled_input_has_its_setting_rule() -> None:
    """The CI door checks an input against the rule of the setting it fills (no copy)."""
    rules = input_rules()
    for cls in CLASSES:
        for field, rule in cls.RULES.items():  # type: ignore[attr-defined]
            name = cls.NAMES.name(field).input  # type: ignore[attr-defined]
            if name:
                assert rules[name][0] == field and rules[name][1] is rule, (cls, field)
