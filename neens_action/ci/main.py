"""The CI front door: GitHub Actions, the GitLab component, Jenkins and any ``docker run``.

``main()`` (called by ``entrypoint.py``) detects the platform, masks every secret, reads and
validates the inputs (:mod:`neens_action.ci.inputs`, one table), lets the mode build its
:class:`~neens_action.ci.context.Plan` (a job of :mod:`neens_action.jobs` with its settings),
runs the ``install`` command, and hands the job to :func:`neens_action.pipeline.execute` with
this platform's publishers; it exits with the job's code (0 passed, 1 failed, 2 error/bad
input, 130 interrupted). A bad input is one line (``::error title=neens input::<name>: <why>``
on GitHub) and exit 2, never a traceback.

Modes: :data:`MODES` maps ``mode`` to the function building its plan (one module each in
``ci/modes/``). A new mode is one line here plus its module (see ``docs/internals.md``).
"""

from __future__ import annotations

import os
import sys
import traceback
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from neens_action import jobs, pipeline, redact
from neens_action.api.client import NeensClient
from neens_action.ci import inputs as ci_inputs
from neens_action.ci import platforms
from neens_action.ci.context import CiContext, Plan, agent_environment, artifact_path
from neens_action.ci.harden import make_undumpable
from neens_action.ci.inputs import InputError
from neens_action.ci.install import run_install
from neens_action.ci.modes import push as push_mode
from neens_action.ci.modes import run as run_mode
from neens_action.ci.modes import shard as shard_mode
from neens_action.ci.modes import stress as stress_mode
from neens_action.ci.modes import sweep as sweep_mode
from neens_action.ci.modes.common import check_input_rules, doing, short_sha
from neens_action.errors import EXIT_ERROR, EXIT_INTERRUPTED, Interrupted, NeensError
from neens_action.pipeline import Publisher
from neens_action.publish.actions import Commands, GuardedStream
from neens_action.settings.connection import make_client
from neens_action.settings.names import CI, SettingError, speaking
from neens_action.world import World

if TYPE_CHECKING:
    from neens_action.report.model import Report

EMPTY_KEY = ("is empty: secrets are not passed to workflows from forks, and an unset secret "
             "is an empty string")

MODES: dict[str, Callable[[CiContext], Plan]] = {
    "run": run_mode.plan_run,
    "push": push_mode.plan_push,
    "stress": stress_mode.plan_stress,
    "sweep": sweep_mode.plan_sweep,
    "create": shard_mode.plan_create,
    "shard": shard_mode.plan_shard,
    "finish": shard_mode.plan_finish,
}


def publishers_for(ctx: CiContext, mode: str) -> list[Publisher]:
    """The publisher of the platform's table entry (:mod:`neens_action.ci.platforms`), with
    the artifacts, the comment settings and the platform's own token."""
    from neens_action.publish.publishers import PublishConfig

    inp = ctx.inputs

    def where(name: str) -> Path | None:
        value = artifact_path(ctx, name)
        return Path(value) if value else None

    config = PublishConfig(
        environ=ctx.environ, workspace=ctx.workspace, mode=mode,
        result_file=where("result-file"), summary_file=where("summary-file"),
        dotenv_file=where("dotenv-file"), summary=inp.get("summary", True) is not False,
        comment=inp.get("comment", "update"), matrix_key=inp.get("matrix-key", ""),
        token=ctx.platform.token(inp, ctx.environ), commands=ctx.commands, log=ctx.log,
        comment_author=inp.get("comment-author") or "", commit=short_sha(ctx) or "",
    )
    return [ctx.platform.publisher_class()(config)]


def bad_input(platform: platforms.Platform, err: InputError, commands: Commands | None,
              world: World, environ: Mapping[str, str]) -> int:
    """One line naming the input, exit 2; on GitHub also a short summary and the outputs
    (``exit-code=2``, ``verdict=errored``) so ``if: always()`` steps can read them; and, when
    a token and a PR/MR are known, the sticky comment says what is wrong and how to fix it
    (the author otherwise never learns why the check is red)."""
    from neens_action.report.build.errors import bad_input_report

    report = bad_input_report(err.name, err.why)
    if not platform.workflow_commands or commands is None:
        world.log(f"neens: error: input {err.name}: {err.why}")
        bad_input_comment(platform, report, environ, commands, world.log)
        return EXIT_ERROR
    commands.error(f"{err.name}: {err.why}", title="neens input")
    from neens_action.publish.actions import write_outputs, write_summary
    from neens_action.report.render.markdown import render_summary

    try:
        if environ.get("GITHUB_STEP_SUMMARY"):
            write_summary(environ["GITHUB_STEP_SUMMARY"], render_summary(report))
        if environ.get("GITHUB_OUTPUT"):
            write_outputs(environ["GITHUB_OUTPUT"], {"exit-code": str(EXIT_ERROR),
                                                     "verdict": "errored"})
    except OSError:
        pass  # the annotation above already says what to fix
    bad_input_comment(platform, report, environ, commands, world.log)
    return EXIT_ERROR


COMMENT_INPUTS = ("github-token", "comment", "comment-author", "matrix-key")


def bad_input_comment(platform: platforms.Platform, report: Report,
                      environ: Mapping[str, str], commands: Commands | None,
                      log: Callable[[str], None]) -> None:
    """The bad-input report as the sticky PR/MR comment, through the platform's publisher
    (the same marker as the verdict's, so the next good run replaces it). Nothing when the
    comment inputs themselves are bad, the comment is off or no token is known."""
    from neens_action.publish.publishers import PublishConfig

    try:
        inputs = ci_inputs.parse_inputs(environ, COMMENT_INPUTS)
    except InputError:
        return
    token = platform.token(inputs, environ)
    comment = str(inputs.get("comment") or "update").lower()
    if not token or comment == "off":
        return
    try:
        mode = str(ci_inputs.parse_inputs(environ, ["mode"]).get("mode") or "run").lower()
    except InputError:
        mode = "run"
    config = PublishConfig(
        environ=environ, workspace=platforms.workspace(environ),
        mode=mode if mode in MODES else "run", comment=comment,
        comment_author=inputs.get("comment-author") or "",
        matrix_key=inputs.get("matrix-key", ""), token=token, commands=commands, log=log)
    try:
        platform.publisher_class()(config).sticky(report)
    except Exception as exc:  # the error line above already says what to fix
        log(f"neens: warning: could not post the PR comment: {type(exc).__name__}")


def run(environ: Mapping[str, str] | None = None, *, stream: TextIO | None = None) -> int:
    """The whole CI step; returns the exit code.

    On GitHub every line goes through a :class:`GuardedStream` (untrusted text is inert)
    and, from the line after the masks until the end, commands are paused: only our own
    annotations and groups run, each resumed around itself.
    """
    env = dict(os.environ if environ is None else environ)
    make_undumpable()  # agents cannot read /proc/$PPID/environ
    platform = platforms.detect(env)  # resolved once, for the whole step
    # every secret is redacted from everything we write (neens_action/redact.py)
    redact.register(ci_inputs.secrets_in(env))
    redact.register_environ(env)
    if not platform.workflow_commands:
        saved = sys.stdout, sys.stderr
        sys.stdout, sys.stderr = redact.Redacted(saved[0]), redact.Redacted(saved[1])
        try:
            with speaking(CI):  # settings are named as inputs (--api-key reads "api-key input")
                return _run(env, platform, redact.Redacted(stream or saved[1]), None)
        finally:
            sys.stdout, sys.stderr = saved
    guard = GuardedStream(stream or sys.stderr)
    commands = Commands(guard)
    for secret in ci_inputs.secrets_in(env):
        commands.mask(secret)
    commands.stop()
    saved = sys.stdout, sys.stderr
    sys.stdout = sys.stderr = guard  # a stray print is inert too
    try:
        with speaking(CI):
            return _run(env, platform, guard, commands)
    finally:
        sys.stdout, sys.stderr = saved
        commands.resume()


def _run(env: dict[str, str], platform: platforms.Platform, err: TextIO,
         commands: Commands | None) -> int:
    world = World(environ=env, err=err, out=sys.stdout, platform=platform)
    client: NeensClient | None = None
    publishers: list[Publisher] = []  # once known: who posts the running / unfinished notes
    try:
        inputs = ci_inputs.parse_inputs(env)
        check_input_rules(inputs)  # the settings' value rules, before anything else
        if not str(inputs.get("api-key") or "").strip():
            raise InputError("api-key", EMPTY_KEY)  # never send an empty key to Neens
        world = World(environ=agent_environment(env, inputs, warn=world.log), err=err,
                      out=sys.stdout, platform=platform)
        workspace = platforms.workspace(env)
        wd = inputs.get("working-directory")
        if wd:
            target = Path(wd) if Path(wd).is_absolute() else workspace / wd
            if not target.is_dir():
                raise InputError("working-directory", f"{wd!r} is not a directory")
            os.chdir(target)
        ctx = CiContext(environ=env, platform=platform, inputs=inputs, world=world,
                        workspace=workspace, commands=commands)
        mode = inputs.get("mode", "run").lower()
        if mode not in MODES:
            raise InputError("mode", f"must be one of {', '.join(MODES)}, got {mode[:40]!r}")
        plan = MODES[mode](ctx)
        job = jobs.job(plan.job)
        publishers = publishers_for(ctx, job.name)
        client = make_client(plan.settings, log=world.log)
        failure = None
        install_timeout = inputs.get("install-timeout", 1200.0)
        if install_timeout <= 0:
            raise InputError("install-timeout", f"must be greater than 0, got {install_timeout:g}")
        if inputs.get("install"):
            failure = run_install(inputs["install"], env=world.environ,
                                  timeout=install_timeout,
                                  log=world.log, commands=commands)
        if inputs.get("doctor") and failure is None:
            failure = preflight(ctx, client)
        # a failed install or preflight concludes the job as a run error, without running it
        flow = (lambda: job.blank(failure)) if failure else None
        if not failure:  # one job, one comment: "running" until the verdict replaces it
            announce(publishers, mode, plan.settings, world)
        code = pipeline.execute(
            job, plan.settings, world=world, policy=plan.policy, client=client,
            publishers=publishers,
            junit_path=artifact_path(ctx, "junit-file"), flow=flow,
        )
        if any(getattr(p, "started", None) for p in publishers):
            unfinished(publishers, "its verdict could not be posted (see the CI job)", code,
                       world.log)
        return code
    except SettingError as exc:  # a settings rule an input broke, named as that input
        return bad_input(platform, InputError.of(exc), commands, world, env)
    except InputError as exc:
        return bad_input(platform, exc, commands, world, env)
    except NeensError as exc:
        if commands is not None:
            commands.error(str(exc), title="neens")
        else:
            world.log(f"neens: error: {exc}")
        if any(getattr(p, "started", None) for p in publishers):
            unfinished(publishers, str(exc), exc.exit_code, world.log)
        return exc.exit_code
    except KeyboardInterrupt:
        world.log("neens: interrupted")
        unfinished(publishers, "interrupted (SIGINT/SIGTERM)", EXIT_INTERRUPTED, world.log)
        return EXIT_INTERRUPTED
    except Exception as exc:  # a bug of ours: the log has the traceback, the PR a note
        world.log("neens: error: the action crashed (a bug: please report it with this log)")
        world.log(traceback.format_exc().rstrip())
        unfinished(publishers, f"the action crashed ({type(exc).__name__}): see the CI job",
                   EXIT_ERROR, world.log)
        return EXIT_ERROR
    finally:
        if client is not None:
            client.close()


def announce(publishers: list[Publisher], mode: str, settings: object, world: World) -> None:
    """The running comment: ``mode: run`` posts it once its items are known (``World.on_start``,
    before the first agent starts; once, however many repetitions follow); push, stress,
    sweep and finish before their flow's first request
    (:func:`neens_action.ci.modes.common.doing`). Never fatal."""
    if mode == "run":
        dataset = str(getattr(settings, "dataset", None) or "")
        told: list[int] = []

        def started(items: int) -> None:
            if told:  # one running write per job: the verdict is the second
                return
            told.append(items)
            for publisher in publishers:
                announce_run = getattr(publisher, "in_progress", None)
                if announce_run is not None:
                    announce_run(items, dataset, world.clock.utcnow())

        world.on_start = started
        return
    try:
        what = doing(mode, settings)
        for publisher in publishers:
            running = getattr(publisher, "running", None)
            if what is not None and running is not None:
                running(what, world.clock.utcnow())
    except Interrupted:  # SIGTERM while the note was being posted: the job stops
        raise
    except Exception as exc:  # a progress note never stops the job
        world.log(f"neens: warning: could not post the progress comment: {type(exc).__name__}")


def unfinished(publishers: list[Publisher], why: str, code: int,
               log: Callable[[str], None]) -> None:
    """Each publisher whose verdict is not in the sticky comment says the job did not finish
    (best effort: the job's exit code stands)."""
    for publisher in publishers:
        note = getattr(publisher, "unfinished", None)
        if note is None:
            continue
        try:
            note(why, code)
        except Exception as exc:  # the job's own error line already says what happened
            log(f"neens: warning: could not update the PR comment: {type(exc).__name__}")


def preflight(ctx: CiContext, client: NeensClient) -> str | None:
    """``doctor: true``: the ``neens doctor`` checks, in the agents' environment."""
    from neens_action.doctor import preflight as run_preflight

    agent_traces = bool(ctx.inputs.get("command"))  # push-style modes send no agent traces
    return run_preflight(client, client.base_url, ctx.inputs.get("api-key") or None,
                         ctx.world.environ, ctx.world.log, agent_traces=agent_traces)


def main() -> None:
    sys.exit(run())


__all__ = ["MODES", "main", "run"]
