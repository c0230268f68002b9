"""The GitLab component's typed inputs (templates/gitlab-ci.yml) against the front door's table.

GitLab (and gitlab-ci-local) refuse a plain YAML number for a ``string`` input, so every
number is ``type: number``, every switch ``type: boolean`` and every closed set ``options:``.
A number input cannot default to empty: "not set" is the input's ``unset`` marker, which the
front door reads as empty. Each test here runs once per typed input.
"""

from __future__ import annotations

from typing import Any

import pytest
import yaml

from neens_action.ci import inputs as ci_inputs
from neens_action.ci.modes.common import input_rules
from neens_action.settings.names import SettingError
from tests.helpers import ROOT

HEADER, BODY = yaml.safe_load_all((ROOT / "templates" / "gitlab-ci.yml").read_text())
SPEC: dict[str, dict[str, Any]] = HEADER["spec"]["inputs"]
TABLE = {i.name: i for i in ci_inputs.INPUTS}
COMPONENT_ONLY = {"stage", "job-name", "image", "allow-failure"}  # job keywords, not inputs
FRONT_DOOR = sorted(set(SPEC) - COMPONENT_ONLY)
NUMBERS = [n for n in FRONT_DOOR if TABLE[n].kind in ("int", "float")]
SWITCHES = [n for n in FRONT_DOOR if TABLE[n].kind == "bool"]
CHOICES = [n for n in FRONT_DOOR if TABLE[n].kind == "choice" or n == "mode"]
VARIABLES: dict[str, str] = BODY["$[[ inputs.job-name ]]"]["variables"]


def render(value: object) -> str:
    """What GitLab puts in the job variable for a typed value (JavaScript's String())."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def variable_of(name: str) -> str:
    return "NEENS_INPUT_" + name.upper().replace("-", "_")


def parsed(name: str, raw: str) -> object:
    return ci_inputs.parse_inputs({variable_of(name): raw}, [name])[name]


def test_every_input_kind_is_covered() -> None:
    assert {"max-regressions", "min-pass-rate", "timeout", "concurrency"} <= set(NUMBERS)
    assert {"no-gate", "require-winner", "doctor"} <= set(SWITCHES)
    assert {"comment", "sweep-mode", "mode"} <= set(CHOICES)
    typed = set(NUMBERS) | set(SWITCHES) | set(CHOICES)
    for name in set(FRONT_DOOR) - typed:  # the rest are free text: strings
        assert SPEC[name].get("type", "string") == "string", name
        assert TABLE[name].kind not in ("int", "float", "bool", "choice"), name


@pytest.mark.parametrize("name", NUMBERS)
def test_number_input_is_typed_and_its_default_means_the_front_door_default(name: str) -> None:
    spec, entry = SPEC[name], TABLE[name]
    assert spec.get("type") == "number", f"{name}: a plain YAML number must be accepted"
    assert "regex" not in spec and "options" not in spec, name
    default = spec["default"]
    assert isinstance(default, (int, float)) and not isinstance(default, bool), name
    if entry.default:  # the same default as everywhere else
        assert float(default) == float(entry.default), name
    else:  # "not set": the marker the front door reads as empty
        assert entry.unset and float(default) == float(entry.unset), name
        assert entry.unset in spec["description"], f"{name}: say what {entry.unset} means"
    assert parsed(name, render(default)) == ci_inputs.parse_value(entry, entry.default)
    # a value the marker stands for is refused by the input's own range: no real threshold
    # can be mistaken for "not set"
    if entry.unset:
        field, rule, _names = input_rules()[name]
        with pytest.raises(SettingError):
            rule(field, ci_inputs.parse_value(entry, entry.unset))
    assert VARIABLES[variable_of(name)] == f"$[[ inputs.{name} ]]", name


@pytest.mark.parametrize("name", NUMBERS)
def test_unquoted_number_behaves_as_the_quoted_string(name: str) -> None:
    entry = TABLE[name]
    value: int | float = 1 if entry.kind == "int" else 0.5  # within every setting's rule
    assert parsed(name, render(value)) == parsed(name, str(value)) == value


@pytest.mark.parametrize("name", SWITCHES)
def test_switch_input_is_boolean(name: str) -> None:
    spec, entry = SPEC[name], TABLE[name]
    assert spec.get("type") == "boolean", name
    assert "options" not in spec, name
    assert spec["default"] is (entry.default == "true"), name
    assert parsed(name, render(True)) is True and parsed(name, render(False)) is False
    assert parsed(name, "'true'".strip("'")) is True  # a quoted string still works


@pytest.mark.parametrize("name", CHOICES)
def test_closed_set_input_lists_its_options(name: str) -> None:
    from neens_action.ci.main import MODES

    spec = SPEC[name]
    assert spec.get("type", "string") == "string", name
    choices = list(MODES) if name == "mode" else list(TABLE[name].choices)
    assert spec["options"] == choices, name
    assert spec["default"] in choices, name
    for option in choices:
        parsed(name, option)  # every option is accepted by the front door


def test_the_issue_example_parses_as_quoted_values() -> None:
    unquoted = {"max-regressions": 0, "min-pass-rate": 0.9, "timeout": 120,
                "concurrency": 3, "no-gate": False}
    env = {variable_of(k): render(v) for k, v in unquoted.items()}
    quoted = {variable_of(k): s for k, s in {"max-regressions": "0", "min-pass-rate": "0.9",
                                             "timeout": "120", "concurrency": "3",
                                             "no-gate": "false"}.items()}
    names = list(unquoted)
    assert ci_inputs.parse_inputs(env, names).values == ci_inputs.parse_inputs(quoted,
                                                                                names).values


@pytest.mark.parametrize("marker", ["-1", "-1.0", " -1 "])
def test_the_unset_marker_falls_back_like_an_empty_value(marker: str) -> None:
    assert parsed("max-regressions", marker) is None
    assert parsed("min-pass-rate", marker) is None
    assert parsed("max-cost-delta-pct", "-1000") is None
    assert parsed("max-cost-delta-pct", "-1") == -1.0  # a real (negative) threshold
    field, rule, _names = input_rules()["max-cost-delta-pct"]
    with pytest.raises(SettingError, match="at least -100"):
        rule(field, parsed("max-cost-delta-pct", "-150"))


@pytest.mark.parametrize("mode", SPEC["mode"]["options"])
def test_component_defaults_are_never_an_input_the_mode_refuses(mode: str) -> None:
    """Every variable the component sets at its default (a number at its "not set" marker,
    a switch at false) counts as not set: no mode refuses it as an input it would ignore."""
    from neens_action.ci.modes.common import NOT_FOR, explicitly_set

    env = {}
    for name in FRONT_DOOR:
        default = SPEC[name]["default"]
        env[variable_of(name)] = render(default)
    for name in NOT_FOR.get(mode, ()):
        if name in SPEC and name != "version-label":  # defaults to $CI_COMMIT_SHORT_SHA
            assert not explicitly_set(env, name), (mode, name, env[variable_of(name)])
    env[variable_of("k")] = "3"
    assert explicitly_set(env, "k")
