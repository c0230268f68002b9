"""action.yml, the GitLab component and their docs agree with the CI front door's input table
(neens_action/ci/inputs.py): a mode or input added there must reach every platform file."""

from __future__ import annotations

import re

import pytest
import yaml

from neens_action.ci import inputs as ci_inputs
from tests.helpers import ROOT

pytestmark = pytest.mark.e2e

ACTION = yaml.safe_load((ROOT / "action.yml").read_text())
HEADER, BODY = yaml.safe_load_all((ROOT / "templates" / "gitlab-ci.yml").read_text())
GITLAB_ONLY = {"dotenv-file"}  # GitHub has no dotenv report
OUTPUTS = {"exit-code", "verdict", "run-id", "pass-rate", "regressions", "result-json",
           "comment-url"}


def documented(section: str) -> set[str]:
    """Names in the first column of the Markdown tables of README.md's ``## <section>``."""
    text = (ROOT / "README.md").read_text()
    start = text.index(f"\n## {section}\n")
    end = text.find("\n## ", start + 1)
    body = text[start:end if end != -1 else None]
    return set(re.findall(r"^\| `([a-z][a-z-]*)` \|", body, re.M))


def test_action_inputs_match_the_front_door():
    table = {i.name: i for i in ci_inputs.INPUTS if i.name not in GITLAB_ONLY}
    inputs = ACTION["inputs"]
    assert set(inputs) == set(table), (set(inputs) ^ set(table))
    for name, spec in inputs.items():
        assert spec.get("description", "").strip(), name
        assert spec.get("required") is False, name
        assert "${{" not in spec["description"], f"{name}: no expressions in descriptions"
        if name != "github-token":  # the one default that is an expression
            assert str(spec.get("default", "")) == table[name].default, name
    assert inputs["github-token"]["default"] == "${{ github.token }}"


def test_action_outputs_branding_and_image():
    assert set(ACTION["outputs"]) >= OUTPUTS
    assert all(o.get("description") for o in ACTION["outputs"].values())
    assert ACTION["runs"]["using"] == "docker"
    assert ACTION["runs"]["image"].startswith("docker://ghcr.io/neens/eval-action:")
    assert {"icon", "color"} <= set(ACTION["branding"])


def test_component_variables_are_front_door_inputs():
    job = BODY["$[[ inputs.job-name ]]"]
    names = {i.name.upper().replace("-", "_"): i.name for i in ci_inputs.INPUTS}
    for var, value in job["variables"].items():
        assert var.startswith("NEENS_INPUT_"), var
        name = names.get(var.removeprefix("NEENS_INPUT_"))
        assert name is not None, f"{var} is not an input of the CI front door"
        assert value.strip('"') == f"$[[ inputs.{name} ]]", (var, value)
    assert job["image"]["entrypoint"] == [""]
    assert job["script"] == ["python3 /opt/neens/entrypoint.py"]
    assert not {"default", "workflow", "stages", "variables"} & set(BODY)
    from neens_action.ci.main import MODES

    assert set(HEADER["spec"]["inputs"]["mode"]["options"]) <= set(MODES)


def test_docs_cover_every_input_and_output():
    assert set(ACTION["inputs"]) | OUTPUTS <= documented("GitHub Actions")
    assert set(HEADER["spec"]["inputs"]) <= documented("GitLab CI/CD")
