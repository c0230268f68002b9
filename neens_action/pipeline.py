"""How both front doors (the CLI commands and the CI step) run a job: the one pipeline.

:func:`execute` builds the client (``settings.connection.make_client``), runs the job's flow
under the SIGINT/SIGTERM handlers (installed here, and only here), then :func:`conclude`:
the policy is evaluated against the outcome (``policy.apply_policy``), the job's verdict rule
decides, the build verdict goes back to Neens (best effort, for jobs that report one), and the
Report is built once. Then the text summary goes to stderr, the ``--json`` document to stdout,
the JUnit file is written and each publisher is called; the exit code comes back.
"""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from types import FrameType
from typing import TYPE_CHECKING, Any, Protocol

from neens_action.agents.driver import choose_launch
from neens_action.errors import EXIT_INTERRUPTED, Interrupted, NeensError
from neens_action.outcome import Outcome, SweepOutcome
from neens_action.report.model import Report
from neens_action.settings.connection import Connection, make_client
from neens_action.world import World

if TYPE_CHECKING:
    from neens_action.api.client import NeensClient
    from neens_action.jobs import Job
    from neens_action.policy import GatePolicy

AnyOutcome = Outcome | SweepOutcome


class Publisher(Protocol):
    """A CI surface (job summary, outputs, PR/MR comment, files): see ``publish/``."""

    name: str

    def publish(self, report: Report, outcome: AnyOutcome,
                doc: dict[str, Any] | None) -> dict[str, str] | None: ...


@dataclass
class Finished:
    """What a job ended with: the exit code, the outcome and its report."""

    code: int
    outcome: AnyOutcome
    report: Report


class SignalGuard:
    """SIGINT and SIGTERM raise :class:`Interrupted` in the main thread (once).

    On SIGINT/SIGTERM the flow catches it, kills its agents and cancels its run. A second signal
    while that clean-up runs is ignored (the clean-up is bounded by short timeouts), and after
    :meth:`disarm` (the flow is done) signals are only recorded, so reporting finishes.
    """

    SIGNALS = (signal.SIGINT, signal.SIGTERM)

    def __init__(self) -> None:
        self.armed = True
        self.received: int | None = None
        self._old: dict[int, Any] = {}

    def _handler(self, signum: int, frame: FrameType | None) -> None:
        if self.received is not None or not self.armed:
            self.received = self.received or signum
            return
        self.received = signum
        raise Interrupted(f"interrupted by {signal.Signals(signum).name}")

    def __enter__(self) -> SignalGuard:
        if threading.current_thread() is threading.main_thread():
            for sig in self.SIGNALS:
                self._old[sig] = signal.signal(sig, self._handler)
        return self

    def disarm(self) -> None:
        self.armed = False

    def __exit__(self, *exc: object) -> None:
        for sig, old in self._old.items():
            signal.signal(sig, old)
        self._old.clear()


def report_ci_result(outcome: Outcome, client: NeensClient, *, world: World) -> bool:
    """POST the build verdict (``.../ci-result``); never raises.

    A failure is one warning line, or, when the run already errored, a clause appended to
    that error (the build prints a single error line). SIGINT/SIGTERM during the report
    (an armed :class:`SignalGuard`) abandons it and marks the outcome interrupted.
    """
    from neens_action.verdict import ci_result_payload

    try:
        client.post_ci_result(outcome.run_id, ci_result_payload(outcome),
                              quick=outcome.interrupted)
    except (Interrupted, KeyboardInterrupt):
        outcome.interrupted = True
        return False
    except (NeensError, OSError, ValueError) as exc:
        detail = " ".join(str(exc).split())[:200]
        if outcome.error:
            outcome.error += "; the build verdict could not be reported to Neens either"
        else:
            world.log(f"neens: warning: could not report the build verdict to Neens "
                      f"({detail}); the exit code is unaffected")
        return False
    outcome.ci_result_reported = True
    return True


def _interrupted_while_reporting(outcome: Outcome, client: NeensClient, world: World) -> None:
    """An interrupt after the flow: stop reporting, cancel the run we created, exit 130."""
    outcome.error = "interrupted (SIGINT/SIGTERM) while reporting the build verdict"
    world.log("neens: interrupted: the build verdict was not reported")
    if outcome.created:
        try:
            client.cancel_run(outcome.run_id, quick=True)  # a finished run answers 409: done
        except (NeensError, KeyboardInterrupt) as exc:
            outcome.error += f"; the run could not be cancelled ({' '.join(str(exc).split())})"


def conclude(
    outcome: AnyOutcome,
    *,
    job: Job[Any],
    world: World,
    client: NeensClient | None = None,
    policy: GatePolicy | None = None,
    report_ci: bool = True,
    guard: SignalGuard | None = None,
) -> Report:
    """Evaluate the policy, decide the verdict, report it to Neens, build the Report.

    ``guard`` (armed) is disarmed once the report is sent: a signal during the report
    interrupts it (exit 130), a later one only waits for the summary to be written.
    """
    if isinstance(outcome, Outcome) and job.takes_policy:
        from neens_action.policy import apply_policy  # after the run, not before its agents

        apply_policy(policy, outcome)
    outcome.exit_code, outcome.build_verdict = job.decide(outcome)
    if (report_ci and job.reports_ci_result and client is not None
            and isinstance(outcome, Outcome) and outcome.run_id):
        before = outcome.interrupted
        report_ci_result(outcome, client, world=world)
        if outcome.interrupted and not before:
            if guard is not None:
                guard.disarm()
            _interrupted_while_reporting(outcome, client, world)
            outcome.exit_code, outcome.build_verdict = job.decide(outcome)
    if guard is not None:
        guard.disarm()
    return job.build(outcome)


def execute(job: Job[Any], settings: Connection, **kwargs: Any) -> int:
    """:func:`run_job` for callers that want only the exit code."""
    return run_job(job, settings, **kwargs).code


def run_job(
    job: Job[Any],
    settings: Connection,
    *,
    world: World,
    policy: GatePolicy | None = None,
    client: NeensClient | None = None,
    publishers: Iterable[Publisher] = (),
    json_out: bool = False,
    junit_path: str | None = None,
    report_ci: bool = True,
    flow: Callable[[], AnyOutcome] | None = None,
    handle_signals: bool = True,
) -> Finished:
    """Run ``job`` with ``settings`` and everything after it (see the module docstring).

    ``flow`` replaces the job's flow (the CI step uses it when its ``install`` command or
    ``doctor`` preflight failed: the job then concludes as an error without running). A
    :class:`~neens_action.errors.UsageError` raised by the flow before any request
    propagates (the caller prints its one line); anything the flow records lands in the
    outcome and is reported and rendered.
    """
    choose_launch(world.environ)  # a bad NEENS_LAUNCHER is bad input: refused before any request
    own_client = client is None
    client = make_client(settings) if client is None else client
    run = flow or (lambda: job.run_flow(settings, client=client, world=world, policy=policy))
    guard = SignalGuard() if handle_signals else None
    try:
        with guard or contextlib.nullcontext():
            try:
                outcome = run()
            except Interrupted as exc:  # arrived outside the flow's own handling
                outcome = job.blank(str(exc))
                outcome.interrupted = True
            if not outcome.base_url:
                outcome.base_url = client.base_url
            if guard is not None and outcome.interrupted:
                guard.disarm()
            try:
                report = conclude(outcome, job=job, world=world, client=client, policy=policy,
                                  report_ci=report_ci, guard=guard)
            except Interrupted:  # between the verdict and the report: conclude without it
                if guard is not None:
                    guard.disarm()
                outcome.interrupted = True
                outcome.error = outcome.error or "interrupted (SIGINT/SIGTERM)"
                report = conclude(outcome, job=job, world=world, client=client, policy=policy,
                                  report_ci=False)
            _attach_links(report, outcome, world, ui_url=settings.ui_url)
            publish(job, outcome, report, world=world, publishers=publishers,
                    json_out=json_out, junit_path=junit_path)
    finally:
        if own_client:
            client.close()
    code = EXIT_INTERRUPTED if outcome.interrupted else outcome.exit_code
    return Finished(code=code, outcome=outcome, report=report)


def _attach_links(report: Report, outcome: AnyOutcome, world: World, *, ui_url: str) -> None:
    """Human links (the ``ui-url`` setting, else ``NEENS_UI_URL``) and the CI context, before
    anything is rendered."""
    from neens_action.report.links import attach

    base = (outcome.gate.baseline if isinstance(outcome, Outcome) and outcome.gate is not None
            else None)
    base_id = base.run_id if base is not None else ""
    attach(report, ui_url=ui_url, environ=world.environ, baseline_run_id=base_id,
           platform=world.platform)


def publish(job: Job[Any], outcome: AnyOutcome, report: Report, *, world: World,
            publishers: Iterable[Publisher], json_out: bool, junit_path: str | None) -> None:
    """Every surface of one finished job: text, ``--json``, JUnit, then the publishers."""
    text = job.render_text(report)
    if text:
        world.log(text)
    publishers = list(publishers)
    # The document copies the whole run: built only when someone reads it.
    doc = job.to_json(outcome, report) if json_out or publishers else None
    if json_out and doc is not None:
        from neens_action.report.render.json import write

        write(doc, world.out)  # piece by piece: spilled item lists are never held whole
        world.out.flush()
    if junit_path:
        write_junit(report, junit_path, world=world)
    for publisher in publishers:
        try:
            outputs = publisher.publish(report, outcome, doc) or {}
            report.outputs.update({str(k): str(v) for k, v in outputs.items()})
        except Exception as exc:  # a publisher never fails the build
            name = getattr(publisher, "name", type(publisher).__name__)
            world.log(f"neens: warning: {name}: {' '.join(str(exc).split())[:300]}")


def write_junit(report: Report, path: str, *, world: World) -> None:
    """Write the JUnit XML file (``report.junit``); a failure is one warning line."""
    from neens_action.report.render import junit

    try:
        junit.write(report, path)
    except OSError as exc:
        world.log(f"neens: warning: could not write the JUnit file {path} ({exc.strerror})")
