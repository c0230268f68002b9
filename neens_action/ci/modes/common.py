"""What the CI modes share: which inputs apply to which mode, the policy inputs and the fields
every eval-style mode reads the same way. A settings rule an input breaks is worded for the
input by the CI door (``ci/main.py``, from the settings' name table), not here."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from neens_action.ci import inputs as ci_inputs
from neens_action.ci.context import CiContext
from neens_action.ci.inputs import InputError, Inputs
from neens_action.errors import UsageError
from neens_action.policy import GatePolicy
from neens_action.publish.progress import (
    Doing,
    finish_doing,
    push_doing,
    stress_doing,
    sweep_doing,
)
from neens_action.settings import provenance
from neens_action.settings.names import Names, Rule, SettingError
from neens_action.settings.stress import StressSettings
from neens_action.settings.sweep import SweepSettings

POLICY_OVERRIDES = ("max-cost-delta-pct", "max-latency-delta-pct", "min-avg-score",
                    "max-abs-failures")
_SWEEP_ONLY = ("arms", "sweep-mode", "k", "bar", "budget-usd", "baseline-arm", "require-winner")
_STRESS_ONLY = ("failure-modes", "per-mode", "strategies", "ready-timeout")
_POLICY = ("gate-policy", *POLICY_OVERRIDES)
_CREATE_ONLY = ("dataset", "dataset-version-id", "version-label", "name", "baseline",
                "max-regressions", "min-pass-rate", "gates")
_NOISE = ("repeat", "baseline-runs", "on-inconclusive")
# Inputs that mean nothing in a mode: setting one explicitly is a mistake worth one line.
NOT_FOR: dict[str, tuple[str, ...]] = {
    "run": (*_SWEEP_ONLY, *_STRESS_ONLY, "agent-connection", "suite-id"),
    "push": (*_SWEEP_ONLY, *_STRESS_ONLY, "suite-id", "command", "run-id", "create",
             "workers", *_NOISE),
    "stress": (*_SWEEP_ONLY, "gates", "run-id", "create", "dataset", "dataset-version-id",
               "workers", *_NOISE),
    "sweep": (*_STRESS_ONLY, *_POLICY, "gates", "run-id", "create", "agent-connection",
              "baseline", "max-regressions", "min-pass-rate", "no-gate", *_NOISE),
    "create": ("command", "run-id", "shard", "workers", *_NOISE),
    "shard": (*_CREATE_ONLY, "create", *_NOISE),
    "finish": (*_CREATE_ONLY, "create", "command", "shard", "workers", *_NOISE),
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
    **{(mode, name): "repeats and history are for mode run (a sweep has its own k)"
       for mode in ("push", "stress", "sweep", "create", "shard", "finish")
       for name in _NOISE},
    ("run", "agent-connection"): "set mode push to let Neens call the connection",
    ("create", "command"): "the run is replayed by the shard jobs (mode shard)",
    ("create", "run-id"): "mode create makes a new run; give its run-id output to the others",
    ("shard", "dataset"): "the run was created by the create job: set run-id",
    ("finish", "command"): "finish runs no agent: the shard jobs did",
    ("finish", "dataset"): "the run was created by the create job: set run-id",
}
def input_rules() -> dict[str, tuple[str, Rule, Names]]:
    """input -> (settings field, its value rule, the name table), over every settings class a
    mode builds (the stress settings extend the run and push settings)."""
    rules: dict[str, tuple[str, Rule, Names]] = {}
    for cls in (StressSettings, SweepSettings):
        for field, rule in cls.RULES.items():
            name = cls.NAMES.name(field).input
            if name:
                rules.setdefault(name, (field, rule, cls.NAMES))
    return rules


def check_input_rules(inputs: Inputs) -> None:
    """Every set input against its setting's value rule, in table order, before any mode
    check (the rule is the settings'; the error names the input)."""
    rules = input_rules()
    for spec in ci_inputs.INPUTS:
        if spec.name in rules and inputs.values.get(spec.name) is not None:
            field, rule, names = rules[spec.name]
            try:
                rule(field, inputs[spec.name])
            except SettingError as exc:
                raise exc.named(names) from None


def explicitly_set(environ: Mapping[str, str], name: str) -> bool:
    """True when the job set input ``name`` itself to something other than its default
    (GitHub passes every declared input, defaults included; fallbacks do not count)."""
    spec = next(i for i in ci_inputs.INPUTS if i.name == name)
    for var in ci_inputs.env_names(name):
        value = environ.get(var, "").strip()
        if value and not ci_inputs.is_unset(spec, value):
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


def override_values(inputs: Inputs) -> dict[str, Any]:
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


def policy_from_inputs(ctx: CiContext) -> GatePolicy | None:
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


def declares_gates(policy: GatePolicy | None) -> bool:
    return policy is not None and policy.gates_block() is not None


def short_sha(ctx: CiContext) -> str | None:
    return provenance.resolve(ctx.environ).short_sha or None


def eval_fields(ctx: CiContext) -> dict[str, Any]:
    """``EvalRunSettings`` fields every eval-style mode reads the same way."""
    inp = ctx.inputs
    return dict(
        base_url=inp.get("base-url", ""), api_key=inp.get("api-key"),
        project_id=ctx.environ.get("NEENS_PROJECT_ID", "").strip() or None,
        ui_url=inp.get("ui-url", ""),
        version_label=inp.get("version-label"), name=inp.get("name"),
        baseline=inp.get("baseline"), max_regressions=inp.get("max-regressions"),
        min_pass_rate=inp.get("min-pass-rate"), gate_policy=policy_path(ctx),
        timeout=inp.get("timeout"), concurrency=inp.get("concurrency", 1),
        workers=inp.get("workers"), poll_interval=inp.get("poll-interval", 5.0),
        poll_timeout=inp.get("poll-timeout", 1800.0), no_gate=bool(inp.get("no-gate")),
        repeat=inp.get("repeat", 1), baseline_runs=inp.get("baseline-runs"),
        on_inconclusive=inp.get("on-inconclusive", "warn"),
        **override_values(inp),
    )


def doing(mode: str, settings: Any) -> Doing | None:
    """What the running comment says a mode does, posted before its flow starts (None:
    ``run`` posts once its items are known, ``create`` and ``shard`` post nothing; see
    docs/modes.md)."""
    if mode == "push":
        return push_doing(settings.agent_connection or "", settings.dataset or "",
                          bool(settings.gates))
    if mode == "stress":
        return stress_doing(list(settings.failure_modes), settings.suite_id or "",
                            push=bool(settings.agent_connection))
    if mode == "sweep":
        labels = [arm.get("label", "") if isinstance(arm, dict) else str(arm)
                  for arm in settings.arms]
        target = (settings.dataset_id or settings.dataset_version_id
                  or settings.scenario_suite_id or "")
        return sweep_doing(labels, target, settings.pass_k)
    if mode == "finish":
        return finish_doing(settings.run_id or "")
    return None
