"""CI modes ``push``, ``stress`` and ``sweep`` (issues 6, 8, 9), plus the policy and gates inputs
that ``run`` shares with them.

- ``mode: push``: ``neens eval push``: Neens calls ``agent-connection`` once per prompt; we
  create the run, trigger it, gate. No ``command`` runs.
- ``mode: stress``: ``neens stress run``: generate a scenario suite from ``failure-modes`` (or
  reuse ``suite-id``), wait for it (``ready-timeout``), launch it, drive it with ``command``
  (pull) or ``agent-connection`` (push), gate. The summary shows the pass rate per failure
  mode and per strategy.
- ``mode: sweep``: a multi-model sweep over ``dataset`` / ``dataset-version-id`` /
  ``suite-id``. ``sweep-mode: runner`` (default): ``arms`` are ``LABEL=MODEL`` and ``command``
  runs for every arm x rep x item with ``$NEENS_EVAL_MODEL``; ``sweep-mode: push``: ``arms``
  are ``LABEL=CONNECTION_ID`` and Neens calls them. Then the server's verdict (``bar``,
  ``baseline-arm``): exit 0, or 1 with ``require-winner`` and no clearing arm, 2 for a void,
  failed or unfinished sweep. Outputs ``sweep-id`` and ``winner``.

Every builder takes a :class:`neens_action.ci.main.CiContext` and returns a
:class:`neens_action.ci.main.ModePlan`; a bad input raises :class:`InputError`. This module imports
:mod:`neens_action.ci.main` lazily: ``ci_inputs`` imports it so :data:`INPUTS` is whole wherever
the input table is read.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from neens_action.ci import inputs as ci_inputs
from neens_action.ci.inputs import Input, InputError
from neens_action.errors import UsageError

if TYPE_CHECKING:
    from neens_action.ci.main import CiContext, ModePlan

POLICY_OVERRIDES = ("max-cost-delta-pct", "max-latency-delta-pct", "min-avg-score",
                    "max-abs-failures")

INPUTS = (
    Input("gates", "str", "", "eval gates to run: active | gate-a,gate-b (modes run, push)",
          fallback="NEENS_GATES"),
    Input("max-cost-delta-pct", "float", "",
          "policy override: block if the average cost grows more than P % vs the baseline"),
    Input("max-latency-delta-pct", "float", "",
          "policy override: block if the average latency grows more than P % vs the baseline"),
    Input("min-avg-score", "float", "", "policy override: block if the average score is "
          "below S (0..1)", minimum=0, maximum=1),
    Input("max-abs-failures", "int", "", "policy override: block if more than N items fail",
          minimum=0),
    Input("agent-connection", "str", "", "modes push, stress: the agent_http connection Neens "
          "calls once per prompt"),
    Input("arms", "list", "", "mode sweep: one arm per line, LABEL=MODEL (runner) or "
          "LABEL=CONNECTION_ID (sweep-mode push)"),
    Input("sweep-mode", "choice", "runner", "mode sweep: runner (command runs per arm) | push "
          "(Neens calls each arm's connection)", choices=("runner", "push")),
    Input("k", "int", "", "mode sweep: repetitions per arm (pass^k)", minimum=1),
    Input("bar", "float", "", "mode sweep: pass rate an arm must clear (0..1; default the "
          "sweep's gate, else the deployment's)", minimum=0, maximum=1),
    Input("budget-usd", "float", "", "mode sweep: Neens refuses the sweep when its estimate is "
          "above this", minimum=0),
    Input("baseline-arm", "str", "", "mode sweep: the arm savings are measured against "
          "(default the first)"),
    Input("require-winner", "bool", "false", "mode sweep: exit 1 unless an arm clears the bar"),
    Input("failure-modes", "list", "", "mode stress: failure modes to attack (ids, one per "
          "line or comma-separated)"),
    Input("per-mode", "int", "", "mode stress: LLM-written scenarios per failure mode (1-25)",
          minimum=1, maximum=25),
    Input("strategies", "list", "", "mode stress: paraphrase, escalate, boundary (default all "
          "three)"),
    Input("suite-id", "str", "", "modes stress, sweep: a generated scenario suite to replay"),
    Input("ready-timeout", "float", "600", "mode stress: how long to wait for the suite to be "
          "generated (s)", positive=True),
)
ci_inputs.register(*INPUTS)

_SWEEP_ONLY = ("arms", "sweep-mode", "k", "bar", "budget-usd", "baseline-arm", "require-winner")
_STRESS_ONLY = ("failure-modes", "per-mode", "strategies", "ready-timeout")
_POLICY = ("gate-policy", *POLICY_OVERRIDES)
# Inputs that mean nothing in a mode: setting one explicitly is a mistake worth one line.
NOT_FOR: dict[str, tuple[str, ...]] = {
    "run": (*_SWEEP_ONLY, *_STRESS_ONLY, "agent-connection", "suite-id"),
    "push": (*_SWEEP_ONLY, *_STRESS_ONLY, "suite-id", "command", "run-id", "create"),
    "stress": (*_SWEEP_ONLY, "gates", "run-id", "create", "dataset", "dataset-version-id"),
    "sweep": (*_STRESS_ONLY, *_POLICY, "gates", "run-id", "create", "agent-connection",
              "baseline", "max-regressions", "min-pass-rate", "no-gate"),
}
HINTS = {
    ("push", "command"): "Neens calls agent-connection, nothing runs here (command is for "
                         "modes run and stress)",
    ("push", "run-id"): "push always creates its run",
    ("stress", "dataset"): "a stress test replays its scenario suite (use sweep for a dataset)",
    ("stress", "dataset-version-id"): "a stress test replays its scenario suite",
    ("stress", "gates"): "a stress test runs over the suite's scenarios only",
    ("sweep", "min-pass-rate"): "use bar, the pass rate an arm must clear",
    ("sweep", "baseline"): "use baseline-arm",
    ("sweep", "agent-connection"): "push arms name their connection: arms LABEL=CONNECTION_ID "
                                   "with sweep-mode push",
    ("sweep", "no-gate"): "a sweep fails only with require-winner",
    ("run", "agent-connection"): "set mode push to let Neens call the connection",
}
# CLI flags named in settings / flow errors -> the input that sets them
FLAG_ALIASES = {"failure-mode": "failure-modes", "strategy": "strategies", "arm": "arms",
                "pass-k": "k", "dataset-id": "dataset", "scenario-suite-id": "suite-id"}


# ---------------------------------------------------------------- shared input helpers


def as_input_error(exc: UsageError, name: str | None = None) -> InputError:
    """A settings/flow usage error (worded with CLI flags) as an error naming an input."""
    if isinstance(exc, InputError):
        return exc
    names = {i.name for i in ci_inputs.INPUTS}
    first = ""

    def swap(m: re.Match[str]) -> str:
        nonlocal first
        flag = m.group(1)
        target = FLAG_ALIASES.get(flag, flag)
        if target in names:
            first = first or target
            return flag  # "--arm" reads "arm" in the sentence; the line names "arms"
        return m.group(0)

    text = re.sub(r"--([a-z][a-z-]*)", swap, str(exc))
    name = name or first or "inputs"
    for prefix in (f"{name}: ", f"{name} "):
        text = text.removeprefix(prefix)
    return InputError(name, text.strip() or str(exc))


def explicitly_set(environ: Mapping[str, str], name: str) -> bool:
    """True when the job set input ``name`` itself to something other than its default
    (GitHub passes every declared input, defaults included; fallbacks do not count)."""
    spec = next(i for i in ci_inputs.INPUTS if i.name == name)
    for var in ci_inputs.env_names(name):
        value = environ.get(var, "").strip()
        if value:
            try:
                return ci_inputs.parse_value(spec, value) != ci_inputs.parse_value(
                    spec, spec.default)
            except InputError:
                return True
    return False


def check_mode_inputs(ctx: CiContext, mode: str) -> None:
    """Refuse an input the mode would silently ignore (one line naming it)."""
    for name in NOT_FOR.get(mode, ()):
        if explicitly_set(ctx.environ, name):
            hint = HINTS.get((mode, name))
            raise InputError(name, f"does not apply to mode {mode}" + (f": {hint}" if hint
                                                                      else ""))


def override_values(inputs: Any) -> dict[str, Any]:
    """The four policy override inputs as ``EvalRunSettings`` fields (None when unset)."""
    return {name.replace("-", "_"): inputs.get(name) for name in POLICY_OVERRIDES}


def policy_path(ctx: CiContext) -> str | None:
    """``gate-policy`` relative to the workspace (else as given: cwd, the error names it)."""
    raw = ctx.inputs.get("gate-policy")
    if not raw:
        return None
    path = Path(raw)
    if not path.is_absolute() and (ctx.workspace / path).exists():
        return str(ctx.workspace / path)
    return str(raw)


def policy_from_inputs(ctx: CiContext) -> Any:
    """The gate-as-code policy: ``gate-policy`` with the override inputs on top (or None)."""
    overrides = {k: v for k, v in override_values(ctx.inputs).items() if v is not None}
    path = policy_path(ctx)
    if not path and not overrides:
        return None
    from neens_action.policy import build_policy

    try:
        return build_policy(path, overrides)
    except UsageError as exc:
        raise InputError("gate-policy", str(exc)) from None


def declares_gates(policy: Any) -> bool:
    block = getattr(policy, "gates_block", None)
    return bool(callable(block) and block() is not None)


def short_sha(ctx: CiContext) -> str | None:
    from neens_action.settings import provenance
    return provenance.resolve(ctx.environ).short_sha or None


def _common(ctx: CiContext) -> dict[str, Any]:
    """``EvalRunSettings`` fields every eval-style mode reads the same way."""
    inp = ctx.inputs
    return dict(
        base_url=inp.get("base-url", ""), api_key=inp.get("api-key"),
        project_id=ctx.environ.get("NEENS_PROJECT_ID", "").strip() or None,
        version_label=inp.get("version-label"), name=inp.get("name"),
        baseline=inp.get("baseline"), max_regressions=inp.get("max-regressions"),
        min_pass_rate=inp.get("min-pass-rate"), gate_policy=policy_path(ctx),
        timeout=inp.get("timeout"), concurrency=inp.get("concurrency", 1),
        poll_interval=inp.get("poll-interval", 5.0),
        poll_timeout=inp.get("poll-timeout", 1800.0), no_gate=bool(inp.get("no-gate")),
        **override_values(inp),
    )


def _client(settings: Any) -> Any:
    from neens_action.api.client import NeensClient

    return NeensClient(settings.base_url, settings.api_key, settings.project_id,
                       timeout=settings.request_timeout, retries=settings.retries)


# ---------------------------------------------------------------- mode: push


def plan_push(ctx: CiContext) -> ModePlan:
    """``mode: push``: Neens calls ``agent-connection`` per prompt; create, trigger, gate."""
    from neens_action.ci.main import ModePlan
    from neens_action.flows.push import run_push
    from neens_action.settings.push import EvalPushSettings

    check_mode_inputs(ctx, "push")
    inp = ctx.inputs
    if not inp.get("agent-connection"):
        raise InputError("agent-connection", "is required for mode push: the agent_http "
                                             "connection Neens calls once per prompt")
    policy = policy_from_inputs(ctx)
    declared = declares_gates(policy)
    if not inp.get("dataset") and not inp.get("gates") and not declared:
        raise InputError("dataset", "is required for mode push: the dataset whose golden "
                                    "version Neens replays (or select eval gates: gates: active)")
    settings = EvalPushSettings(**_common(ctx), dataset=inp.get("dataset"),
                                dataset_version_id=inp.get("dataset-version-id"),
                                gates=inp.get("gates"),
                                agent_connection=inp.get("agent-connection"))
    if not settings.version_label:
        settings.version_label = short_sha(ctx)
    try:
        settings.validate(policy_gates=declared)
    except UsageError as exc:
        raise as_input_error(exc) from None
    client = _client(settings)
    return ModePlan(
        flow=lambda: run_push(settings, client=client, world=ctx.world, policy=policy),
        mode="push", client=client, close=client.close,
    )


# ---------------------------------------------------------------- mode: stress


def plan_stress(ctx: CiContext) -> ModePlan:
    """``mode: stress``: suite -> ready -> launch -> drive (pull or push) -> gate."""
    from neens_action.ci.main import ModePlan
    from neens_action.flows.stress import run_stress
    from neens_action.report.build.stress import build_stress_report, stress_document
    from neens_action.settings.stress import StressSettings

    check_mode_inputs(ctx, "stress")
    inp = ctx.inputs
    if not inp.get("suite-id") and not inp.get("failure-modes"):
        raise InputError("failure-modes", "is required for mode stress: the failure modes to "
                                          "attack (ids), or set suite-id to reuse a suite")
    fresh = [n for n in ("failure-modes", "per-mode", "strategies") if inp.get(n)]
    if inp.get("suite-id") and fresh:
        raise InputError(fresh[0], "only applies to a new suite: suite-id reuses a generated "
                                   "one as it is (drop one of them)")
    if any(s.lower() == "replay" for s in inp.get("strategies") or []):
        raise InputError("strategies", "replay is always on: strategies picks among "
                                       "paraphrase, escalate, boundary")
    command, conn = inp.get("command"), inp.get("agent-connection")
    if command and conn:
        raise InputError("agent-connection", "and command exclude each other: command runs "
                                             "your agent here (pull), agent-connection lets "
                                             "Neens call it (push); set one")
    if not command and not conn:
        raise InputError("command", "mode stress needs an agent: command (run once per "
                                    "scenario) or agent-connection (Neens calls it)")
    policy = policy_from_inputs(ctx)
    settings = StressSettings(
        **_common(ctx), command=list(command or []), agent_connection=conn,
        suite_id=inp.get("suite-id"), failure_modes=list(inp.get("failure-modes") or []),
        per_mode=inp.get("per-mode"), strategies=list(inp.get("strategies") or []),
        ready_timeout=inp.get("ready-timeout", 600.0),
    )
    try:
        settings.validate_stress(ctx.environ, drive=True, policy=policy)
    except UsageError as exc:
        raise as_input_error(exc) from None
    client = _client(settings)
    return ModePlan(
        flow=lambda: run_stress(settings, client=client, world=ctx.world, policy=policy),
        mode="stress", client=client, build=build_stress_report,
        execute_kwargs={"to_json": stress_document}, close=client.close,
    )


# ---------------------------------------------------------------- mode: sweep


def plan_sweep(ctx: CiContext) -> ModePlan:
    """``mode: sweep``: a runner or push sweep, then the server's verdict."""
    from neens_action.ci.main import ModePlan
    from neens_action.ci.modes.sweep import SweepPlan, execute_kwargs, sweep_flow
    from neens_action.flows.sweep import shared as flows
    check_mode_inputs(ctx, "sweep")
    inp = ctx.inputs
    push = inp.get("sweep-mode", "runner") == "push"
    what = "LABEL=CONNECTION_ID" if push else "LABEL=MODEL"
    if not inp.get("arms"):
        raise InputError("arms", f"is required for mode sweep: one arm per line, {what}")
    command = inp.get("command")
    if push and command:
        raise InputError("command", "does not apply to sweep-mode push: Neens calls each "
                                    "arm's connection")
    if not push and not command:
        raise InputError("command", "is required for a runner sweep: your agent command, run "
                                    "once per arm x rep x item with $NEENS_EVAL_MODEL set to "
                                    "the arm's model (or set sweep-mode: push)")
    targets = [n for n in ("dataset", "dataset-version-id", "suite-id") if inp.get(n)]
    if len(targets) != 1:
        raise InputError(targets[1] if targets else "dataset",
                         "a sweep replays exactly one target: set one of dataset, "
                         "dataset-version-id or suite-id")
    label = inp.get("version-label") or short_sha(ctx)
    if not label:
        raise InputError("version-label", "is required for mode sweep (no commit was detected "
                                          "to label the candidate)")
    from neens_action.settings.connection import check_base_url

    try:
        base_url = check_base_url(inp.get("base-url"))
        arms = flows.parse_arms(list(inp["arms"]), runner=not push)
        body = flows.sweep_body(
            arms=arms,
            target=flows.target_fields(inp.get("dataset"), inp.get("dataset-version-id"),
                                       inp.get("suite-id")),
            pass_k=inp.get("k"), name=inp.get("name") or f"sweep {label}",
            version_label=label, budget_usd=inp.get("budget-usd"),
        )
        poll = flows.Poll(interval=inp.get("poll-interval", 5.0),
                          timeout=inp.get("poll-timeout", 1800.0))
    except UsageError as exc:
        raise as_input_error(exc) from None
    from neens_action.api.client import NeensClient

    client = NeensClient(base_url, inp.get("api-key"),
                         ctx.environ.get("NEENS_PROJECT_ID", "").strip() or None)
    plan = SweepPlan(body=body, push=push, command=list(command or []), poll=poll,
                     concurrency=inp.get("concurrency", 1), timeout=inp.get("timeout"),
                     bar=inp.get("bar"), baseline_arm=inp.get("baseline-arm"),
                     require_winner=bool(inp.get("require-winner")))
    kwargs = execute_kwargs()
    return ModePlan(flow=lambda: sweep_flow(client, plan, world=ctx.world), mode="sweep",
                    client=client, build=kwargs.pop("build"), execute_kwargs=kwargs,
                    close=client.close)


__all__ = ["INPUTS", "as_input_error", "check_mode_inputs", "plan_push", "plan_stress",
           "plan_sweep", "policy_from_inputs"]
