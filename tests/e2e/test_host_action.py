"""The host action (``host/action.yml``, a composite action running ``neens ci`` on the
runner's own Python): its inputs and outputs are the container action's, every input reaches
the front door as a variable (never spliced into a script), and act runs it on the job
container next to the container action for the same candidate: the same outputs, the same
summary and the same sticky comment (against the fake GitHub API)."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest
import yaml

from tests.e2e.lab import Lab, act_outputs, make_repo, write_event
from tests.fakes.github_server import FakeGitHub
from tests.helpers import EXAMPLES, ROOT, Sandbox

pytestmark = pytest.mark.e2e

ACTION = yaml.safe_load((ROOT / "action.yml").read_text())
HOST = yaml.safe_load((ROOT / "host" / "action.yml").read_text())
TOKEN = "ghs_fake_host_token_789"


def test_host_action_has_the_container_actions_inputs_and_outputs() -> None:
    assert list(HOST["inputs"]) == list(ACTION["inputs"])
    for name, spec in HOST["inputs"].items():
        assert spec == ACTION["inputs"][name], name
    assert list(HOST["outputs"]) == list(ACTION["outputs"])
    for name, spec in HOST["outputs"].items():
        assert spec["value"] == f"${{{{ steps.ci.outputs.{name} }}}}", name
        assert spec["description"] == ACTION["outputs"][name]["description"], name


def test_host_action_passes_inputs_as_variables_only() -> None:
    assert HOST["runs"]["using"] == "composite"
    install, gate = HOST["runs"]["steps"]
    assert "${{" not in install["run"] and "${{" not in gate["run"]  # no template injection
    assert gate["run"].strip() == 'exec "$NEENS_CLI" ci'  # no bash left holding the secrets
    env = gate["env"]
    for name in ACTION["inputs"]:
        assert env["NEENS_INPUT_" + name.upper().replace("-", "_")] == f"${{{{ inputs.{name} }}}}"
    assert "constraints.txt" in install["run"]  # the pinned dependencies
    assert all(step["shell"] == "bash" for step in HOST["runs"]["steps"])  # every runner OS


def _normalise(text: str) -> str:
    text = re.sub(r"ppr(\\?_)[A-Za-z0-9_\\]+", "ppr_ID", text)
    text = re.sub(r"leg=[^ ]*", "leg=LEG", text)
    return re.sub(r"\d+(\.\d+)?\s?(ms|s)\b", "T", text)


def test_act_runs_the_host_action_like_the_container_action(lab: Lab, image: str,
                                                            e2e_sandbox: Sandbox,
                                                            tmp_path: Path,
                                                            e2e_logs: Path) -> None:
    gh = FakeGitHub(token=TOKEN, owner="neens", repo="demo").start()
    try:
        repo = tmp_path / "repo"
        files: dict[str, Path | str] = {
            name: ROOT / name for name in ("action.yml", "host", "pyproject.toml",
                                           "README.md", "constraints.txt", "neens_action")
        }
        files["examples/agent"] = EXAMPLES / "agent"
        files[".github/workflows/host.yml"] = ROOT / "tests" / "e2e" / "github" / "host.yml"
        sha = make_repo(repo, files)
        # act names the repository after the origin remote (GITHUB_REPOSITORY): make it the
        # one the fake GitHub API serves, as on github.com.
        subprocess.run(["git", "-C", str(repo), "remote", "set-url", "origin",
                        f"https://github.com/{gh.full_name}.git"], check=True, timeout=30)
        event = write_event(tmp_path / "event.json", {
            "action": "synchronize", "number": 7,
            "pull_request": {"number": 7, "head": {"sha": sha, "ref": "feature/e2e",
                                                   "repo": {"full_name": gh.full_name}},
                             "base": {"ref": "main", "repo": {"full_name": gh.full_name}}},
            "repository": {"full_name": gh.full_name, "default_branch": "main"},
        })
        args = [
            lab.act, "pull_request", "-W", ".github/workflows/host.yml", "-e", str(event),
            "-P", f"ubuntu-latest={lab.base_image}", "--pull=false", "--network", "host",
            "--rm", "--insecure-secrets", "--defaultbranch", "main",
            "-s", f"NEENS_API_KEY={e2e_sandbox.api_key}", "-s", f"FAKE_GITHUB_TOKEN={TOKEN}",
            "--env", f"FAKE_GITHUB_API={gh.api_url}",
            "--env", f"GITHUB_API_URL={gh.api_url}", "--env", f"NEENS_BASE_URL={e2e_sandbox.url}",
        ]
        proc = lab.run(args, cwd=repo, timeout=600, log=e2e_logs / "act-host.yml.log")
        log = proc.stdout
        assert proc.returncode == 0, log[-6000:]
        assert "E2E-CHECKED host matches container" in log, log[-6000:]
        outputs = act_outputs(log)
        assert outputs.get("exit-code") == "0" and outputs.get("verdict") == "passed", outputs
        comments = gh.comments(7)
        assert len(comments) == 2, json.dumps(comments)[:2000]
        box, host = (c["body"] for c in comments)
        assert "leg=container" in box and "leg=host" in host
        # no run on main yet in this sandbox: branch:main fell back to the production window
        assert "### ⚠️ Passed, with caveats" in box and "baseline fell back" in box, box
        assert _normalise(box) == _normalise(host)
        assert e2e_sandbox.api_key not in log and TOKEN not in log
    finally:
        gh.stop()
