"""The CI front door without network: inputs, platforms, validation lines, agent env."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from neens_action.ci import inputs as ci_inputs
from neens_action.ci import main as ci
from neens_action.ci.inputs import InputError, parse_inputs
from neens_action.ci.modes.common import check_input_rules
from neens_action.settings.names import SettingError
from tests.fakes.gh_runner_log import commands, run_commands

ROOT = Path(__file__).resolve().parents[3]
KEY = "nk_live_unit_secret_0001"


def test_input_sources_in_order() -> None:
    env = {"INPUT_API-KEY": "a", "INPUT_API_KEY": "b", "NEENS_INPUT_API_KEY": "c",
           "NEENS_API_KEY": "d"}
    assert parse_inputs(env)["api-key"] == "a"
    del env["INPUT_API-KEY"]
    assert parse_inputs(env)["api-key"] == "b"
    del env["INPUT_API_KEY"]
    assert parse_inputs(env)["api-key"] == "c"
    env["NEENS_INPUT_API_KEY"] = "   "  # empty counts as unset (GitHub passes '' for unset)
    assert parse_inputs(env)["api-key"] == "d"
    assert parse_inputs({})["api-key"] is None


def test_defaults_and_types() -> None:
    inp = parse_inputs({
        "INPUT_COMMAND": "python -m agent --flag 'two words'",
        "INPUT_MIN-PASS-RATE": "0.9", "INPUT_MAX-REGRESSIONS": "0", "INPUT_NO-GATE": "TRUE",
        "INPUT_CONCURRENCY": "4", "INPUT_COMMENT": "New", "INPUT_SUMMARY": "false",
    })
    assert inp["command"] == ["python", "-m", "agent", "--flag", "two words"]
    assert inp["min-pass-rate"] == 0.9 and inp["max-regressions"] == 0
    assert inp["no-gate"] is True and inp["concurrency"] == 4
    assert inp["comment"] == "new" and inp["summary"] is False
    assert inp["create"] == "auto" and inp["mode"] == "run"
    assert inp["poll-interval"] == 5.0 and inp["poll-timeout"] == 1800.0
    assert inp["junit-file"] == "neens-junit.xml" and inp["dotenv-file"] == "neens.env"


@pytest.mark.parametrize(
    ("name", "value", "why"),
    [
        ("min-pass-rate", "1.5", "must be at most 1, got 1.5"),
        ("min-pass-rate", "ninety", "must be a number, got 'ninety'"),
        ("min-pass-rate", "nan", "must be a finite number, got 'nan'"),
        ("max-regressions", "-2", "must be 0 or more, got -2"),
        ("max-regressions", "1.5", "must be a whole number, got '1.5'"),
        ("concurrency", "0", "must be 1 or more, got 0"),
        ("timeout", "0", "must be greater than 0, got 0"),
        ("no-gate", "maybe", "must be true or false, got 'maybe'"),
        ("create", "sometimes", "must be true, false or auto, got 'sometimes'"),
        ("comment", "sticky", "must be one of update, new, off, got 'sticky'"),
        ("command", "python 'unterminated", "cannot be split into words (No closing quotation)"),
        ("base-url", "neens.example.com", "must be an http(s) URL such as "
                                          "https://neens.example.com, got 'neens.example.com'"),
        ("base-url", "https://user:pw@neens.example.com", "must be an http(s) URL"),
        ("dataset", "ds\nrefunds", "must be one line without control characters"),
    ],
)
def test_bad_values_name_the_input(name: str, value: str, why: str) -> None:
    """A value of the wrong type is refused when typed; a value that breaks its setting's
    rule by the settings' rule, named as the input (what the CI door does first)."""
    with pytest.raises((InputError, SettingError)) as raised:
        check_input_rules(parse_inputs({f"INPUT_{name.upper()}": value}))
    err = raised.value
    err = InputError.of(err) if isinstance(err, SettingError) else err
    assert err.name == name
    assert err.why.startswith(why)
    assert str(err) == f"input {name}: {err.why}"


def test_create_auto_and_explicit() -> None:
    assert parse_inputs({"INPUT_CREATE": "auto"})["create"] == "auto"
    assert parse_inputs({"INPUT_CREATE": "yes"})["create"] is True
    assert parse_inputs({"INPUT_CREATE": "off"})["create"] is False


def test_install_may_be_multi_line() -> None:
    script = "pip install -r requirements.txt\necho done"
    assert parse_inputs({"INPUT_INSTALL": script})["install"] == script


def test_secrets_are_collected_for_masking_and_never_repr() -> None:
    env = {"INPUT_API-KEY": KEY, "INPUT_GITHUB-TOKEN": "ghs_x", "NEENS_GITLAB_TOKEN": "glpat",
           "NEENS_API_KEY": "  "}
    assert ci_inputs.secrets_in(env) == [KEY, "ghs_x", "glpat"]
    assert KEY not in repr(parse_inputs(env))


def test_docs_table_is_in_sync() -> None:
    doc = (ROOT / "docs" / "internals.md").read_text(encoding="utf-8")
    start = doc.index("<!-- ci-inputs-table")
    body = doc[doc.index("\n", start) + 1: doc.index("<!-- /ci-inputs-table -->")]
    assert body == ci_inputs.markdown_table(), (
        "docs/internals.md 'CI inputs' table is stale: regenerate it with "
        "`python -m neens_action.ci.inputs`"
    )


def _run(env: dict[str, str]) -> tuple[int, str]:
    stream = io.StringIO()
    code = ci.run(env, stream=stream)
    return code, stream.getvalue()


def _github(**inputs: str) -> dict[str, str]:
    env = {"GITHUB_ACTIONS": "true", "INPUT_API-KEY": KEY, "INPUT_BASE-URL": "http://127.0.0.1:9",
           "INPUT_COMMAND": "true"}
    env.update({f"INPUT_{k.upper().replace('_', '-')}": v for k, v in inputs.items()})
    return env


def test_github_bad_input_is_one_annotation_after_the_masks() -> None:
    code, log = _run(_github(min_pass_rate="2"))
    assert code == 2
    lines = log.splitlines()
    assert lines[0] == f"::add-mask::{KEY}"
    assert lines[1].startswith("::stop-commands::")  # the shield from the line after the masks
    ran = [(c.name, c.data) for c in run_commands(log)]
    assert ran == [("add-mask", KEY),
                   ("error", "min-pass-rate: must be at most 1, got 2")]
    assert commands(log)[-1].name == "resume"  # commands are on again for the next step
    assert "Traceback" not in log and log.count(KEY) == 1


@pytest.mark.parametrize(
    ("inputs", "expected"),
    [
        ({"command": ""}, "::error title=neens input::command: is required for mode run"),
        ({"mode": "dance"}, "::error title=neens input::mode: must be one of run"),
        ({"create": "false"}, "::error title=neens input::run-id: nothing to run: set run-id, "
                              "or set dataset"),
        ({"run_id": "ppr_1", "create": "true"},
         "::error title=neens input::create: cannot be true together with run-id"),
        ({"run_id": "ppr_1", "baseline": "yesterday"},
         "::error title=neens input::baseline: 'yesterday' is not a baseline: use "
         "branch:<name>, run:<run id>, prod or prod:<range>"),
        ({"create": "true"}, "::error title=neens input::dataset: is required to create a run"),
        ({"dataset": "ds_1", "version_label": "v1", "gate_policy": "missing-policy.json"},
         "::error title=neens input::gate-policy:"),
        ({"working_directory": "does/not/exist"},
         "::error title=neens input::working-directory: 'does/not/exist' is not a directory"),
    ],
)
def test_github_cross_field_errors_name_inputs_not_flags(inputs: dict[str, str],
                                                         expected: str) -> None:
    env = _github(**inputs)
    if inputs.get("command") == "":
        env.pop("INPUT_COMMAND")
    code, log = _run(env)
    assert code == 2
    errors = [line for line in log.splitlines() if line.startswith("::error")]
    assert len(errors) == 1 and errors[0].startswith(expected), errors
    assert "--" not in errors[0].split("::", 2)[2]


def test_gitlab_bad_input_is_one_plain_line() -> None:
    env = {"GITLAB_CI": "true", "NEENS_API_KEY": KEY, "NEENS_INPUT_CONCURRENCY": "lots",
           "NEENS_INPUT_COMMAND": "true", "NEENS_INPUT_BASE_URL": "http://127.0.0.1:9"}
    code, log = _run(env)
    assert code == 2
    assert log.strip().splitlines() == [
        "neens: error: input concurrency: must be a whole number, got 'lots'"
    ]
    assert KEY not in log  # GitLab masks its own variables: we never echo them


def test_github_bad_input_still_writes_summary_and_outputs(tmp_path: Path) -> None:
    from tests.fakes.github_server import parse_outputs

    env = _github(concurrency="0")
    env["GITHUB_OUTPUT"] = str(tmp_path / "out")
    env["GITHUB_STEP_SUMMARY"] = str(tmp_path / "summary.md")
    code, _ = _run(env)
    assert code == 2
    assert parse_outputs((tmp_path / "out").read_text()) == {"exit-code": "2",
                                                             "verdict": "errored"}
    summary = (tmp_path / "summary.md").read_text()
    assert summary.startswith("### 💥 Errored: Neens eval")
    assert "input concurrency: must be 1 or more, got 0" in summary
    assert KEY not in summary
