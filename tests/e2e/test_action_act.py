"""The GitHub Action end to end: act runs a workflow with ``uses: ./`` (after
``actions/checkout@v4``) in a copy of the repository; action.yml names the prebuilt image,
which the session built locally under that exact tag, so act runs it without pulling. The
candidate agent (examples/agent) runs inside the action's container against the sandbox on
loopback.

act runs with ``--insecure-secrets``: it masks nothing, so the API key would show if our code
ever printed it (our own ``::add-mask::`` line is the only place it is echoed, and act shows
that line as ``***``).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.e2e.lab import Lab, act_outputs, act_summary, make_repo, write_event
from tests.helpers import EXAMPLES, ROOT, Sandbox

pytestmark = pytest.mark.e2e

WORKFLOWS = ROOT / "tests" / "e2e" / "github"


def run_act(lab: Lab, tmp_path: Path, workflow: str, sandbox: Sandbox, logs: Path,
            env: dict[str, str] | None = None) -> tuple[int, str]:
    repo = tmp_path / "repo"
    make_repo(repo, {
        "action.yml": ROOT / "action.yml",
        "examples/agent": EXAMPLES / "agent",
        f".github/workflows/{workflow}": WORKFLOWS / workflow,
    })
    event = write_event(tmp_path / "event.json", {
        "ref": "refs/heads/feature/e2e",
        "repository": {"full_name": "neens/demo", "default_branch": "main"},
    })
    args = [
        lab.act, "push", "-W", f".github/workflows/{workflow}", "-e", str(event),
        "-P", f"ubuntu-latest={lab.base_image}", "--pull=false", "--network", "host",
        "--rm", "--insecure-secrets", "--defaultbranch", "main",
        "-s", f"NEENS_API_KEY={sandbox.api_key}", "--env", f"NEENS_BASE_URL={sandbox.url}",
    ]
    for name, value in (env or {}).items():
        args += ["--env", f"{name}={value}"]
    proc = lab.run(args, cwd=repo, timeout=420, log=logs / f"act-{workflow}.log")
    return proc.returncode, proc.stdout


def assert_no_key(log: str, key: str) -> None:
    assert key not in log, "the API key appears in the act log"
    assert key[-12:] not in log, "part of the API key appears in the act log"


def test_passing_candidate_sets_outputs_and_summary(lab, image, e2e_sandbox, tmp_path,
                                                    e2e_logs):
    rc, log = run_act(lab, tmp_path, "pass.yml", e2e_sandbox, e2e_logs)
    assert rc == 0, log[-5000:]
    assert "E2E-CHECKED outputs" in log, log[-5000:]
    outputs = act_outputs(log)
    assert outputs.get("exit-code") == "0", outputs
    assert outputs.get("verdict") == "passed", outputs
    assert outputs.get("run-id", "").startswith("ppr_"), outputs
    assert outputs.get("result-json") == "neens-result.json", outputs
    assert "agent dependencies present" in log  # the install input ran first
    summary = act_summary(log)
    assert summary.strip(), "no job summary was written"
    assert "Passed" in summary.splitlines()[0], summary[:2000]
    # the run is named; without ui-url the API path (a JSON 401 in a browser) is never linked
    assert outputs["run-id"].replace("_", "\\_") in summary, summary[:2000]
    assert f"{e2e_sandbox.url}/preprod-evals/" not in summary, summary[:2000]
    assert_no_key(log, e2e_sandbox.api_key)
    # The build verdict reached Neens (ci-result) and matches the step.
    run = e2e_sandbox.get(f"/preprod-evals/{outputs['run-id']}").json()
    assert run["buildVerdict"] == "passed", json.dumps(run)[:1000]


def test_regressing_candidate_fails_the_step_with_exit_1(lab, image, e2e_sandbox, tmp_path,
                                                        e2e_logs, baseline_run):
    rc, log = run_act(lab, tmp_path, "regress.yml", e2e_sandbox, e2e_logs,
                      {"NEENS_BASELINE": f"run:{baseline_run}"})
    assert rc == 0, log[-5000:]  # the workflow's own check step passed
    assert "E2E-CHECKED failure exit-code=1" in log, log[-5000:]
    assert "Failure - Main Neens eval gate" in log, log[-5000:]
    assert "::error title=Neens gate" in log, log[-5000:]  # the failed gate is annotated
    outputs = act_outputs(log)
    assert outputs.get("exit-code") == "1", outputs
    assert outputs.get("verdict") == "blocked", outputs
    assert int(outputs.get("regressions") or 0) >= 1, outputs
    summary = act_summary(log)
    # the run is named; without ui-url the API path (a JSON 401 in a browser) is never linked
    assert outputs["run-id"].replace("_", "\\_") in summary, summary[:2000]
    assert f"{e2e_sandbox.url}/preprod-evals/" not in summary, summary[:2000]
    assert "regress" in summary.lower(), summary[:2000]
    assert_no_key(log, e2e_sandbox.api_key)
    run = e2e_sandbox.get(f"/preprod-evals/{outputs['run-id']}").json()
    assert run["buildVerdict"] == "blocked", json.dumps(run)[:1000]
