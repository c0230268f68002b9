"""The CI front door: GitHub Actions, the GitLab component, Jenkins and any ``docker run``.

``main()`` (called by ``entrypoint.py``) detects the platform, masks every secret, reads and
validates the inputs (:mod:`neens_action.ci.inputs`), runs the ``install`` command, builds the
mode's flow, and hands it to :func:`neens_action.pipeline.execute` with this platform's
publishers; it exits with the flow's code (0 passed, 1 failed, 2 error/bad input, 130
interrupted). A bad input is one line (``::error title=neens input::<name>: <why>`` on GitHub)
and exit 2, never a traceback.

Modes: :data:`MODES` maps ``mode`` to ``"module:function"``; the function takes a
:class:`CiContext` and returns a :class:`ModePlan`. A new mode is one line here plus its own
module (see ``docs/internals.md``, "CI inputs").
"""

from __future__ import annotations

import importlib
import os
import re
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from neens_action.ci import inputs as ci_inputs
from neens_action.ci.inputs import InputError, Inputs
from neens_action.ci.install import run_install
from neens_action.errors import EXIT_ERROR, EXIT_INTERRUPTED, NeensError, UsageError
from neens_action.outcome import Outcome
from neens_action.publish.actions import Commands
from neens_action.world import World

# mode -> "module:function" building its ModePlan. Other helpers add their modes here.
MODES: dict[str, str] = {
    "run": "neens_action.ci.main:plan_run",
    "push": "neens_action.ci.modes.shared:plan_push",
    "stress": "neens_action.ci.modes.shared:plan_stress",
    "sweep": "neens_action.ci.modes.shared:plan_sweep",
    "create": "neens_action.ci.modes.shard:plan_create",
    "shard": "neens_action.ci.modes.shard:plan_shard",
    "finish": "neens_action.ci.modes.shard:plan_finish",
}

# Variables the agents and the install command never need to see.
_SCRUB_PREFIXES = ("INPUT_", "NEENS_INPUT_")
_SCRUB = {"NEENS_GITLAB_TOKEN", "ACTIONS_RUNTIME_TOKEN", "ACTIONS_ID_TOKEN_REQUEST_TOKEN"}


def detect_platform(environ: Mapping[str, str]) -> str:
    """``github`` | ``gitlab`` | ``jenkins`` | ``generic``."""
    if environ.get("GITHUB_ACTIONS") == "true":
        return "github"
    if environ.get("GITLAB_CI") == "true":
        return "gitlab"
    if environ.get("JENKINS_URL"):
        return "jenkins"
    return "generic"


def workspace_of(environ: Mapping[str, str]) -> Path:
    for var in ("GITHUB_WORKSPACE", "CI_PROJECT_DIR", "WORKSPACE"):
        if environ.get(var):
            return Path(environ[var])
    return Path.cwd()


@dataclass
class CiContext:
    """What a mode builder gets: the parsed inputs and the world its flow will use."""

    environ: Mapping[str, str]  # the job's environment, as received
    platform: str
    inputs: Inputs
    world: World  # environ here is the agents' environment (secrets for us scrubbed)
    workspace: Path
    commands: Commands | None = None  # GitHub only

    def log(self, line: str) -> None:
        self.world.log(line)


@dataclass
class ModePlan:
    """A mode's flow plus what ``pipeline.execute`` needs to conclude it."""

    flow: Callable[[], Outcome]
    mode: str = "run"
    client: Any = None  # for the ci-result report
    build: Callable[[Outcome], Any] | None = None  # Outcome -> Report (default: eval report)
    execute_kwargs: dict[str, Any] = field(default_factory=dict)  # decide, to_json, ...
    close: Callable[[], None] | None = None


def agent_environment(environ: Mapping[str, str], inputs: Inputs) -> dict[str, str]:
    """The environment the install command and the agents run with.

    Action inputs (and the GitHub/GitLab tokens inside them) are dropped; the Neens URL and key
    are exported as ``NEENS_*``, and the OTLP exporter is pointed at Neens unless the job
    already configured it, so an OpenTelemetry agent needs no extra set-up.
    """
    env = {k: v for k, v in environ.items()
           if not k.startswith(_SCRUB_PREFIXES) and k not in _SCRUB}
    base_url, api_key = inputs.get("base-url"), inputs.get("api-key")
    if base_url:
        env["NEENS_BASE_URL"] = base_url
        if not env.get("OTEL_EXPORTER_OTLP_ENDPOINT") and not env.get(
            "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"
        ):
            env["OTEL_EXPORTER_OTLP_ENDPOINT"] = base_url
    if api_key:
        env["NEENS_API_KEY"] = api_key
        if not env.get("OTEL_EXPORTER_OTLP_HEADERS") and not env.get(
            "OTEL_EXPORTER_OTLP_TRACES_HEADERS"
        ):
            env["OTEL_EXPORTER_OTLP_HEADERS"] = f"Authorization=Bearer {api_key}"
    return env


def _flag_to_input(message: str) -> tuple[str, str]:
    """A settings error names CLI flags; in CI, name the inputs instead."""
    names = {i.name for i in ci_inputs.INPUTS}
    first = ""

    def swap(m: re.Match[str]) -> str:
        nonlocal first
        name = m.group(1)
        if name in names:
            first = first or name
            return name
        return m.group(0)

    text = re.sub(r"--([a-z][a-z-]*)", swap, message)
    return first or "inputs", text


def plan_run(ctx: CiContext) -> ModePlan:
    """``mode: run``: the pull flow (``neens eval run``) with the action's inputs."""
    from neens_action.api.client import NeensClient
    from neens_action.ci.modes import shared as ci_modes
    from neens_action.flows.pull import run_pull
    from neens_action.settings.run import EvalRunSettings

    inp = ctx.inputs
    ci_modes.check_mode_inputs(ctx, "run")
    if not inp.get("command"):
        raise InputError("command", "is required for mode run: your agent command, run once "
                                    "per item (e.g. python -m my_agent)")
    run_id = inp.get("run-id")
    create = inp.get("create")
    if create == "auto":
        create = not run_id
    if run_id and create:
        raise InputError("create", "cannot be true together with run-id (run-id drives an "
                                   "existing run; leave create at auto)")
    if not run_id and not create:
        raise InputError("run-id", "nothing to run: set run-id, or set dataset (create: auto "
                                   "then creates the run)")
    policy = ci_modes.policy_from_inputs(ctx)  # gate-policy + the override inputs
    declared = ci_modes.declares_gates(policy)
    if create and not inp.get("dataset") and not inp.get("gates") and not declared:
        raise InputError("dataset", "is required to create a run (or set run-id to drive an "
                                    "existing one, or gates to run eval gates)")
    settings = EvalRunSettings(
        base_url=inp.get("base-url", ""), api_key=inp.get("api-key"),
        project_id=ctx.environ.get("NEENS_PROJECT_ID") or None,
        run_id=run_id, create=bool(create), dataset=inp.get("dataset"),
        dataset_version_id=inp.get("dataset-version-id"),
        version_label=inp.get("version-label"), name=inp.get("name"),
        baseline=inp.get("baseline"), max_regressions=inp.get("max-regressions"),
        min_pass_rate=inp.get("min-pass-rate"), gate_policy=ci_modes.policy_path(ctx),
        command=list(inp["command"]), timeout=inp.get("timeout"),
        concurrency=inp.get("concurrency", 1), poll_interval=inp.get("poll-interval", 5.0),
        poll_timeout=inp.get("poll-timeout", 1800.0), no_gate=bool(inp.get("no-gate")),
        gates=inp.get("gates"), **ci_modes.override_values(inp),
        full_run_items=True,  # the result file is the whole --json document
    )
    if settings.create and not settings.version_label:
        from neens_action.settings import provenance
        short = provenance.resolve(ctx.environ).short_sha
        settings.version_label = short or None
    try:
        settings.validate(declared_gates=declared)
    except UsageError as exc:
        raise ci_modes.as_input_error(exc) from None
    client = NeensClient(settings.base_url, settings.api_key, settings.project_id,
                         timeout=settings.request_timeout, retries=settings.retries)
    return ModePlan(
        flow=lambda: run_pull(settings, client=client, world=ctx.world, policy=policy),
        mode="run", client=client, close=client.close,
    )


def load_mode(mode: str) -> Callable[[CiContext], ModePlan]:
    module, _, attr = MODES[mode].partition(":")
    return getattr(importlib.import_module(module), attr)


def publishers_for(ctx: CiContext, mode: str) -> list[Any]:
    from neens_action.publish.publishers import (
        FilesPublisher,
        GitHubPublisher,
        GitLabPublisher,
        PublishConfig,
    )

    inp = ctx.inputs

    def where(name: str) -> Path | None:
        value = artifact_path(ctx, name)
        return Path(value) if value else None

    config = PublishConfig(
        environ=ctx.environ, workspace=ctx.workspace, mode=mode,
        result_file=where("result-file"), summary_file=where("summary-file"),
        dotenv_file=where("dotenv-file"), summary=inp.get("summary", True) is not False,
        comment=inp.get("comment", "update"), matrix_key=inp.get("matrix-key", ""),
        github_token=inp.get("github-token", ""),
        gitlab_token=ctx.environ.get("NEENS_GITLAB_TOKEN", "").strip(), log=ctx.log,
    )
    if ctx.platform == "github" and ctx.commands is not None:
        return [GitHubPublisher(config, ctx.commands)]
    if ctx.platform == "gitlab":
        return [GitLabPublisher(config)]
    return [FilesPublisher(config)]


def bad_input(platform: str, err: InputError, commands: Commands | None, world: World,
              environ: Mapping[str, str]) -> int:
    """One line naming the input, exit 2; on GitHub also a short summary and the outputs
    (``exit-code=2``, ``verdict=errored``) so ``if: always()`` steps can read them."""
    if platform != "github" or commands is None:
        world.log(f"neens: error: input {err.name}: {err.why}")
        return EXIT_ERROR
    commands.resume()
    commands.error(f"{err.name}: {err.why}", title="neens input")
    from neens_action.publish.actions import write_outputs, write_summary
    from neens_action.report.model import Report
    from neens_action.report.render.markdown import render_summary

    message = f"input {err.name}: {err.why}"
    report = Report(kind="eval", title="Neens eval", verdict="errored", exit_code=EXIT_ERROR,
                    headline="Bad input: nothing was run.", error=message)
    try:
        if environ.get("GITHUB_STEP_SUMMARY"):
            write_summary(environ["GITHUB_STEP_SUMMARY"], render_summary(report))
        if environ.get("GITHUB_OUTPUT"):
            write_outputs(environ["GITHUB_OUTPUT"], {"exit-code": str(EXIT_ERROR),
                                                     "verdict": "errored"})
    except OSError:
        pass  # the annotation above already says what to fix
    return EXIT_ERROR


def run(environ: Mapping[str, str] | None = None, *, stream: TextIO | None = None) -> int:
    """The whole CI step; returns the exit code."""
    env = dict(os.environ if environ is None else environ)
    err = stream or sys.stderr
    platform = detect_platform(env)
    commands = Commands(err) if platform == "github" else None
    if commands is not None:
        for secret in ci_inputs.secrets_in(env):
            commands.mask(secret)
    world = World(environ=env, err=err, out=sys.stdout)
    plan: ModePlan | None = None
    try:
        inputs = ci_inputs.parse_inputs(env)
        world = World(environ=agent_environment(env, inputs), err=err, out=sys.stdout)
        workspace = workspace_of(env)
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
        plan = load_mode(mode)(ctx)
        flow = plan.flow
        if inputs.get("install"):
            failure = run_install(inputs["install"], env=world.environ,
                                  timeout=inputs.get("install-timeout", 1200.0),
                                  log=world.log, commands=commands)
            if failure:
                base_url = getattr(plan.client, "base_url", "")
                flow = lambda: Outcome(mode=plan.mode, error=failure, base_url=base_url)  # noqa: E731
        if inputs.get("doctor") and flow is plan.flow:
            failure = preflight(ctx, plan)
            if failure:
                base_url = getattr(plan.client, "base_url", "")
                flow = lambda: Outcome(mode=plan.mode, error=failure, base_url=base_url)  # noqa: E731
        junit = artifact_path(ctx, "junit-file")
        from neens_action import pipeline

        if commands is not None:
            commands.stop()  # the flow's log (prompts, agent errors) is shown, never run
        try:
            return pipeline.execute(
                flow, world=world, json_out=False, junit_path=junit,
                publishers=publishers_for(ctx, plan.mode), build=plan.build,
                client=plan.client, mode=plan.mode, **plan.execute_kwargs,
            )
        finally:
            if commands is not None:
                commands.resume()
    except InputError as exc:
        return bad_input(platform, exc, commands, world, env)
    except NeensError as exc:
        if commands is not None:
            commands.resume()
            commands.error(str(exc), title="neens")
        else:
            world.log(f"neens: error: {exc}")
        return exc.exit_code
    except KeyboardInterrupt:
        world.log("neens: interrupted")
        return EXIT_INTERRUPTED
    finally:
        if plan is not None and plan.close is not None:
            plan.close()


def preflight(ctx: CiContext, plan: ModePlan) -> str | None:
    """``doctor: true``: the ``neens doctor`` checks, in the agents' environment."""
    from neens_action.doctor import preflight as run_preflight

    client = plan.client
    base_url = getattr(client, "base_url", "") or ctx.inputs.get("base-url", "")
    agent_traces = bool(ctx.inputs.get("command"))  # push-style modes send no agent traces
    return run_preflight(client, base_url, ctx.inputs.get("api-key") or None,
                         ctx.world.environ, ctx.world.log, agent_traces=agent_traces)


def artifact_path(ctx: CiContext, name: str) -> str | None:
    """An artifact input as an absolute path (relative ones live in the workspace); None
    when switched off."""
    value = ctx.inputs.get(name)
    if not value or value.lower() in ("off", "none", "false"):
        return None
    path = Path(value)
    return str(path if path.is_absolute() else ctx.workspace / path)


def main() -> None:
    sys.exit(run())


__all__ = ["MODES", "CiContext", "ModePlan", "detect_platform", "main", "run"]
