"""Noise-aware report cases: synthetic items (stable, flaky, broken, fixed) replayed K times
against N runs of main, decided by the real ``neens_action.noise.decide`` / ``judge``, on an
outcome shaped like the other cases' (golden files: tests/unit/report/test_noise_goldens.py).
"""

from __future__ import annotations

import random
from collections.abc import Callable

from neens_action.noise import ItemRecord, NoiseRules, decide, judge
from neens_action.noise.evidence import HistoryRun, NoiseEvidence, RepRun
from neens_action.outcome import Invocation, Outcome
from tests.unit.report.cases import BASE, EXPECTED, PROMPTS, _gate, _outcome, _row, _run

VERDICT = {"pass": ("passed", 0), "warn": ("warned", 0), "block": ("blocked", 1)}


def records(*, stable: int, flaky: int, k: int, n: int, broken: int = 0, fixed: int = 0,
            failing: int = 0, seed: int = 1) -> list[ItemRecord]:
    """Items in this order: stable passes, broken (pass on main, fail now), fixed (fail on
    main, pass now), failing on both, then flaky ones (each run a coin toss, seeded)."""
    rng = random.Random(seed)
    kinds = [((True,) * n, (True,) * k)] * stable + [((True,) * n, (False,) * k)] * broken
    kinds += [((False,) * n, (True,) * k)] * fixed + [((False,) * n, (False,) * k)] * failing
    kinds += [(tuple(rng.random() < 0.5 for _ in range(n)),
               tuple(rng.random() < 0.5 for _ in range(k))) for _ in range(flaky)]
    return [ItemRecord(f"it_{i + 1}", h, r) for i, (h, r) in enumerate(kinds)]


def _answer(i: int, passed: bool) -> str:
    return f"Refunded {EXPECTED[i % 4]}." if passed else f"Sorry, I cannot refund order {i}."


def noise_outcome(recs: list[ItemRecord], *, main_rates: list[float], end: str = "",
                  requested: int = 5, rules: NoiseRules | None = None,
                  adaptive: bool = False) -> Outcome:
    """The outcome of the first repetition (the run the report's items come from), with
    the evidence of every repetition and the history, and the verdict the flows decide."""
    k = max(len(r.reps) for r in recs)
    rows = [{**_row(i, r.reps[0], _answer(i, bool(r.reps[0]))),
             "datasetVersionItemId": r.item_id} for i, r in enumerate(recs)]
    regs = [{"itemId": r.item_id, "before": "pass", "after": "fail"} for r in recs
            if r.history and r.history[0] and r.reps[0] is False]
    rate = sum(1 for r in recs if r.reps[0]) / len(recs)
    reasons = [f"regressions {len(regs)} > max_regressions 0"] if regs else []
    outcome = _outcome(_run(rows, status="completed_with_regressions" if regs else "completed"),
                       _gate(not regs, rate, len(regs), reasons),
                       invocations=[Invocation(r.item_id, PROMPTS[i % 4], returncode=0,
                                               duration_s=0.5) for i, r in enumerate(recs)],
                       comparison={"regressions": regs, "baseline": BASE})
    verdict = decide(recs)
    decision = judge(verdict, rules or NoiseRules(max_regressions=0))
    reps = []
    for j in range(k):
        scored = [r.reps[j] for r in recs if len(r.reps) > j and r.reps[j] is not None]
        rep_regs = any(r.history and r.history[0] and len(r.reps) > j and r.reps[j] is False
                       for r in recs)
        reps.append(RepRun(j + 1, f"ppr_{200 + j}", "completed",
                           sum(scored) / len(scored), not rep_regs, len(scored)))
    history = tuple(HistoryRun(f"ppr_{100 - j}", f"main-{len(main_rates) - j}", rate)
                    for j, rate in enumerate(main_rates))  # newest first
    outcome.noise = NoiseEvidence("auto" if adaptive else k, tuple(reps), history, requested,
                                  end, tuple(recs), verdict, decision)
    outcome.build_verdict, outcome.exit_code = VERDICT[decision.outcome]
    return outcome


def no_change() -> Outcome:
    return noise_outcome(records(stable=50, flaky=6, k=3, n=5),
                         main_rates=[0.95, 0.96, 0.96, 0.95, 0.97])


def regressed() -> Outcome:
    return noise_outcome(records(stable=47, broken=3, flaky=6, k=3, n=5),
                         main_rates=[0.96, 0.96, 0.95, 0.96, 0.96])


def improved() -> Outcome:
    return noise_outcome(records(stable=47, fixed=3, flaky=6, k=3, n=5),
                         main_rates=[0.91, 0.92, 0.90, 0.91, 0.91])


def inconclusive() -> Outcome:
    return noise_outcome(records(stable=4, flaky=2, k=2, n=2), requested=5,
                         main_rates=[0.83, 1.0], end="the run before is a production window")


def flaky_only() -> Outcome:
    """Failures, but only of items that were flaky on main: noise, not regressions."""
    return noise_outcome(records(stable=80, flaky=8, k=3, n=5, seed=4),
                         main_rates=[0.94, 0.95, 0.93, 0.95, 0.94])


def k1_history() -> Outcome:
    """K = 1 with N = 5: no repeats, but every failing item carries its history on main;
    main slid 7 points over the window (the trend warning)."""
    return noise_outcome(records(stable=50, failing=1, flaky=6, k=1, n=5, seed=2),
                         main_rates=[0.89, 0.91, 0.93, 0.94, 0.96])


NOISE_CASES: dict[str, Callable[[], Outcome]] = {
    "noise_no_change": no_change,
    "noise_regressed": regressed,
    "noise_improved": improved,
    "noise_inconclusive": inconclusive,
    "noise_flaky_only": flaky_only,
    "noise_k1_history": k1_history,
}
