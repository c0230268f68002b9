"""action.yml, the GitLab component and their reference page (docs/inputs.md) agree with the CI
front door's input table (neens_action/ci/inputs.py): a mode or input added there must reach
every platform file and its documentation, with the same defaults and GitLab types."""

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


INPUTS_PAGE = ROOT / "docs" / "inputs.md"


def rows(section: str) -> dict[str, list[str]]:
    """The Markdown table rows of docs/inputs.md's ``## <section>``: first-column name (in
    backticks) -> the other cells."""
    text = INPUTS_PAGE.read_text(encoding="utf-8")
    start = text.index(f"\n## {section}\n")
    end = text.find("\n## ", start + 1)
    body = text[start:end if end != -1 else None]
    out: dict[str, list[str]] = {}
    for line in body.splitlines():
        m = re.match(r"^\| `([a-z][a-z-]*)` \|(.*)\|$", line)
        if m:
            out[m.group(1)] = [c.strip() for c in re.split(r"(?<!\\)\|", m.group(2))]
    return out


def gitlab_type(spec: dict) -> str:
    if "options" in spec:
        return "/".join(f"`{o}`" for o in spec["options"])
    return spec.get("type", "string")


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
    assert job["script"] == ["exec python3 /opt/neens/entrypoint.py"]
    assert not {"default", "workflow", "stages", "variables"} & set(BODY)
    from neens_action.ci.main import MODES

    assert set(HEADER["spec"]["inputs"]["mode"]["options"]) <= set(MODES)


def test_docs_list_every_input_with_the_action_default():
    table = rows("GitHub Actions and `neens ci`")
    assert set(table) == {i.name for i in ci_inputs.INPUTS}, set(table) ^ {
        i.name for i in ci_inputs.INPUTS}
    for name, spec in ACTION["inputs"].items():
        default = str(spec.get("default", ""))
        if default and "${{" not in default:  # "not set" rows name the fallback instead
            assert table[name][0] == f"`{default}`", (name, table[name][0], default)
    defaults = {i.name: i.default for i in ci_inputs.INPUTS}
    for name in set(table) - set(ACTION["inputs"]):  # dotenv-file: not a GitHub input
        assert table[name][0] == f"`{defaults[name]}`", (name, table[name][0])


def test_docs_list_every_output():
    table = rows("Outputs")
    assert set(table) == set(ACTION["outputs"]), set(table) ^ set(ACTION["outputs"])
    assert set(table) >= OUTPUTS


def test_docs_list_every_component_input_with_its_type_and_default():
    table = rows("GitLab component inputs")
    spec_inputs = HEADER["spec"]["inputs"]
    assert list(table) == list(spec_inputs), set(table) ^ set(spec_inputs)
    for name, spec in spec_inputs.items():
        kind, default = table[name][0], table[name][1]
        assert kind == gitlab_type(spec), (name, kind)
        value = spec.get("default")
        value = str(value).lower() if isinstance(value, bool) else str(value)
        if value:
            assert default.startswith(f"`{value}`"), (name, default, value)
            if value.startswith("-1"):
                assert "(not set)" in default, name  # the marker the front door reads as empty
        else:
            assert default == "", (name, default)


PLATFORMS = ("GitHub Actions", "GitLab CI/CD", "Jenkins and other CI: `docker run`",
             "On the host: the host action, `neens ci` and the CLI")


def test_readme_is_one_screen_per_platform_linking_the_reference():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    sections = dict(re.findall(r"^## ([^\n]+)\n(.*?)(?=^## |\Z)", readme, re.M | re.S))
    assert {"Quickstart", *PLATFORMS} <= set(sections), list(sections)
    assert "scripts/demo" in sections["Quickstart"] and "scripts/test" in sections["Quickstart"]
    for name in PLATFORMS:
        body = sections[name]
        assert len(body.splitlines()) <= 50, f"{name}: more than one screen"
        assert "](docs/" in body, f"{name} links no reference page"
    pages = {p.name for p in (ROOT / "docs").glob("*.md")}
    linked = set(re.findall(r"\]\(docs/([a-z-]+\.md)", readme))
    assert pages == linked, f"docs pages the README does not link: {pages - linked}"
    for fact in ("linux/amd64", "linux/arm64", "SBOM", "provenance"):
        assert fact in readme, fact
