"""Jenkins and any other CI: ``docker run`` with plain environment variables and ``neens``
arguments, the workspace mounted, exactly as examples/Jenkinsfile does it. The JUnit file is
left in the workspace for the JUnit plugin, and the Jenkins provenance reaches Neens."""

from __future__ import annotations

import os
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from tests.e2e.lab import Lab, make_repo
from tests.helpers import EXAMPLES, ROOT, Sandbox

pytestmark = pytest.mark.e2e

# The variables a Jenkins job would pass through with `-e NAME` (values from its environment).
PASSED = ("NEENS_BASE_URL", "NEENS_API_KEY", "OTEL_EXPORTER_OTLP_ENDPOINT",
          "OTEL_EXPORTER_OTLP_HEADERS", "JENKINS_URL", "BUILD_URL", "GIT_COMMIT", "GIT_BRANCH",
          "BRANCH_NAME", "AGENT_MODE")


def jenkins_run(lab: Lab, image: str, workspace: Path, sandbox: Sandbox, sha: str,
                agent_mode: str, *gate: str) -> tuple[int, str]:
    env = {
        "NEENS_BASE_URL": sandbox.url,
        "NEENS_API_KEY": sandbox.api_key,
        "OTEL_EXPORTER_OTLP_ENDPOINT": sandbox.url,
        "OTEL_EXPORTER_OTLP_HEADERS": f"Authorization=Bearer {sandbox.api_key}",
        "JENKINS_URL": "https://jenkins.example.com/",
        "BUILD_URL": "https://jenkins.example.com/job/demo/7/",
        "GIT_COMMIT": sha,
        "GIT_BRANCH": "origin/feature/e2e",
        "BRANCH_NAME": "feature/e2e",
        "AGENT_MODE": agent_mode,
    }
    args = ["run", "--rm", "--network", "host", "-v", f"{workspace}:/workspace",
            "-w", "/workspace"]
    for name in PASSED:
        args += ["-e", name]
    args += [image, "eval", "run", "--create", "--dataset", "ds_refunds",
             "--version-label", sha, *gate,
             "--poll-interval", "1", "--junit", "neens-junit.xml", "--",
             "python3", "examples/agent/agent.py"]
    proc = lab.docker_cmd(*args, timeout=300, env={**os.environ, **env})
    return proc.returncode, proc.stdout


def junit(workspace: Path) -> list[ET.Element]:
    path = workspace / "neens-junit.xml"
    assert path.is_file(), "the JUnit file was not left in the workspace"
    return list(ET.parse(path).getroot().iter("testcase"))


@pytest.fixture
def workspace(tmp_path: Path) -> tuple[Path, str]:
    ws = tmp_path / "workspace"
    sha = make_repo(ws, {"examples/agent": EXAMPLES / "agent"})
    return ws, sha


def test_the_example_jenkinsfile_uses_this_recipe():
    text = (ROOT / "examples" / "Jenkinsfile").read_text()
    for needle in ('-v "$PWD:/workspace"', "-w /workspace", "-e NEENS_BASE_URL",
                   "-e NEENS_API_KEY", "eval run --create", '--version-label "$GIT_COMMIT"',
                   "--junit neens-junit.xml",
                   "junit", "withCredentials"):
        assert needle in text, needle


def test_passing_candidate_exits_0_and_leaves_junit(lab, image, e2e_sandbox, workspace):
    ws, sha = workspace
    rc, log = jenkins_run(lab, image, ws, e2e_sandbox, sha, "good", "--min-pass-rate", "0.9")
    assert rc == 0, log[-4000:]
    cases = junit(ws)
    assert len(cases) == 6
    assert not any(c.find("failure") is not None or c.find("error") is not None for c in cases)
    assert e2e_sandbox.api_key not in log
    run_id = next(line.split()[-1] for line in log.splitlines()
                  if line.startswith("Created run "))
    run = e2e_sandbox.get(f"/preprod-evals/{run_id}").json()
    assert run["gitSha"] == sha and run["branch"] == "feature/e2e", run
    assert run["buildVerdict"] == "passed"


def test_regressing_candidate_exits_1_and_leaves_junit(lab, image, e2e_sandbox, workspace,
                                                       baseline_run):
    ws, sha = workspace
    rc, log = jenkins_run(lab, image, ws, e2e_sandbox, sha, "bad",
                          "--baseline", f"run:{baseline_run}", "--max-regressions", "0")
    assert rc == 1, log[-4000:]
    failed = [c for c in junit(ws) if c.find("failure") is not None]
    assert failed, "the JUnit file shows no failing item"
    assert e2e_sandbox.api_key not in log


def test_bad_arguments_exit_2_with_one_line(lab, image, workspace):
    ws, _ = workspace
    proc = lab.docker_cmd("run", "--rm", "-v", f"{ws}:/workspace", "-w", "/workspace", image,
                          "eval", "run", "--concurrency", "zero", "--", "true", timeout=120)
    assert proc.returncode == 2, proc.stdout
    lines = [line for line in proc.stdout.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("neens: error:"), proc.stdout
