"""The job registry: name -> :class:`Job`, the whole recipe of one kind of run.

A job says which settings it runs with, which flow produces its outcome, how the report is
built, which verdict rule decides it, how it becomes JSON and text, and whether its build
verdict goes back to Neens (ci-result). The CLI commands (``neens_action/cli``) and the CI
modes (``neens_action/ci/modes``) both look their job up here and hand it to
:func:`neens_action.pipeline.execute`; no recipe is written twice.

Each job is made the first time it is looked up, importing only its own flow and report
modules: ``eval run`` does not pay for the sweep, stress and shard code before its first
agent starts.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from neens_action.outcome import Outcome, SweepOutcome

if TYPE_CHECKING:
    from neens_action.api.client import NeensClient
    from neens_action.policy import GatePolicy
    from neens_action.report.model import Report
    from neens_action.settings.connection import Connection
    from neens_action.settings.run import EvalRunSettings
    from neens_action.verdict import Verdict
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
    reports_ci_result: bool = False  # the build verdict goes back to Neens (ci-result)
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


def _eval_report(outcome: Outcome) -> Report:
    from neens_action.report.build.eval import build_eval_report

    return build_eval_report(outcome)


def _eval_decide(outcome: Outcome) -> Verdict:
    from neens_action.verdict import decide

    return decide(outcome)


def _eval_json(outcome: Outcome, report: Report) -> dict[str, Any]:
    from neens_action.report.render.json import eval_document

    return eval_document(outcome, report)


def _eval_text(report: Report) -> str:
    from neens_action.report.render.text import render

    return render(report)


# The report, verdict and rendering modules are imported when the run has ended, not before
# its first agent starts (the wrappers above).
def _eval_job(name: str, settings: type[EvalRunSettings], flow: Callable[..., Outcome], *,
              build: Callable[[Outcome], Report] | None = None,
              decide_with: Callable[[Outcome], Verdict] | None = None,
              to_json: Callable[[Outcome, Report], dict[str, Any]] | None = None,
              reports_ci_result: bool = True) -> Job[Outcome]:
    return Job(name=name, settings=settings, flow=flow, build=build or _eval_report,
               decide=decide_with or _eval_decide, to_json=to_json or _eval_json,
               render_text=_eval_text, blank=_eval_blank(name),
               reports_ci_result=reports_ci_result, takes_policy=True)


def _sweep_job(name: str, flow: Callable[..., SweepOutcome], *, command: str,
               to_json: Callable[[SweepOutcome, Report], dict[str, Any]]) -> Job[SweepOutcome]:
    from neens_action.report.build.sweep import build_sweep_report
    from neens_action.report.render.sweep_text import render_sweep_text
    from neens_action.settings.sweep import SweepSettings
    from neens_action.verdict import decide_sweep

    return Job(name=name, settings=SweepSettings, flow=flow, build=build_sweep_report,
               decide=decide_sweep, to_json=to_json, render_text=render_sweep_text,
               blank=_sweep_blank(command))


def _cli_sweep_json(outcome: SweepOutcome, report: Report) -> dict[str, Any]:
    from neens_action.report.render.json import jsonable
    from neens_action.report.render.sweep_json import sweep_json_document

    doc: dict[str, Any] = jsonable(sweep_json_document(outcome))  # no NaN from the server
    return doc


def _run() -> Job[Outcome]:
    from neens_action.flows import pull
    from neens_action.settings.run import EvalRunSettings

    return _eval_job("run", EvalRunSettings, pull.run_pull)


def _push() -> Job[Outcome]:
    from neens_action.flows import push
    from neens_action.settings.push import EvalPushSettings

    return _eval_job("push", EvalPushSettings, push.run_push)


def _stress() -> Job[Outcome]:
    from neens_action.flows import stress
    from neens_action.report.build.stress import build_stress_report, stress_document
    from neens_action.settings.stress import StressSettings

    return _eval_job("stress", StressSettings, stress.run_stress, build=build_stress_report,
                     to_json=stress_document)


def _shard_job(name: str) -> Job[Outcome]:
    from neens_action.flows import shard
    from neens_action.report.build import shard as shard_report
    from neens_action.settings.run import EvalRunSettings
    from neens_action.verdict import decide_step

    if name == "create":
        return _eval_job("create", EvalRunSettings, shard.run_create_only,
                         build=shard_report.build_create_report, decide_with=decide_step,
                         to_json=shard_report.create_document, reports_ci_result=False)
    if name == "shard":
        return _eval_job("shard", EvalRunSettings, shard.run_shard,
                         build=shard_report.build_shard_report, decide_with=decide_step,
                         to_json=shard_report.shard_document, reports_ci_result=False)
    return _eval_job("finish", EvalRunSettings, shard.run_finish,
                     to_json=shard_report.finish_document)


def _sweep(name: str) -> Job[SweepOutcome]:
    from neens_action.flows.sweep import commands as sweep_commands
    from neens_action.flows.sweep.step import sweep_step
    from neens_action.report.render.sweep_json import sweep_step_document

    if name == "sweep":
        return _sweep_job("sweep", sweep_step, command="run", to_json=sweep_step_document)
    command = name.removeprefix("sweep-")
    return _sweep_job(name, getattr(sweep_commands, command), command=command,
                      to_json=_cli_sweep_json)


_MAKERS: dict[str, Callable[[], Job[Any]]] = {
    "run": _run, "push": _push, "stress": _stress,
    **{name: (lambda name=name: _shard_job(name)) for name in ("create", "shard", "finish")},
    **{name: (lambda name=name: _sweep(name)) for name in (
        "sweep", "sweep-preview", "sweep-start", "sweep-get", "sweep-decide", "sweep-run")},
}


class _Registry(Mapping[str, "Job[Any]"]):
    """The jobs by name, each made (and kept) on its first lookup."""

    def __init__(self) -> None:
        self._made: dict[str, Job[Any]] = {}

    def __getitem__(self, name: str) -> Job[Any]:
        made = self._made.get(name)
        if made is None:
            made = self._made[name] = _MAKERS[name]()
        return made

    def __iter__(self) -> Iterator[str]:
        return iter(_MAKERS)

    def __len__(self) -> int:
        return len(_MAKERS)


JOBS: Mapping[str, Job[Any]] = _Registry()


def job(name: str) -> Job[Any]:
    """The job called ``name`` (a KeyError names a job that does not exist: a bug, not input)."""
    return JOBS[name]
