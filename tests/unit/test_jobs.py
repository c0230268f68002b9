"""The job registry: every job builds and concludes from the registry alone, and every CLI
command and every CI mode resolves to its job (the pipeline is replaced by a recorder, so
what is checked is the real resolution, not a table)."""

from __future__ import annotations

import io
from typing import Any

import pytest

from neens_action import pipeline
from neens_action.ci import main as ci
from neens_action.cli.app import invoke
from neens_action.jobs import JOBS, Job
from neens_action.outcome import Outcome
from neens_action.pipeline import Finished, conclude
from neens_action.report.model import Report
from neens_action.settings.connection import Connection
from neens_action.world import World

URL = "http://127.0.0.1:9"
EVAL_JOBS = ("run", "push", "stress", "create", "shard", "finish")
SWEEP_JOBS = ("sweep", "sweep-preview", "sweep-start", "sweep-get", "sweep-decide",
              "sweep-run")


def test_the_registry_holds_every_job() -> None:
    assert set(JOBS) == {*EVAL_JOBS, *SWEEP_JOBS}
    for name, job in JOBS.items():
        assert job.name == name and issubclass(job.settings, Connection)


@pytest.mark.parametrize("name", sorted(JOBS))
def test_every_job_concludes_renders_and_serialises_from_the_registry(name: str) -> None:
    job = JOBS[name]
    world = World(environ={}, err=io.StringIO(), out=io.StringIO())
    outcome = job.blank("the install command failed with exit code 3")
    report = conclude(outcome, job=job, world=world)
    assert isinstance(report, Report)
    assert (outcome.exit_code, outcome.build_verdict) == (2, "errored")  # never a pass
    assert report.verdict == "errored" and report.exit_code == 2
    assert "the install command failed" in job.render_text(report)
    doc = job.to_json(outcome, report)
    assert isinstance(doc, dict) and doc
    assert 2 in (doc.get("exitCode"), doc.get("exit_code"))


def test_ci_result_goes_back_only_for_jobs_that_gate_one_run() -> None:
    assert {n for n, j in JOBS.items() if j.reports_ci_result} == {"run", "push", "stress",
                                                                   "finish"}
    assert {n for n, j in JOBS.items() if j.takes_policy} == set(EVAL_JOBS)


class Recorder:
    """Stands in for ``pipeline.run_job``: records which job ran with which settings."""

    def __init__(self) -> None:
        self.calls: list[tuple[Job[Any], Connection]] = []

    def __call__(self, job: Job[Any], settings: Connection, **kwargs: Any) -> Finished:
        self.calls.append((job, settings))
        outcome = Outcome(mode=job.name, run_id="ppr_1")
        return Finished(code=0, outcome=outcome, report=Report(
            kind="eval", title="t", verdict="passed", exit_code=0, headline=""))


@pytest.fixture
def recorder(monkeypatch: pytest.MonkeyPatch) -> Recorder:
    rec = Recorder()
    monkeypatch.setattr(pipeline, "run_job", rec)
    for var in ("GITHUB_ACTIONS", "GITLAB_CI", "JENKINS_URL", "CI", "NEENS_GATES",
                "NEENS_GATE_POLICY", "NEENS_BASE_URL", "NEENS_API_KEY"):
        monkeypatch.delenv(var, raising=False)
    return rec


CLI = [
    (["eval", "run", "--run-id", "ppr_1", "--", "agent"], "run"),
    (["eval", "run", "--create", "--dataset", "ds", "--version-label", "v", "--only-create"],
     "create"),
    (["eval", "run", "--run-id", "ppr_1", "--shard", "1/2", "--", "agent"], "shard"),
    (["eval", "run", "--run-id", "ppr_1", "--finish"], "finish"),
    (["eval", "push", "--agent-connection", "c", "--dataset", "ds", "--version-label", "v"],
     "push"),
    (["stress", "run", "--failure-mode", "fm", "--version-label", "v", "--", "agent"],
     "stress"),
    (["sweep", "preview", "--arm", "a=c1", "--dataset-id", "ds"], "sweep-preview"),
    (["sweep", "start", "--name", "n", "--version-label", "v", "--arm", "a=c1",
      "--dataset-id", "ds"], "sweep-start"),
    (["sweep", "get", "msw_1"], "sweep-get"),
    (["sweep", "decide", "--sweep-id", "msw_1"], "sweep-decide"),
    (["sweep", "run", "--sweep-id", "msw_1", "--", "agent"], "sweep-run"),
]


@pytest.mark.parametrize(("argv", "name"), CLI, ids=[" ".join(a[:2]) + f"->{n}"
                                                     for a, n in CLI])
def test_each_cli_command_resolves_to_its_job(recorder: Recorder, argv: list[str],
                                              name: str) -> None:
    args = [*argv[:2], "--base-url", URL, "--api-key", "nk_test", *argv[2:]]
    assert invoke(args) == 0
    assert len(recorder.calls) == 1
    job, settings = recorder.calls[0]
    assert job is JOBS[name]
    assert isinstance(settings, job.settings) and settings.base_url == URL


MODES = [
    ({"mode": "run", "command": "agent", "dataset": "ds", "version-label": "v"}, "run"),
    ({"mode": "push", "agent-connection": "c", "dataset": "ds", "version-label": "v"}, "push"),
    ({"mode": "stress", "failure-modes": "fm", "command": "agent", "version-label": "v"},
     "stress"),
    ({"mode": "sweep", "arms": "a=gpt-4o", "command": "agent", "dataset": "ds",
      "version-label": "v"}, "sweep"),
    ({"mode": "create", "dataset": "ds", "version-label": "v"}, "create"),
    ({"mode": "shard", "run-id": "ppr_1", "shard": "1/2", "command": "agent"}, "shard"),
    ({"mode": "finish", "run-id": "ppr_1"}, "finish"),
]


@pytest.mark.parametrize(("inputs", "name"), MODES, ids=[n for _, n in MODES])
def test_each_ci_mode_resolves_to_its_job(recorder: Recorder, inputs: dict[str, str],
                                          name: str) -> None:
    env = {"NEENS_INPUT_BASE_URL": URL, "NEENS_INPUT_API_KEY": "nk_test",
           **{"NEENS_INPUT_" + k.upper().replace("-", "_"): v for k, v in inputs.items()}}
    assert set(ci.MODES) == {n for _, n in MODES}
    assert ci.run(env, stream=io.StringIO()) == 0
    job, settings = recorder.calls[0]
    # the CI front door runs the registry's job, its report reworded into input names
    expected = JOBS[name]
    assert (job.name, job.flow, job.decide, job.to_json) == (
        expected.name, expected.flow, expected.decide, expected.to_json)
    assert isinstance(settings, job.settings)
