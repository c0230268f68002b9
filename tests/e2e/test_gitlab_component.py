"""The GitLab CI/CD component end to end: gitlab-ci-local runs a ``.gitlab-ci.yml`` that
includes ``templates/gitlab-ci.yml`` by ``local:`` with inputs, in a copy of the repository;
the job runs in the image built from this Dockerfile (the component's default image, built
locally under that tag) against the sandbox on loopback.

gitlab-ci-local sets ``GITLAB_CI=false`` (so scripts can tell a local run); GitLab itself sets
``true``, which is what the CI front door keys on, so the tests pass ``GITLAB_CI=true``.
gitlab-ci-local exports ``artifacts:paths`` and the dotenv report (not ``reports:junit``), so
the JUnit file is checked through ``paths``, where the component also lists it.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
import yaml

from tests.e2e.lab import Lab, make_repo
from tests.helpers import EXAMPLES, ROOT, Sandbox

pytestmark = pytest.mark.e2e

PIPELINES = ROOT / "tests" / "e2e" / "gitlab"
DOTENV_KEYS = {"NEENS_VERDICT", "NEENS_EXIT_CODE", "NEENS_RUN_ID", "NEENS_PASS_RATE",
               "NEENS_REGRESSIONS"}


def run_pipeline(lab: Lab, tmp_path: Path, pipeline: str, sandbox: Sandbox, logs: Path,
                 variables: dict[str, str], extra: dict[str, Path] | None = None
                 ) -> tuple[int, str, Path]:
    repo = tmp_path / "repo"
    make_repo(repo, {
        ".gitlab-ci.yml": PIPELINES / pipeline,
        "templates/gitlab-ci.yml": ROOT / "templates" / "gitlab-ci.yml",
        "examples/agent": EXAMPLES / "agent",
        **(extra or {}),
    })
    args = [
        lab.gitlab_ci_local, "--helper-image", lab.base_image, "--pull-policy",
        "if-not-present", "--network", "host", "--no-color",
        "--variable", "GITLAB_CI=true",
        "--variable", f"NEENS_API_KEY={sandbox.api_key}",
        "--variable", f"NEENS_BASE_URL={sandbox.url}",
    ]
    for name, value in variables.items():
        args += ["--variable", f"{name}={value}"]
    proc = lab.run(args, cwd=repo, timeout=420, log=logs / f"gitlab-ci-local-{pipeline}.log")
    job_logs = "".join(p.read_text(errors="replace")
                       for p in (repo / ".gitlab-ci-local" / "output").glob("*.log"))
    return proc.returncode, proc.stdout + job_logs, repo


def expanded_job(repo: Path, name: str) -> dict:
    expanded = yaml.safe_load((repo / ".gitlab-ci-local" / "expanded-gitlab-ci.yml").read_text())
    assert name in expanded, sorted(expanded)
    return expanded[name]


def artifacts(repo: Path, job: str) -> Path:
    return repo / ".gitlab-ci-local" / "artifacts" / job


def read_dotenv(path: Path) -> dict[str, str]:
    text = path.read_text()
    assert len(text.encode()) < 5 * 1024, "a dotenv report must stay under 5 KB"
    pairs = dict(line.split("=", 1) for line in text.splitlines() if line.strip())
    assert set(pairs) >= DOTENV_KEYS, pairs
    return pairs


def junit_cases(path: Path) -> list[ET.Element]:
    root = ET.parse(path).getroot()
    assert root.tag in ("testsuites", "testsuite"), root.tag
    return list(root.iter("testcase"))


def test_the_component_is_one_job_with_typed_inputs():
    header, body = yaml.safe_load_all((ROOT / "templates" / "gitlab-ci.yml").read_text())
    inputs = header["spec"]["inputs"]
    for name in ("stage", "job-name", "image", "mode", "command", "install", "base-url",
                 "dataset", "version-label", "baseline", "max-regressions", "min-pass-rate",
                 "concurrency", "timeout", "no-gate", "comment", "allow-failure"):
        assert name in inputs, name
        assert inputs[name].get("description"), name
    assert "api-key" not in inputs  # the key is a masked CI/CD variable, never an input
    assert inputs["image"]["default"] == "ghcr.io/neens/eval-action:1.0.0"
    assert inputs["comment"]["options"] == ["update", "new", "off"]
    assert inputs["allow-failure"]["type"] == "boolean"
    assert list(body) == ["$[[ inputs.job-name ]]"]  # one job, no global keywords


def test_passing_candidate_passes_with_junit_and_dotenv(lab, image, e2e_sandbox, tmp_path,
                                                       e2e_logs):
    rc, log, repo = run_pipeline(lab, tmp_path, "pass.gitlab-ci.yml", e2e_sandbox, e2e_logs,
                                 {"AGENT_MODE": "good"})
    assert rc == 0, log[-5000:]
    assert "PASS  neens-e2e-pass" in log, log[-5000:]
    assert "agent dependencies present" in log  # the install input ran first
    job = expanded_job(repo, "neens-e2e-pass")
    assert job["image"]["name"] == image
    assert job["artifacts"]["reports"] == {"junit": "neens-junit.xml", "dotenv": "neens.env"}
    assert job["artifacts"]["when"] == "always"

    out = artifacts(repo, "neens-e2e-pass")
    env = read_dotenv(out / ".gitlab-ci-reports" / "dotenv" / "neens.env")
    assert env["NEENS_VERDICT"] == "passed" and env["NEENS_EXIT_CODE"] == "0", env
    assert env["NEENS_RUN_ID"].startswith("ppr_") and float(env["NEENS_PASS_RATE"]) == 1.0
    cases = junit_cases(out / "neens-junit.xml")
    assert len(cases) == 6, [c.get("name") for c in cases]
    assert not any(c.find("failure") is not None or c.find("error") is not None for c in cases)
    assert (out / "neens-result.json").is_file() and (out / "neens-summary.md").is_file()
    assert e2e_sandbox.api_key not in log
    run = e2e_sandbox.get(f"/preprod-evals/{env['NEENS_RUN_ID']}").json()
    assert run["buildVerdict"] == "passed"
    assert run["versionLabel"] == run["gitSha"][:8]  # version-label defaults to the short sha


def test_regressing_candidate_fails_the_job(lab, image, e2e_sandbox, tmp_path, e2e_logs,
                                            baseline_run):
    rc, log, repo = run_pipeline(lab, tmp_path, "regress.gitlab-ci.yml", e2e_sandbox,
                                 e2e_logs, {"AGENT_MODE": "bad",
                                            "NEENS_E2E_BASELINE": f"run:{baseline_run}"})
    assert rc != 0, log[-5000:]
    assert "FAIL  neens-e2e-regress" in log, log[-5000:]
    out = artifacts(repo, "neens-e2e-regress")
    env = read_dotenv(out / ".gitlab-ci-reports" / "dotenv" / "neens.env")
    assert env["NEENS_VERDICT"] == "blocked" and env["NEENS_EXIT_CODE"] == "1", env
    assert int(env["NEENS_REGRESSIONS"]) >= 1, env
    cases = junit_cases(out / "neens-junit.xml")
    failed = [c for c in cases if c.find("failure") is not None]
    assert failed, "the JUnit report shows no failing item"
    assert e2e_sandbox.api_key not in log
    run = e2e_sandbox.get(f"/preprod-evals/{env['NEENS_RUN_ID']}").json()
    assert run["buildVerdict"] == "blocked"
    assert run["baseline"]["kind"] == "preprod_run"
    assert run["baseline"]["runId"] == baseline_run


def test_no_ancestor_of_the_agent_holds_a_secret(lab, image, e2e_sandbox, tmp_path, e2e_logs):
    """The component's script line is ``exec``: the job shell that holds NEENS_API_KEY and
    NEENS_GITLAB_TOKEN becomes the non-dumpable front door, so the agents read neither from
    any ancestor's ``/proc/<pid>/environ`` (each would fail naming the ancestor)."""
    rc, log, _ = run_pipeline(lab, tmp_path, "nosy.gitlab-ci.yml", e2e_sandbox, e2e_logs,
                                 {"AGENT_MODE": "good",
                                  "NEENS_GITLAB_TOKEN": "glpat-e2e-nosy-0123456789"},
                                 extra={"nosy/nosy_ancestors.py": PIPELINES /
                                        "nosy_ancestors.py"})
    assert "holds" not in log, log[-5000:]
    assert rc == 0, log[-5000:]
    assert "PASS  neens-e2e-nosy" in log, log[-5000:]
    assert e2e_sandbox.api_key not in log and "glpat-e2e-nosy-0123456789" not in log
