"""Why a pass is not a plain pass: the caveats every surface shows with a ⚠️ (docs/report.md).

A caveat is a thing the reviewer must know before trusting a green build: regressions that
could not be compared, a baseline that fell back from the one requested, a pass rate that
collapsed although the gate passed, a policy rule that could not be evaluated, a waived gate.
Each is made here once, as (short label, sentence with advice fitting the baseline kind and
the mode); the headline names the labels, the alerts and the console show the sentences.
Settings are named through :func:`neens_action.settings.names.phrase` (the words of the door
in force, no Markdown).
"""

from __future__ import annotations

from dataclasses import dataclass

from neens_action.api.answers import Baseline, Resolution, describe_baseline
from neens_action.api.values import real, whole
from neens_action.outcome import Outcome
from neens_action.report.fmt import number, rate
from neens_action.settings.names import phrase
from neens_action.settings.run import RUN_NAMES
from neens_action.verdict import gate_passed, policy_results

# a pass whose pass rate is more than this many points below the baseline's is a caveat
COLLAPSE_PP = 20.0
# ... and so is one below this pass rate when nothing gates the pass rate
LOW_PASS_RATE = 0.5


@dataclass(frozen=True)
class Caveat:
    label: str  # a few words for the headline: "pass rate collapsed"
    text: str  # the sentence with its advice


def _name(field: str) -> str:
    return phrase(field, RUN_NAMES)


def baseline_block(outcome: Outcome) -> Baseline | None:
    """The gate's baseline block, else the comparison's (None without either)."""
    base = outcome.gate.baseline if outcome.gate is not None else None
    if base is None and outcome.comparison is not None:
        base = outcome.comparison.baseline
    return base


def resolution(outcome: Outcome) -> Resolution | None:
    base = baseline_block(outcome)
    found = base.resolution if base is not None else None
    if found is None and outcome.run is not None:
        found = outcome.run.baseline_resolution
    return found


def not_compared(outcome: Outcome) -> bool:
    base = baseline_block(outcome)
    return (base is not None and base.compared is False) or (
        outcome.gate is not None and outcome.gate.regressions_null)


def fell_back(outcome: Outcome) -> str:
    """The requested baseline (``branch:release``) when the server used another kind
    instead (the production window), else ""."""
    res = resolution(outcome)
    if res is None or not res.requested or res.requested.startswith("prod"):
        return ""
    return "" if res.resolved == "preprod_run" and res.resolved_run_id else res.requested


def newcomer_branch(outcome: Outcome) -> str:
    """The branch this run becomes the first baseline of: the run is on branch B, asked for
    ``branch:B`` and B has no passing run yet; else ""."""
    requested = fell_back(outcome)
    branch = outcome.run.branch if outcome.run is not None else ""
    if branch and requested == f"branch:{branch}":
        return branch
    return ""


def newcomer_text(branch: str) -> str:
    return f"no baseline yet: this run becomes the baseline for branch {branch}"


def _window(base: Baseline | None) -> str:
    return (base.range if base is not None else "") or "7d"


def _no_match_advice(outcome: Outcome, requested: str) -> str:
    """Why nothing matched and what to do, for the kind of baseline asked for and used."""
    base = baseline_block(outcome)
    used_run = base.run_id or base.value if base is not None and base.kind == "preprod_run" \
        else ""
    if used_run:
        return (f"the baseline run {used_run} shares no item with this run (another dataset "
                f"version?). Run the job again on {requested.removeprefix('branch:')} over "
                "this dataset version, or pin a run over it (set "
                f"{_name('baseline')} to run:<run id>)."
                if requested.startswith("branch:") else
                f"the baseline run {used_run} shares no item with this run. Pick a run over "
                f"the same dataset version (set {_name('baseline')} to run:<run id>).")
    if requested.startswith("branch:"):
        branch = requested.removeprefix("branch:")
        return (f"no run on branch {branch} has passed yet and the production window "
                f"({_window(base)}) matched none of these items. Run the job on {branch}: "
                "its first passing run becomes the baseline of later runs.")
    window = _window(base)
    return (f"no production session of the last {window} matched these items. Widen the "
            f"window (set {_name('baseline')} to prod:30d) or compare with a branch (set "
            f"{_name('baseline')} to branch:<default branch>).")


def _pass_rate_knob(outcome: Outcome) -> bool:
    limits = outcome.gate.limits if outcome.gate is not None else frozenset()
    return "min_pass_rate" in limits or any(
        r.dimension in ("pass_rate", "min_pass_rate") for r in policy_results(outcome.policy_eval))


def pass_rate_of(outcome: Outcome) -> float | None:
    value = real(outcome.gate.pass_rate if outcome.gate is not None else None)
    return value if value is not None else real(
        outcome.run.aggregate.pass_rate if outcome.run is not None else None)


def _collapse(outcome: Outcome, *, with_baseline: bool) -> Caveat | None:
    """A pass rate far below the baseline's, or below 50 % with nothing gating it."""
    now = pass_rate_of(outcome)
    run = outcome.run
    if now is None or run is None or not run.dataset_id:
        return None
    base = baseline_block(outcome)
    before = real(base.pass_rate) if base is not None and with_baseline else None
    knob = _pass_rate_knob(outcome)
    parts = []
    if before is not None and (before - now) * 100 > COLLAPSE_PP:
        matched, total = whole(base.matched_items), whole(base.total_items)  # type: ignore[union-attr]
        scope = (f" (the baseline matched only {matched} of {total} items)"
                 if matched is not None and total and matched < total else "")
        drop = number(round((before - now) * 100, 1), 1)
        parts.append(f"the pass rate is {rate(now)}, {drop} pp below the baseline's "
                     f"{rate(before)}{scope}")
    elif not knob and now < LOW_PASS_RATE:
        parts.append(f"only {rate(now)} of the items passed")
    if not parts:
        return None
    advice = (f"; nothing gates the pass rate: set {_name('min_pass_rate')} to block on it."
              if not knob else f"; it still passed {_name('min_pass_rate')}.")
    return Caveat("pass rate collapsed", parts[0][:1].upper() + parts[0][1:] + advice)


def caveats(outcome: Outcome, *, passed: bool, graded_alone: bool = False) -> list[Caveat]:
    """Every caveat of an eval-style outcome, each once. ``passed``: the build passed (exit
    0), so a collapsed pass rate is a caveat; ``graded_alone``: a stress suite, graded on
    its own (no baseline is expected, so none is a caveat)."""
    out: list[Caveat] = []
    limits = outcome.gate.limits if outcome.gate is not None else frozenset()
    newcomer = newcomer_branch(outcome)
    res = resolution(outcome)
    requested = res.requested if res is not None else ""
    if not graded_alone and not newcomer and not_compared(outcome):
        lead = (f"{_name('max_regressions')} could not be evaluated"
                if "max_regressions" in limits else "Regressions were not compared")
        out.append(Caveat("regressions not compared",
                          f"{lead}: {_no_match_advice(outcome, requested)}"))
    elif not graded_alone and not newcomer and fell_back(outcome):
        base = baseline_block(outcome)
        used = describe_baseline(base) if base is not None else "server default"
        branch = requested.removeprefix("branch:")
        out.append(Caveat("baseline fell back",
                          f"The baseline fell back from {requested} to the {used}: no run on "
                          f"branch {branch} has passed yet. Run the job on {branch} "
                          "so later runs compare with a run of it."))
    if passed and gate_passed(outcome) is True and outcome.noise is None:
        # (a waived gate is its own caveat; with repeats the noise-aware verdict judges)
        collapse = _collapse(outcome, with_baseline=not graded_alone and not newcomer)
        if collapse is not None:
            out.append(collapse)
    for r in policy_results(outcome.policy_eval):
        if r.status == "skipped" and r.severity == "block":
            out.append(Caveat("policy rule not evaluated",
                              f"Policy rule not evaluated: {r.reason}"))
    policy_failed = any(r.status == "fail" for r in policy_results(outcome.policy_eval))
    if not outcome.enforced and (gate_passed(outcome) is not True or policy_failed):
        out.append(Caveat("gate waived", f"The gate failed but {_name('no_gate')} waived it: "
                                         "this build is not blocked."))
    return out
