"""The noise inputs where a user meets them: the README's GitHub and GitLab examples show
``repeat``, with inputs the action and the component declare; docs/inputs.md lists
``repeat``, ``baseline-runs`` and ``on-inconclusive`` for both."""

from __future__ import annotations

import re
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
NOISE_INPUTS = ("repeat", "baseline-runs", "on-inconclusive")


def _yaml_blocks(text: str) -> list[object]:
    return [yaml.safe_load(b) for b in re.findall(r"```yaml\n(.*?)```", text, re.S)]


def test_readme_examples_show_repeat_with_declared_inputs():
    blocks = _yaml_blocks((ROOT / "README.md").read_text(encoding="utf-8"))
    action = yaml.safe_load((ROOT / "action.yml").read_text(encoding="utf-8"))["inputs"]
    spec = next(yaml.safe_load_all((ROOT / "templates" / "gitlab-ci.yml").read_text(
        encoding="utf-8")))["spec"]["inputs"]
    github = [step["with"] for b in blocks if isinstance(b, dict) and "jobs" in b
              for job in b["jobs"].values() for step in job["steps"]
              if str(step.get("uses", "")).startswith("neens/eval-action@")]
    gitlab = [inc["inputs"] for b in blocks if isinstance(b, dict) and "include" in b
              for inc in b["include"] if "eval-action/gitlab-ci@" in inc.get("component", "")]
    assert github and gitlab
    assert any("repeat" in w for w in github) and any("repeat" in i for i in gitlab)
    for given, declared in ((github, action), (gitlab, spec)):
        for inputs in given:
            assert set(inputs) <= set(declared), set(inputs) - set(declared)
    assert {"repeat", "baseline-runs", "on-inconclusive"} <= set(action) & set(spec)
    assert spec["baseline-runs"]["type"] == "number"
    assert spec["on-inconclusive"]["options"] == ["warn", "block"]


def test_inputs_page_lists_the_noise_inputs_for_the_action_and_the_component():
    page = (ROOT / "docs" / "inputs.md").read_text(encoding="utf-8")
    for name in NOISE_INPUTS:
        assert len(re.findall(rf"^\| `{name}` \|", page, re.M)) == 2, name
