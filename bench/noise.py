"""``python -m bench noise``: the noise-aware verdict (neens_action/noise) measured by
simulation: A/A false-block rate, detection of a hard regression and of a soft drop, and
agent invocations per PR, over a grid of flaky share, flaky pass probability, K and N.

The default grid is the target cell (30 flaky items of 200 at p = 0.5, N = 5) over every K
and ``auto``, then one axis at a time around it (a few minutes on one core); ``--full`` is
the whole table; ``--quick`` a smoke run. Every rate comes with its 95 % interval.
"""

from __future__ import annotations

import argparse
import multiprocessing
import random
import sys
import time

from bench.noise_sim import HARD, ITEMS, SOFT_POINTS, Cell, Tally, run_cell
from neens_action.noise import ItemRecord, NoiseSettings, decide
from neens_action.noise.exact import wilson

TARGET = Cell(0.15, 0.5, 3, 5)


def default_grid() -> list[Cell]:
    cells = [Cell(0.15, 0.5, k, 5) for k in (1, 2, 3, 5, "auto")]
    cells += [Cell(0.15, 0.5, 3, n) for n in (1, 2, 10)]
    cells += [Cell(share, 0.5, 3, 5) for share in (0.0, 0.3)]
    cells += [Cell(0.15, p, 3, 5) for p in (0.3, 0.7)]
    return cells


def full_grid() -> list[Cell]:
    cells: list[Cell] = []
    for share in (0.0, 0.05, 0.15, 0.3):
        for p in ((0.5,) if share == 0.0 else (0.3, 0.5, 0.7)):
            for n in (1, 2, 3, 5, 10):
                cells += [Cell(share, p, k, n) for k in (1, 2, 3, 4, 5, "auto")]
    return cells


def priority(cell: Cell) -> tuple[int, int, int, int]:
    """The order ``--full`` simulates its cells in (the table prints in grid order): the
    target's flaky mix first, then one axis at a time away from it, so a run cut short still
    holds the cells that matter most."""
    mixes = [(0.15, 0.5), (0.3, 0.5), (0.15, 0.7), (0.15, 0.3), (0.3, 0.7), (0.3, 0.3),
             (0.05, 0.5), (0.05, 0.7), (0.05, 0.3), (0.0, 0.5)]
    mix = (cell.flaky_share, cell.flaky_p)
    order_n = (5, 2, 10, 1, 3)
    order_k: tuple[int | str, ...] = (3, "auto", 1, 2, 5, 4)
    return (mixes.index(mix) if mix in mixes else len(mixes),
            order_n.index(cell.history) if cell.history in order_n else len(order_n),
            order_k.index(cell.repeat) if cell.repeat in order_k else len(order_k), 0)


def quick_grid() -> list[Cell]:
    return [TARGET, Cell(0.15, 0.5, "auto", 5)]


def parse_cells(spec: str) -> list[Cell]:
    """``K:N`` (at the target's 30 flaky items, p = 0.5) or ``share:p:K:N``, comma-separated;
    K is a number or ``auto``."""
    cells: list[Cell] = []
    for part in spec.split(","):
        fields = part.strip().split(":")
        if len(fields) == 2:
            fields = ["0.15", "0.5", *fields]
        if len(fields) != 4:
            raise ValueError(f"bad cell {part!r}: K:N or share:p:K:N")
        share, p, k, n = fields
        try:
            repeat: int | str = "auto" if k == "auto" else int(k)
            cell = Cell(float(share), float(p), repeat, int(n))
        except ValueError:
            raise ValueError(f"bad cell {part!r}: K:N or share:p:K:N") from None
        if (not 0 <= cell.flaky_share <= 1 or not 0 < cell.flaky_p < 1 or cell.history < 0
                or (repeat != "auto" and int(repeat) < 1)):
            raise ValueError(f"bad cell {part!r}: out of range")
        cells.append(cell)
    return cells


def _pct(t: Tally, count: int) -> str:
    lo, hi = wilson(count, t.prs)
    return f"{100 * t.rate(count):5.1f} ({100 * lo:.1f}-{100 * hi:.1f})"


HEADER = ("flaky     p     K   N   A/A false block    hard detected     hard named  "
          "soft detected     soft flagged  A/A inconcl.  A/A detects  invocations/PR (A/A, hard)")


def row(cell: Cell, tallies: dict[str, Tally]) -> str:
    aa, hard, soft = tallies["aa"], tallies["hard"], tallies["soft"]
    named = hard.named_hard / hard.prs if hard.prs else 0.0
    return (f"{cell.label}  {_pct(aa, aa.blocked):<17} {_pct(hard, hard.blocked):<17} "
            f"{named:4.1f}/{HARD}     {_pct(soft, soft.blocked):<17} "
            f"{100 * soft.rate(soft.flagged):5.1f}         "
            f"{100 * aa.rate(aa.inconclusive):5.1f}         "
            f"{aa.median_drop():5.1f} pp     "
            f"{aa.invocations / aa.prs:6.1f}  {hard.invocations / hard.prs:6.1f}")


def targets(results: dict[Cell, dict[str, Tally]]) -> list[str]:
    """The targets, checked on the cells that carry them (when measured)."""
    lines: list[str] = []
    fixed = results.get(TARGET)
    auto = results.get(Cell(0.15, 0.5, "auto", 5))
    if fixed:
        aa, hard = fixed["aa"].rate(fixed["aa"].blocked), fixed["hard"].rate(fixed["hard"].blocked)
        lines.append(f"K = 3, N = 5, 30 flaky at p = 0.5: A/A false block {100 * aa:.1f} % "
                     f"(target <= 5 %: {'met' if aa <= 0.05 else 'NOT met'}), hard detection "
                     f"{100 * hard:.1f} % (target >= 95 %: {'met' if hard >= 0.95 else 'NOT met'})")
    if fixed and auto:
        aa, hard = auto["aa"].rate(auto["aa"].blocked), auto["hard"].rate(auto["hard"].blocked)
        base = 3 * ITEMS
        ratio_aa = auto["aa"].invocations / auto["aa"].prs / base
        ratio_hard = auto["hard"].invocations / auto["hard"].prs / base
        met = aa <= 0.05 and hard >= 0.95 and max(ratio_aa, ratio_hard) <= 0.45
        lines.append(f"auto, same cell: A/A false block {100 * aa:.1f} %, hard detection "
                     f"{100 * hard:.1f} %, invocations {100 * ratio_aa:.1f} % (A/A) and "
                     f"{100 * ratio_hard:.1f} % (hard) of fixed K = 3's {base} "
                     f"(target <= 45 % at the same two rates: {'met' if met else 'NOT met'})")
    return lines


def decide_time(items: int, k: int = 3, n: int = 5, share: float = 0.15, p: float = 0.5,
                seed: int = 1) -> tuple[float, float, str]:
    """(CPU seconds, wall seconds, outcome) of one :func:`decide` over ``items`` items, K
    repetitions, N history runs, ``share`` of them flaky at ``p`` (seeded), an A/A PR."""
    rng = random.Random(f"{seed}:decide:{items}")
    flaky = round(share * items)
    records = [ItemRecord(f"item-{i:05d}",
                          tuple(rng.random() < p for _ in range(n)) if i < flaky else (True,) * n,
                          tuple(rng.random() < p for _ in range(k)) if i < flaky else (True,) * k)
               for i in range(items)]
    cpu, wall = time.process_time(), time.perf_counter()
    verdict = decide(records, NoiseSettings())
    return time.process_time() - cpu, time.perf_counter() - wall, verdict.outcome.value


def _one(job: tuple[Cell, int, int, int | None]) -> tuple[Cell, dict[str, Tally]]:
    cell, prs, seed, weight = job
    return cell, run_cell(cell, prs, seed, break_weight=weight)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench noise", description=__doc__)
    grid = parser.add_mutually_exclusive_group()
    grid.add_argument("--full", action="store_true", help="the whole grid (hours on one core)")
    grid.add_argument("--quick", action="store_true", help="two cells, 200 PRs each (smoke)")
    grid.add_argument("--cells", help="these cells only: K:N or share:p:K:N, comma-separated")
    parser.add_argument("--prs", type=int, default=None,
                        help="simulated PRs per cell and scenario (default 2000; --quick 200)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--break-weight", type=int, default=None,
                        help="override the verdict's break weight (default: the verdict's own)")
    parser.add_argument("--decide-items", type=int, default=10000,
                        help="time one decide over this many items, K = 3, N = 5 (0: skip)")
    parser.add_argument("--procs", type=int, default=1,
                        help="cells simulated in parallel processes (rows print as cells end)")
    args = parser.parse_args(argv)
    prs = args.prs if args.prs is not None else 200 if args.quick else 2000
    if prs < 1 or args.procs < 1 or (args.break_weight is not None and args.break_weight < 1):
        print("bench noise: --prs, --procs and --break-weight must be at least 1",
              file=sys.stderr)
        return 2
    try:
        cells = (parse_cells(args.cells) if args.cells else full_grid() if args.full else
                 quick_grid() if args.quick else default_grid())
    except ValueError as exc:
        print(f"bench noise: {exc}", file=sys.stderr)
        return 2
    weight = args.break_weight or NoiseSettings().break_weight
    print(f"noise-aware verdict, simulated: {ITEMS} items, {prs} PRs per cell and scenario, "
          f"seed {args.seed}, break weight {weight}; hard = {HARD} stable items now always "
          f"fail, soft = a {SOFT_POINTS:g}-point drop spread over the stable items; gate "
          "max-regressions 0, on-inconclusive warn; rates in % (95 % interval); "
          "flagged = blocked or inconclusive")
    if args.decide_items > 0:
        cpu, wall, outcome = decide_time(args.decide_items)
        print(f"decide over {args.decide_items} items (K = 3, N = 5, 15 % flaky at p = 0.5, "
              f"an A/A PR: {outcome}): {cpu:.2f} s CPU, {wall:.2f} s wall", flush=True)
    print(HEADER)
    results: dict[Cell, dict[str, Tally]] = {}
    start = time.monotonic()
    ordered = sorted(cells, key=priority) if args.full else cells
    jobs = [(cell, prs, args.seed, args.break_weight) for cell in ordered]
    if args.procs == 1:
        for job in jobs:
            cell, tallies = _one(job)
            results[cell] = tallies
            print(row(cell, tallies), flush=True)
    else:
        # Each cell seeds its own generator from (seed, cell, scenario): the same figures in
        # any process and any order. Rows print as cells end, then the table in grid order.
        with multiprocessing.Pool(args.procs) as pool:
            for cell, tallies in pool.imap_unordered(_one, jobs):
                results[cell] = tallies
                print(row(cell, tallies), flush=True)
        print("in grid order:")
        print(HEADER)
        for cell in cells:
            print(row(cell, results[cell]))
    print(f"({len(cells)} cells in {time.monotonic() - start:.0f} s, {args.procs} process"
          f"{'es' if args.procs > 1 else ''})")
    for line in targets(results):
        print(line)
    return 0
