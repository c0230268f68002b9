"""The job registry: name -> :class:`Job`, the whole recipe of one kind of run.

A job says which settings it runs with, which flow produces its outcome, how the report is
built, which verdict rule decides it, how it becomes JSON and text, and whether its build
verdict goes back to Neens (ci-result). The CLI commands (``neens_action/cli``) and the CI
modes (``neens_action/ci/modes``) both look their job up here and hand it to
:func:`neens_action.pipeline.execute`; no recipe is written twice.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from neens_action.api.client import NeensClient
from neens_action.flows import pull, push, shard, stress
from neens_action.flows.sweep import commands as sweep_commands
from neens_action.flows.sweep.step import sweep_step
from neens_action.outcome import Outcome, SweepOutcome
from neens_action.policy import GatePolicy
from neens_action.report.build.eval import build_eval_report
from neens_action.report.build.shard import (
    build_create_report,
    build_shard_report,
    create_document,
    finish_document,
    shard_document,
)
from neens_action.report.build.stress import build_stress_report, stress_document
from neens_action.report.build.sweep import build_sweep_report
from neens_action.report.model import Report
from neens_action.report.render.json import eval_document, jsonable
from neens_action.report.render.sweep_json import sweep_json_document, sweep_step_document
from neens_action.report.render.sweep_text import render_sweep_text
from neens_action.report.render.text import render as render_eval_text
from neens_action.settings.connection import Connection
from neens_action.settings.push import EvalPushSettings
from neens_action.settings.run import EvalRunSettings
from neens_action.settings.stress import StressSettings
from neens_action.settings.sweep import SweepSettings
from neens_action.verdict import Verdict, decide, decide_step, decide_sweep
from neens_action.world import World

OutcomeT = TypeVar("OutcomeT", Outcome, SweepOutcome)


@dataclass(frozen=True)
class Job(Generic[OutcomeT]):
    """One kind of run, from settings to exit code (see the module docstring)."""

    name: str
    settings: type[Connection]
    flow: Callable[..., OutcomeT]  # (settings, *, client, world[, policy]) -> outcome
    build: Callable[[OutcomeT], Report]
    decide: Callable[[OutcomeT], Verdict]
    to_json: Callable[[OutcomeT, Report], dict[str, Any]]
    render_text: Callable[[Report], str]
    blank: Callable[[str], OutcomeT]  # an outcome for a job that never ran (install failed, ...)
    reports_ci_result: bool = False  # the build verdict goes back to Neens (E10)
    takes_policy: bool = False  # gate-as-code applies (evaluated by the pipeline)

    def run_flow(self, settings: Connection, *, client: NeensClient, world: World,
                 policy: GatePolicy | None = None) -> OutcomeT:
        if self.takes_policy:
            return self.flow(settings, client=client, world=world, policy=policy)
        return self.flow(settings, client=client, world=world)


def _eval_blank(mode: str) -> Callable[[str], Outcome]:
    return lambda error: Outcome(mode=mode, error=error)


def _sweep_blank(command: str) -> Callable[[str], SweepOutcome]:
    return lambda error: SweepOutcome(command=command, error=error)


def _eval_job(name: str, settings: type[EvalRunSettings], flow: Callable[..., Outcome], *,
              build: Callable[[Outcome], Report] = build_eval_report,
              decide_with: Callable[[Outcome], Verdict] = decide,
              to_json: Callable[[Outcome, Report], dict[str, Any]] = eval_document,
              reports_ci_result: bool = True) -> Job[Outcome]:
    return Job(name=name, settings=settings, flow=flow, build=build, decide=decide_with,
               to_json=to_json, render_text=render_eval_text, blank=_eval_blank(name),
               reports_ci_result=reports_ci_result, takes_policy=True)


def _sweep_job(name: str, flow: Callable[..., SweepOutcome], *, command: str,
               to_json: Callable[[SweepOutcome, Report], dict[str, Any]]) -> Job[SweepOutcome]:
    return Job(name=name, settings=SweepSettings, flow=flow, build=build_sweep_report,
               decide=decide_sweep, to_json=to_json, render_text=render_sweep_text,
               blank=_sweep_blank(command))


def _cli_sweep_json(outcome: SweepOutcome, report: Report) -> dict[str, Any]:
    doc: dict[str, Any] = jsonable(sweep_json_document(outcome))  # no NaN from the server
    return doc


JOBS: Mapping[str, Job[Any]] = {job.name: job for job in (
    _eval_job("run", EvalRunSettings, pull.run_pull),
    _eval_job("push", EvalPushSettings, push.run_push),
    _eval_job("stress", StressSettings, stress.run_stress, build=build_stress_report,
              to_json=stress_document),
    _eval_job("create", EvalRunSettings, shard.run_create_only, build=build_create_report,
              decide_with=decide_step, to_json=create_document, reports_ci_result=False),
    _eval_job("shard", EvalRunSettings, shard.run_shard, build=build_shard_report,
              decide_with=decide_step, to_json=shard_document, reports_ci_result=False),
    _eval_job("finish", EvalRunSettings, shard.run_finish, to_json=finish_document),
    _sweep_job("sweep", sweep_step, command="run", to_json=sweep_step_document),
    _sweep_job("sweep-preview", sweep_commands.preview, command="preview",
               to_json=_cli_sweep_json),
    _sweep_job("sweep-start", sweep_commands.start, command="start", to_json=_cli_sweep_json),
    _sweep_job("sweep-get", sweep_commands.get, command="get", to_json=_cli_sweep_json),
    _sweep_job("sweep-decide", sweep_commands.decide, command="decide",
               to_json=_cli_sweep_json),
    _sweep_job("sweep-run", sweep_commands.run, command="run", to_json=_cli_sweep_json),
)}


def job(name: str) -> Job[Any]:
    """The job called ``name`` (a KeyError names a job that does not exist: a bug, not input)."""
    return JOBS[name]
