"""The action's modes push, sweep and stress end to end: one act run of
``tests/e2e/github/modes.yml`` (one job, one step per mode, ``uses: ./``) in a copy of the
repository, with the image the session built, against a sandbox on loopback whose push
connections call two example HTTP agents (a good one and a bad one).

One act invocation covers all modes to keep the e2e tier inside its time budget; the workflow's
last step checks every step's outputs and echoes ``E2E-CHECKED`` lines, and the test then checks
the sandbox agrees (ci-result of the push runs and the stress run, the sweep's state).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from tests.e2e.lab import Lab, act_summary, make_repo, write_event
from tests.helpers import EXAMPLES, ROOT, SEED, Sandbox, start_sandbox
from tests.integration.policy_support import start_http_agent

pytestmark = pytest.mark.e2e

WORKFLOW = ROOT / "tests" / "e2e" / "github" / "modes.yml"
DATA = ROOT / "tests" / "integration" / "data"
POLICY = {"rules": [{"min_pass_rate": 0.9, "severity": "block"}],
          "on_missing_baseline": "pass"}


@pytest.fixture(scope="module")
def modes_sandbox(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Sandbox]:
    """The example seed + the sweep dataset + conn_good / conn_bad (example HTTP agents)."""
    tmp = tmp_path_factory.mktemp("modes-sandbox")
    good, bad = start_http_agent("good"), start_http_agent("bad")
    try:
        seed = yaml.safe_load(SEED.read_text())
        seed["datasets"].append(yaml.safe_load((DATA / "sweep_seed.yaml").read_text())
                                ["datasets"][0])
        seed["connections"] += [
            {"id": "conn_good", "url": good.url + "/answer", "model": "gpt-4o-mini"},
            {"id": "conn_bad", "url": bad.url + "/answer", "model": "gpt-4o"},
        ]
        path = tmp / "seed.yaml"
        path.write_text(yaml.safe_dump(seed, sort_keys=False))
        sb = start_sandbox(tmp, seed=path)
        try:
            yield sb
        finally:
            sb.stop()
    finally:
        good.stop()
        bad.stop()


def run_modes(lab: Lab, tmp_path: Path, sandbox: Sandbox, logs: Path) -> tuple[int, str]:
    repo = tmp_path / "repo"
    make_repo(repo, {
        "action.yml": ROOT / "action.yml",
        "examples/agent": EXAMPLES / "agent",
        "tests/integration/data/sweep_agent.py": DATA / "sweep_agent.py",
        "e2e-gate.json": json.dumps(POLICY),
        ".github/workflows/modes.yml": WORKFLOW,
    })
    event = write_event(tmp_path / "event.json", {
        "ref": "refs/heads/feature/e2e",
        "repository": {"full_name": "neens/demo", "default_branch": "main"},
    })
    args = [
        lab.act, "push", "-W", ".github/workflows/modes.yml", "-e", str(event),
        "-P", f"ubuntu-latest={lab.base_image}", "--pull=false", "--network", "host",
        "--rm", "--insecure-secrets", "--defaultbranch", "main",
        "-s", f"NEENS_API_KEY={sandbox.api_key}", "--env", f"NEENS_BASE_URL={sandbox.url}",
    ]
    proc = lab.run(args, cwd=repo, timeout=540, log=logs / "act-modes.yml.log")
    return proc.returncode, proc.stdout


def checked(log: str) -> dict[str, str]:
    """``key=value`` pairs of the workflow's ``E2E-CHECKED`` lines."""
    out: dict[str, str] = {}
    for line in log.splitlines():
        if "E2E-CHECKED " in line:
            out.update(re.findall(r"([a-z-]+)=(\S*)", line.split("E2E-CHECKED ", 1)[1]))
    return out


def test_push_sweep_and_stress_modes_under_act(lab, image, modes_sandbox, tmp_path, e2e_logs):
    sb = modes_sandbox
    rc, log = run_modes(lab, tmp_path, sb, e2e_logs)
    assert rc == 0, log[-6000:]
    facts = checked(log)
    assert {"push-pass", "push-block", "sweep", "winner", "stress", "suite"} <= set(facts), \
        log[-6000:]
    assert sb.api_key not in log and sb.api_key[-12:] not in log, "the API key is in the log"

    # push: the policy passed the good connection and blocked the bad one; Neens has both
    # build verdicts, with the policy file's name
    assert "Failure - Main Push, policy blocks" in log, log[-6000:]
    for key, verdict in (("push-pass", "passed"), ("push-block", "blocked")):
        run = sb.get(f"/preprod-evals/{facts[key]}").json()
        assert run["runnerMode"] == "push", json.dumps(run)[:1000]
        assert run["buildVerdict"] == verdict, json.dumps(run)[:1000]
        assert run["ciResult"]["policy"]["name"] == "e2e-gate.json"

    # sweep: the cheapest arm that clears the bar wins; the summary has the table and charts
    assert facts["winner"] == "small"
    sweep = sb.get(f"/model-sweeps/{facts['sweep']}").json()
    assert sweep["status"] == "completed", json.dumps(sweep)[:1000]
    summary = act_summary(log)
    assert "#### Arm verdicts" in summary, summary[:3000]
    assert "small clears the 90% bar" in summary, summary[:3000]
    assert "```mermaid" in summary and "xychart-beta" in summary, summary[:3000]

    # stress: a suite from both failure modes, run and passed; per-mode table in the summary
    assert "#### Pass rate per failure mode" in summary, summary[:3000]
    assert "Wrong refund amount (fm\\_refund)" in summary, summary[:3000]
    run = sb.get(f"/preprod-evals/{facts['stress']}").json()
    assert run["buildVerdict"] == "passed", json.dumps(run)[:1000]
    suite = sb.get(f"/scenario-suites/{facts['suite']}").json()
    assert suite["status"] == "ready", json.dumps(suite)[:1000]
