"""``python entrypoint.py`` in modes push, stress and sweep, as real processes: the real
sandbox, the example HTTP agents (push connections) and OpenTelemetry agents (stress, runner
sweeps) as processes, and the fake GitHub / GitLab APIs recording the comment."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.fakes.github_server import FakeGitHub, parse_outputs
from tests.fakes.gitlab_server import FakeGitLab
from tests.helpers import AGENT, PY, ROOT, SEED, Sandbox, start_sandbox
from tests.integration.policy_support import start_http_agent

GH_TOKEN = "ghs_entrypoint_modes_token_1"
GL_TOKEN = "glpat-entrypoint-modes-token-2"
DATA = ROOT / "tests" / "integration" / "data"
SWEEP_AGENT = DATA / "sweep_agent.py"
SWEEP_ITEMS = yaml.safe_load((DATA / "sweep_seed.yaml").read_text())["datasets"][0]


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Sandbox]:
    """One sandbox: the example seed + ds_sweep + two push connections (a good and a bad
    HTTP agent)."""
    tmp = tmp_path_factory.mktemp("entrypoint_modes")
    good, bad = start_http_agent("good"), start_http_agent("bad")
    try:
        seed = yaml.safe_load(SEED.read_text())
        seed["datasets"].append(SWEEP_ITEMS)
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


@pytest.fixture
def gh() -> Iterator[FakeGitHub]:
    server = FakeGitHub(token=GH_TOKEN).start()
    yield server
    server.stop()


@pytest.fixture
def gl() -> Iterator[FakeGitLab]:
    server = FakeGitLab(token=GL_TOKEN).start()
    yield server
    server.stop()


def _clean_env(sb: Sandbox, **extra: str) -> dict[str, str]:
    env = sb.agent_env()
    for var in ("NEENS_BASE_URL", "NEENS_API_KEY", "OTEL_EXPORTER_OTLP_ENDPOINT",
                "OTEL_EXPORTER_OTLP_HEADERS"):
        env.pop(var, None)  # the inputs must be enough
    env.update(extra)
    return env


class GitHubJob:
    """A GitHub Actions step environment in ``tmp`` (workspace, outputs, summary, PR 7)."""

    def __init__(self, sb: Sandbox, gh: FakeGitHub, tmp: Path) -> None:
        self.sb, self.gh, self.tmp = sb, gh, tmp
        self.ws = tmp / "workspace"
        self.ws.mkdir(exist_ok=True)
        self.event = tmp / "event.json"
        self.event.write_text(json.dumps({"pull_request": {
            "number": 7, "head": {"repo": {"full_name": gh.full_name}, "sha": "c" * 40},
            "base": {"repo": {"full_name": gh.full_name}}}}))

    def run(self, inputs: dict[str, str], **env: str) -> subprocess.CompletedProcess[str]:
        for name in ("output.txt", "summary.md"):
            (self.tmp / name).write_text("")
        full = _clean_env(
            self.sb, GITHUB_ACTIONS="true", CI="true", GITHUB_WORKSPACE=str(self.ws),
            GITHUB_OUTPUT=str(self.tmp / "output.txt"),
            GITHUB_STEP_SUMMARY=str(self.tmp / "summary.md"),
            GITHUB_EVENT_PATH=str(self.event), GITHUB_EVENT_NAME="pull_request",
            GITHUB_REPOSITORY=self.gh.full_name, GITHUB_API_URL=self.gh.api_url,
            GITHUB_SERVER_URL="https://github.example", GITHUB_WORKFLOW="CI",
            GITHUB_JOB="eval", GITHUB_RUN_ID="77", GITHUB_SHA="c" * 40,
            GITHUB_REF="refs/pull/7/merge", **env,
        )
        full.update({"INPUT_API-KEY": self.sb.api_key, "INPUT_BASE-URL": self.sb.url,
                     "INPUT_GITHUB-TOKEN": GH_TOKEN, "INPUT_POLL-INTERVAL": "0.5",
                     "INPUT_POLL-TIMEOUT": "180", "INPUT_TIMEOUT": "60"})
        full.update({f"INPUT_{k.upper()}": v for k, v in inputs.items()})
        proc = subprocess.run([PY, str(ROOT / "entrypoint.py")], env=full, cwd=self.ws,
                              capture_output=True, text=True, timeout=400)
        assert "Traceback" not in proc.stderr, proc.stderr[-4000:]
        return proc

    @property
    def outputs(self) -> dict[str, str]:
        return parse_outputs((self.tmp / "output.txt").read_text())

    @property
    def summary(self) -> str:
        return (self.tmp / "summary.md").read_text()

    def result(self) -> dict[str, Any]:
        return json.loads((self.ws / self.outputs["result-json"]).read_text())

    def assert_no_secrets(self, proc: subprocess.CompletedProcess[str]) -> None:
        texts = [self.summary, (self.tmp / "output.txt").read_text(),
                 *(c["body"] for c in self.gh.comments(7)),
                 *(p.read_text() for p in self.ws.iterdir() if p.is_file())]
        for text in texts:
            assert self.sb.api_key not in text and GH_TOKEN not in text
        # the key shows only in its own ::add-mask:: line
        assert (proc.stdout + proc.stderr).count(self.sb.api_key) == 1


def test_push_mode_with_a_policy_file_passes_then_blocks(world: Sandbox, gh: FakeGitHub,
                                                         tmp_path: Path) -> None:
    job = GitHubJob(world, gh, tmp_path)
    policy = {"rules": [{"min_pass_rate": 0.9, "severity": "block"},
                        {"max_abs_failures": 0, "severity": "block"}],
              "on_missing_baseline": "pass"}
    (job.ws / "neens-gate.json").write_text(json.dumps(policy))
    inputs = {"MODE": "push", "AGENT-CONNECTION": "conn_good", "DATASET": "ds_refunds",
              "VERSION-LABEL": "push-good", "GATE-POLICY": "neens-gate.json"}
    first = job.run(inputs)
    assert first.returncode == 0, first.stderr[-4000:]
    out = job.outputs
    assert (out["exit-code"], out["verdict"]) == ("0", "passed")
    assert out["run-id"].startswith("ppr_") and out["pass-rate"] == "1.0000"
    run = world.get(f"/preprod-evals/{out['run-id']}").json()
    assert run["runnerMode"] == "push" and run["agentConnectionId"] == "conn_good"
    assert run["ciResult"]["verdict"] == "passed"
    assert run["ciResult"]["policy"]["name"] == "neens-gate.json"
    assert job.summary.startswith("### ✅ Passed: Pre-prod eval ppr\\_")
    assert "#### Policy rules" in job.summary
    assert "inline: nothing to poll" in first.stderr
    doc = job.result()
    assert doc["mode"] == "push" and doc["policyEval"]["blocked"] is False
    comments = gh.comments(7)
    assert len(comments) == 1 and "mode=push" in comments[0]["body"]
    job.assert_no_secrets(first)

    # the bad agent behind another connection: the policy blocks, the same comment is edited;
    # an override input is applied on top of the file and reported as such
    inputs.update({"AGENT-CONNECTION": "conn_bad", "VERSION-LABEL": "push-bad",
                   "MAX-ABS-FAILURES": "1"})
    second = job.run(inputs)
    assert second.returncode == 1, second.stderr[-4000:]
    out = job.outputs
    assert (out["exit-code"], out["verdict"]) == ("1", "blocked")
    run = world.get(f"/preprod-evals/{out['run-id']}").json()
    assert run["ciResult"]["verdict"] == "blocked" and run["ciResult"]["exit_code"] == 1
    assert run["ciResult"]["policy"]["overridden"] is True
    assert "::error title=Neens policy::" in second.stderr
    assert job.summary.startswith("### ❌ Blocked")
    assert "| block | fail |" in job.summary.split("#### Policy rules", 1)[1]
    comments = gh.comments(7)
    assert len(comments) == 1 and "❌ Blocked" in comments[0]["body"]
    # one comment: each job writes "running", then the verdict (POST, PATCH; PATCH, PATCH)
    assert len(gh.calls("POST", "/comments")) == 1 and len(gh.calls("PATCH")) == 3
    job.assert_no_secrets(second)


def test_stress_mode_tables_per_failure_mode_then_reuses_the_suite(
        world: Sandbox, gh: FakeGitHub, tmp_path: Path) -> None:
    job = GitHubJob(world, gh, tmp_path)
    inputs = {"MODE": "stress", "FAILURE-MODES": "fm_refund\nfm_leak\n",
              "COMMAND": f"{PY} {AGENT}", "VERSION-LABEL": "stress-good",
              "MIN-PASS-RATE": "0.9", "CONCURRENCY": "3", "READY-TIMEOUT": "120"}
    first = job.run(inputs, AGENT_MODE="good")
    assert first.returncode == 0, first.stderr[-4000:]
    out = job.outputs
    assert (out["exit-code"], out["verdict"]) == ("0", "passed")
    suite_id = out["suite-id"]
    assert suite_id and out["run-id"].startswith("ppr_")
    summary = job.summary
    assert summary.startswith("### ✅ Passed: Stress test")
    assert "#### Pass rate per failure mode" in summary
    assert "#### Pass rate per strategy" in summary
    assert "| Wrong refund amount (fm\\_refund) | 2 | 2 | 0 | 0 | 100% (2/2) |" in summary
    assert "| Leaks internal notes (fm\\_leak) | 1 | 1 | 0 | 0 | 100% (1/1) |" in summary
    doc = job.result()
    assert doc["mode"] == "stress" and doc["suite"]["id"] == suite_id
    assert {row["label"] for row in doc["stress"]["byFailureMode"]} == {
        "Wrong refund amount (fm_refund)", "Leaks internal notes (fm_leak)"}
    run = world.get(f"/preprod-evals/{out['run-id']}").json()
    assert run["ciResult"]["verdict"] == "passed"
    assert len(gh.comments(7)) == 1 and "mode=stress" in gh.comments(7)[0]["body"]
    job.assert_no_secrets(first)

    # a candidate that shows the failure mode, against the same (reused) suite: blocked
    again = {k: v for k, v in inputs.items() if k != "FAILURE-MODES"}
    again.update({"SUITE-ID": suite_id, "VERSION-LABEL": "stress-bad"})
    second = job.run(again, AGENT_MODE="bad")
    assert second.returncode == 1, second.stderr[-4000:]
    out = job.outputs
    assert (out["exit-code"], out["verdict"], out["suite-id"]) == ("1", "blocked", suite_id)
    assert "Created scenario suite" not in second.stderr
    assert "| Wrong refund amount (fm\\_refund) | 2 | 0 | 2 | 0 | 0% (0/2) |" in job.summary
    assert "#### Failing items (2 of 3)" in job.summary
    assert len(gh.comments(7)) == 1 and "❌ Blocked" in gh.comments(7)[0]["body"]


def test_runner_sweep_mode_outputs_winner_table_and_chart(world: Sandbox, gh: FakeGitHub,
                                                          tmp_path: Path) -> None:
    job = GitHubJob(world, gh, tmp_path)
    proc = job.run({"MODE": "sweep", "ARMS": "big=gpt-4o\nsmall=gpt-4o-mini",
                    "DATASET": "ds_sweep", "K": "1", "COMMAND": f"{PY} {SWEEP_AGENT}",
                    "CONCURRENCY": "4", "VERSION-LABEL": "sweep-1"},
                   SWEEP_BAD_MODELS="gpt-4o")
    assert proc.returncode == 0, proc.stderr[-4000:]
    out = job.outputs
    assert out["exit-code"] == "0" and out["verdict"] == "passed"
    assert out["sweep-id"].startswith("msw") and out["winner"] == "small"
    assert out["run-id"] == ""  # a sweep is many child runs: its id is the sweep-id output
    assert "Running 8 agent invocation(s) across 2 run(s)" in proc.stderr
    summary = job.summary
    assert summary.startswith("### ✅ Passed: Sweep ")
    assert "small clears the 90% bar" in summary
    assert "#### Arm verdicts" in summary
    table = summary.split("#### Arm verdicts", 1)[1]
    assert "| big | gpt-4o | 50.0%" in table and "| small | gpt-4o-mini | 100.0%" in table
    assert "```mermaid" in summary and "xychart-beta" in summary
    doc = job.result()
    assert doc["mode"] == "sweep" and doc["sweepId"] == out["sweep-id"]
    assert doc["winner"] == "small" and doc["verdict"]["outcome"] == "winner"
    assert len(doc["invocations"]) == 8
    comments = gh.comments(7)
    assert len(comments) == 1 and "mode=sweep" in comments[0]["body"]
    assert "#### Arm verdicts" in comments[0]["body"] and "```mermaid" in comments[0]["body"]
    sweep = world.get(f"/model-sweeps/{out['sweep-id']}").json()
    assert sweep["status"] == "completed"
    job.assert_no_secrets(proc)


def test_push_sweep_require_winner_without_a_clearing_arm_exits_1(
        world: Sandbox, gh: FakeGitHub, tmp_path: Path) -> None:
    job = GitHubJob(world, gh, tmp_path)
    proc = job.run({"MODE": "sweep", "SWEEP-MODE": "push", "ARMS": "only=conn_bad",
                    "DATASET": "ds_sweep", "K": "1", "REQUIRE-WINNER": "true",
                    "VERSION-LABEL": "sweep-strict"})
    assert proc.returncode == 1, proc.stderr[-4000:]
    out = job.outputs
    assert (out["exit-code"], out["verdict"], out["winner"]) == ("1", "blocked", "")
    assert out["sweep-id"]
    assert "no arm clears the 90% bar" in job.summary
    assert "require-winner: no arm clears the bar" in job.summary


def test_gitlab_push_sweep_writes_dotenv_with_sweep_id_and_winner(
        world: Sandbox, gl: FakeGitLab, tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    env = _clean_env(
        world, GITLAB_CI="true", CI="true", CI_PROJECT_DIR=str(project),
        CI_API_V4_URL=gl.api_url, CI_PROJECT_ID="42", CI_MERGE_REQUEST_IID="5",
        CI_JOB_NAME="neens-sweep", CI_COMMIT_SHA="d" * 40,
        CI_JOB_URL="https://gitlab.example/g/p/-/jobs/9", NEENS_GITLAB_TOKEN=GL_TOKEN,
        NEENS_API_KEY=world.api_key, NEENS_INPUT_BASE_URL=world.url,
        NEENS_INPUT_MODE="sweep", NEENS_INPUT_SWEEP_MODE="push",
        NEENS_INPUT_ARMS="mini=conn_good, big=conn_bad", NEENS_INPUT_DATASET="ds_sweep",
        NEENS_INPUT_K="1", NEENS_INPUT_POLL_INTERVAL="0.5",
    )
    proc = subprocess.run([PY, str(ROOT / "entrypoint.py")], env=env, cwd=project,
                          capture_output=True, text=True, timeout=400)
    assert proc.returncode == 0, proc.stderr[-4000:]
    values = dict(line.split("=", 1) for line in (project / "neens.env").read_text().splitlines())
    assert values["NEENS_WINNER"] == "mini" and values["NEENS_SWEEP_ID"]
    assert values["NEENS_EXIT_CODE"] == "0" and values["NEENS_VERDICT"] == "passed"
    notes = gl.mr_notes("5")
    assert len(notes) == 1 and "Arm verdicts" in notes[0]["body"]
    for text in (proc.stdout, proc.stderr, notes[0]["body"],
                 (project / "neens.env").read_text(),
                 (project / "neens-result.json").read_text()):
        assert world.api_key not in text and GL_TOKEN not in text


def test_the_one_input_table_is_whole_without_importing_any_mode() -> None:
    """Every mode's inputs are in ``ci/inputs.py`` itself (no registration on import): the
    table module alone lists them, the modes add nothing, and the docs table is its output."""
    probe = ("from neens_action.ci import inputs; import sys; "
             "print(sorted(m for m in sys.modules if m.startswith('neens_action.ci.modes'))); "
             "print([i.name for i in inputs.INPUTS])")
    alone = subprocess.run([PY, "-c", probe], capture_output=True, text=True, timeout=60,
                           cwd=ROOT)
    assert alone.returncode == 0, alone.stderr
    modes_loaded, names = alone.stdout.splitlines()
    assert modes_loaded == "[]"  # no mode module was needed to complete the table
    assert "'arms'" in names and "'agent-connection'" in names and "'shard'" in names
    after = subprocess.run([PY, "-c", "import neens_action.ci.main; " + probe],
                           capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert after.stdout.splitlines()[1] == names  # importing every mode changes nothing
    table = subprocess.run([PY, "-m", "neens_action.ci.inputs"], capture_output=True,
                           text=True, timeout=60, cwd=ROOT)
    assert table.returncode == 0, table.stderr
    doc = (ROOT / "docs" / "internals.md").read_text()
    assert table.stdout in doc
    assert "| `failure-modes` |" in table.stdout and "| `require-winner` |" in table.stdout
