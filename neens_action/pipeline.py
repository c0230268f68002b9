"""How both front doors (the CLI commands and ``ci.py``) run a flow.

:func:`execute` runs the flow (a callable returning an Outcome; it records its own errors in
``outcome.error``) under the SIGINT/SIGTERM handlers (installed here, and only here), decides
the verdict, reports the build verdict to Neens (best effort), builds the Report once, prints
the text summary on stderr and the ``--json`` document on stdout, writes the JUnit file, calls
each publisher and returns the exit code. :func:`conclude` is the part after the flow, for
library callers that want the Outcome back.
"""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Callable, Iterable
from types import FrameType
from typing import Any

from neens_action.errors import EXIT_INTERRUPTED, Interrupted, NeensError
from neens_action.outcome import Outcome
from neens_action.report.model import Report
from neens_action.world import World

Flow = Callable[[], Outcome]
CI_RESULT_MODES = frozenset({"run", "push", "finish", "stress"})


class SignalGuard:
    """SIGINT and SIGTERM raise :class:`Interrupted` in the main thread (once).

    Decision 15: the flow catches it, kills its agents and cancels its run. A second signal
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


def report_ci_result(outcome: Outcome, client: Any, *, world: World) -> bool:
    """POST the build verdict (E10); never raises.

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


def _interrupted_while_reporting(outcome: Outcome, client: Any, world: World) -> None:
    """Decision 15 after the flow: stop reporting, cancel the run we created, exit 130."""
    outcome.error = "interrupted (SIGINT/SIGTERM) while reporting the build verdict"
    world.log("neens: interrupted: the build verdict was not reported")
    if outcome.extra.get("created"):
        try:
            client.cancel_run(outcome.run_id, quick=True)  # a finished run answers 409: done
        except (NeensError, KeyboardInterrupt) as exc:
            outcome.error += f"; the run could not be cancelled ({' '.join(str(exc).split())})"


def conclude(
    outcome: Outcome,
    *,
    world: World,
    client: Any = None,
    report_ci: bool = True,
    build: Callable[[Outcome], Report] | None = None,
    decide: Callable[[Outcome], tuple[int, str]] | None = None,
    guard: SignalGuard | None = None,
) -> Report:
    """Decide the verdict, report it to Neens (when a run exists), build the Report.

    ``guard`` (armed) is disarmed once the report is sent: a signal during the report
    interrupts it (exit 130), a later one only waits for the summary to be written.
    """
    if decide is None:
        from neens_action.verdict import decide
    if build is None:
        from neens_action.report.build.eval import build_eval_report as build
    outcome.exit_code, outcome.build_verdict = decide(outcome)
    if report_ci and client is not None and outcome.run_id and outcome.mode in CI_RESULT_MODES:
        before = outcome.interrupted
        report_ci_result(outcome, client, world=world)
        if outcome.interrupted and not before:
            if guard is not None:
                guard.disarm()
            _interrupted_while_reporting(outcome, client, world)
            outcome.exit_code, outcome.build_verdict = decide(outcome)
    if guard is not None:
        guard.disarm()
    return build(outcome)


def execute(
    flow: Flow,
    *,
    world: World,
    json_out: bool = False,
    junit_path: str | None = None,
    publishers: Iterable[Any] = (),
    build: Callable[[Outcome], Report] | None = None,
    client: Any = None,
    report_ci: bool = True,
    decide: Callable[[Outcome], tuple[int, str]] | None = None,
    render_text: Callable[[Report], str] | None = None,
    to_json: Callable[[Outcome, Report], dict[str, Any]] | None = None,
    mode: str = "run",
    handle_signals: bool = True,
) -> int:
    """Run ``flow`` and everything after it; returns the exit code (see module docstring).

    A :class:`~neens_action.errors.UsageError` raised by the flow before any request
    propagates (the caller prints its one line); anything the flow records lands in the
    outcome and is reported and rendered.
    """
    guard = SignalGuard() if handle_signals else None
    with guard or contextlib.nullcontext():
        try:
            outcome = flow()
        except Interrupted as exc:  # arrived outside the flow's own handling
            outcome = Outcome(mode=mode, interrupted=True, error=str(exc))
        if guard is not None and outcome.interrupted:
            guard.disarm()
        try:
            report = conclude(outcome, world=world, client=client, report_ci=report_ci,
                              build=build, decide=decide, guard=guard)
        except Interrupted:  # between the verdict and the report: conclude without it
            if guard is not None:
                guard.disarm()
            outcome.interrupted = True
            outcome.error = outcome.error or "interrupted (SIGINT/SIGTERM)"
            report = conclude(outcome, world=world, client=client, report_ci=False,
                              build=build, decide=decide)
        if render_text is None:
            from neens_action.report.render.text import render as render_text
        text = render_text(report)
        if text:
            world.log(text)
        if to_json is None:
            from neens_action.report.render.json import eval_document as to_json
        publishers = list(publishers)
        # The document copies the whole run: built only when someone reads it.
        doc = to_json(outcome, report) if json_out or publishers else None
        if json_out:
            from neens_action.report.render.json import dumps

            print(dumps(doc), file=world.out, flush=True)
        if junit_path:
            write_junit(report, junit_path, world=world)
        for publisher in publishers:
            publish = getattr(publisher, "publish", publisher)
            try:
                outputs = publish(report, outcome, doc) or {}
                report.outputs.update({str(k): str(v) for k, v in outputs.items()})
            except Exception as exc:  # a publisher never fails the build
                name = getattr(publisher, "name", type(publisher).__name__)
                world.log(f"neens: warning: {name}: {' '.join(str(exc).split())[:300]}")
    if outcome.interrupted:
        return EXIT_INTERRUPTED
    return outcome.exit_code


def write_junit(report: Report, path: str, *, world: World) -> None:
    """Write the JUnit XML file (``report.junit``); a failure is one warning line."""
    try:
        from neens_action.report.render import junit
    except ImportError:
        world.log("neens: warning: JUnit output is not available in this build")
        return
    try:
        junit.write(report, path)
    except OSError as exc:
        world.log(f"neens: warning: could not write the JUnit file {path} ({exc.strerror})")
