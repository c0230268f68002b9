"""``python -m bench noise-e2e``: the noise-aware gate measured end to end, through the real
sandbox (``python -m neens_sandbox serve``) and the real CLI, with a seeded nondeterministic
worker-mode agent (tests/integration/noise_agent.py under ``--workers``: the example worker,
real OpenTelemetry SDK, good or bad per prompt drawn from prompt, seed and repetition index).

The dataset holds ``--items`` refund prompts (odd order numbers: the example agent's bad mode
gets them wrong); the first ``--flaky`` fail with probability ``--p`` on every run, the rest
always pass. ``--main-runs`` runs of ``main`` make the history (each compared with the one
before). Then, per configuration (``k3``: ``--repeat 3 --baseline-runs N``; ``auto``:
``--repeat auto --baseline-runs N``; ``k1``: one replay against the latest main run, today's
gate), ``--prs`` A/A PRs (same agent, another seed each) and ``--prs`` regressed PRs (10 stable
items now always fail), every one gated ``--max-regressions 0`` (``on-inconclusive: warn``).

Reported per configuration: A/A PRs blocked and inconclusive, regressed PRs blocked, the
broken items named (every one of them held, and any other item held), agent invocations and
wall time per PR.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from bench.harness import KEY, ROOT, Sandbox, table

AGENT = [sys.executable, str(ROOT / "tests" / "integration" / "noise_agent.py")]
BROKEN = 10
CONFIGS = {
    "k3": ("K = 3, N = {n}", ["--repeat", "3", "--baseline-runs", "{n}"]),
    "auto": ("auto, N = {n}", ["--repeat", "auto", "--baseline-runs", "{n}"]),
    "k1": ("K = 1, N = 1 (today)", []),
}


@dataclass
class PR:
    scenario: str  # aa | regressed
    code: int
    verdict: str
    outcome: str  # the noise verdict's outcome ("" without repeats or history)
    held: set[str]
    invocations: int
    wall: float


@dataclass
class Result:
    config: str
    label: str
    prs: list[PR] = field(default_factory=list)

    def of(self, scenario: str) -> list[PR]:
        return [p for p in self.prs if p.scenario == scenario]


def write_seed(path: Path, items: int) -> list[int]:
    """A dataset ``ds_noise`` of ``items`` refund prompts over odd order numbers."""
    orders = [2 * i + 1 for i in range(items)]
    seed = {"api_keys": [KEY], "pricing": {"gpt-4o-mini": {"input": 0.15, "output": 0.6}},
            "judges": [{"id": "j_answer", "metric": "correctness", "kind": "contains"}],
            "datasets": [{"id": "ds_noise", "name": f"{items} items", "judges": ["j_answer"],
                          "items": [{"id": f"o_{n}", "input": f"Refund for order {n} "
                                     f"(${n}.00)?", "expected_output": f"${n}.00"}
                                    for n in orders]}]}
    path.write_text(yaml.safe_dump(seed, sort_keys=False))
    return orders


def run_cli(sb: Sandbox, args: list[str], workers: int, timeout: float,
            **env: str) -> tuple[subprocess.CompletedProcess[str], float]:
    argv = [sys.executable, "-m", "neens_action", "eval", "run", "--create", "--dataset",
            "ds_noise", "--workers", str(workers), "--poll-interval", "0.5", *args, "--",
            *AGENT]
    start = time.monotonic()
    proc = subprocess.run(argv, env=sb.env(**env), cwd=ROOT, capture_output=True, text=True,
                          timeout=timeout, stdin=subprocess.DEVNULL)
    return proc, time.monotonic() - start


def one_pr(sb: Sandbox, config: str, scenario: str, index: int, *, n: int, workers: int,
           items: int, env: dict[str, str], timeout: float) -> PR:
    label, extra = CONFIGS[config]
    args = ["--version-label", f"pr-{config}-{scenario}-{index}", "--branch", "feat",
            "--baseline", "branch:main", "--max-regressions", "0", "--json",
            *[a.format(n=n) for a in extra]]
    proc, wall = run_cli(sb, args, workers, timeout, NOISE_SEED=f"{config}-{scenario}-{index}",
                         **env)
    if proc.returncode not in (0, 1):
        raise SystemExit(f"bench noise-e2e: {label} {scenario} PR {index} exited "
                         f"{proc.returncode}:\n{proc.stderr[-3000:]}")
    doc = json.loads(proc.stdout)
    noise = doc.get("noise") or {}
    reps = noise.get("reps") or []
    invocations = sum(r.get("items_replayed") or 0 for r in reps) if reps else items
    return PR(scenario, proc.returncode, doc.get("verdict", ""), noise.get("outcome", ""),
              {i["item_id"] for i in noise.get("regressed") or []}, invocations, wall)


def _median(values: list[float]) -> str:
    return f"{statistics.median(values):.1f}" if values else "n/a"


def report(results: list[Result], broken_ids: set[str]) -> str:
    head = ["configuration", "A/A blocked", "A/A inconclusive", "regressed blocked",
            "all 10 named", "others held", "invocations/PR (A/A, reg.)",
            "wall s/PR median (A/A, reg.)"]
    rows = []
    for res in results:
        aa, reg = res.of("aa"), res.of("regressed")
        named = sum(1 for p in reg if broken_ids <= p.held)
        others = sum(len(p.held - broken_ids) for p in [*aa, *reg])
        noise_aware = res.config != "k1"
        rows.append([
            res.label,
            f"{sum(p.code == 1 for p in aa)}/{len(aa)}",
            f"{sum(p.outcome == 'inconclusive' for p in aa)}/{len(aa)}" if noise_aware
            else "-",
            f"{sum(p.code == 1 for p in reg)}/{len(reg)}",
            f"{named}/{len(reg)}" if noise_aware else "-",
            str(others) if noise_aware else "-",
            f"{statistics.mean(p.invocations for p in aa):.1f}, "
            f"{statistics.mean(p.invocations for p in reg):.1f}" if aa and reg else "n/a",
            f"{_median([p.wall for p in aa])}, {_median([p.wall for p in reg])}"])
    return table(head, rows)


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench noise-e2e", description=__doc__)
    ap.add_argument("--items", type=int, default=200)
    ap.add_argument("--flaky", type=int, default=30, help="flaky items (the first ones)")
    ap.add_argument("--p", type=float, default=0.5, help="a flaky item's failure probability")
    ap.add_argument("--main-runs", type=int, default=5, help="history runs of main (N)")
    ap.add_argument("--prs", type=int, default=10, help="A/A PRs, and as many regressed PRs")
    ap.add_argument("--configs", default="k3,auto,k1", help="k3, auto, k1 (comma-separated)")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--timeout", type=float, default=1800, help="seconds per command")
    args = ap.parse_args(argv)
    configs = [c for c in args.configs.split(",") if c]
    if (args.items < args.flaky + BROKEN or args.flaky < 0 or args.prs < 1
            or args.main_runs < 1 or args.workers < 1 or not 0 < args.p < 1
            or any(c not in CONFIGS for c in configs)):
        print("bench noise-e2e: need items >= flaky + 10, prs, main-runs and workers >= 1, "
              f"0 < p < 1, configs among {', '.join(CONFIGS)}", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="neens-noise-e2e-") as tmp:
        work = Path(tmp)
        orders = write_seed(work / "seed.yaml", args.items)
        flaky = ",".join(str(o) for o in orders[:args.flaky])
        broken = [str(o) for o in orders[-BROKEN:]]
        broken_ids = {f"o_{o}" for o in broken}
        env = {"NOISE_FLAKY": flaky, "NOISE_P": str(args.p), "NOISE_STATE_DIR": str(work / "n")}
        print(f"noise-aware gate end to end: {args.items} items ({args.flaky} flaky at "
              f"p = {args.p}), {args.main_runs} main runs, {args.prs} A/A + {args.prs} "
              f"regressed PRs ({BROKEN} stable items broken) per configuration, "
              f"--workers {args.workers}, --max-regressions 0", flush=True)
        sb = Sandbox(work, work / "seed.yaml", "--grace", "1")
        start = time.monotonic()
        try:
            for i in range(args.main_runs):
                proc, wall = run_cli(sb, ["--version-label", f"main-{i}", "--branch", "main",
                                          "--baseline", "branch:main"], args.workers,
                                     args.timeout, NOISE_SEED=f"main-{i}", **env)
                if proc.returncode != 0:
                    raise SystemExit(f"bench noise-e2e: main run {i} exited "
                                     f"{proc.returncode}:\n{proc.stderr[-3000:]}")
                print(f"  main run {i + 1}/{args.main_runs}: {wall:.1f} s", flush=True)
            results = []
            for config in configs:
                res = Result(config, CONFIGS[config][0].format(n=args.main_runs))
                for scenario in ("aa", "regressed"):
                    extra = {"NOISE_BROKEN": ",".join(broken)} if scenario == "regressed" else {}
                    for i in range(args.prs):
                        pr = one_pr(sb, config, scenario, i, n=args.main_runs,
                                    workers=args.workers, items=args.items,
                                    env={**env, **extra}, timeout=args.timeout)
                        res.prs.append(pr)
                        print(f"  {config} {scenario} {i + 1}/{args.prs}: exit {pr.code} "
                              f"{pr.verdict} {pr.outcome or '-'} held {len(pr.held)} "
                              f"invocations {pr.invocations} {pr.wall:.1f} s", flush=True)
                results.append(res)
        finally:
            sb.stop()
        print(report(results, broken_ids))
        print(f"({time.monotonic() - start:.0f} s in all)")
    return 0
