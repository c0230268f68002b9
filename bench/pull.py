"""``python -m bench pull``: the pull flow at scale, side by side with the vendor CLI.

One sandbox (a generated dataset of ``--items`` items), one fast stdlib agent
(``bench/fast_agent.py``: one OTLP/JSON span per invocation), then, in one session:

- floor: the same agent over the same number of prompts with ``xargs -P <concurrency>``
  (no runner at all: what process spawning alone costs);
- ours: ``neens eval run --create`` (this package);
- vendor: the reference ``neens eval run --create`` (``neens-eval`` 0.8.0 in .venv-vendor).

Per runner: wall time, time from the last agent exit to the verdict (the process exit),
peak RSS of the runner process and of its whole process tree, and ``neens --version``
start-up time. Ratios are ours / vendor. Each CLI keeps its own defaults (poll interval 5 s
for both; ours starts polling fast and backs off).
"""

from __future__ import annotations

import argparse
import os
import shlex
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import yaml

from bench.harness import editable_cli, startup
from bench.procs import TreeSampler

ROOT = Path(__file__).resolve().parent.parent
AGENT = Path(__file__).resolve().parent / "fast_agent.py"
KEY = "nk_live_bench_0123456789"


@dataclass
class Result:
    name: str
    wall: float
    last_to_verdict: float | None
    peak_root: int
    peak_tree: int
    exit_code: int
    agents_done: int
    max_procs: int


def write_seed(path: Path, items: int) -> None:
    seed = {
        "api_keys": [KEY],
        "pricing": {"gpt-4o-mini": {"input": 0.15, "output": 0.6}},
        "judges": [{"id": "j_answer", "metric": "correctness", "kind": "contains"}],
        "datasets": [{
            "id": "ds_bench", "name": "Bench", "judges": ["j_answer"],
            "items": [{"id": f"b_{i}", "input": f"Refund for order {i} (${i}.00)?",
                       "expected_output": f"${i}.00"} for i in range(1, items + 1)],
        }],
    }
    path.write_text(yaml.safe_dump(seed))


def start_sandbox(work: Path, seed: Path) -> tuple[subprocess.Popen, str]:
    log = (work / "sandbox.log").open("w")
    proc = subprocess.Popen(
        [sys.executable, "-m", "neens_sandbox", "serve", "--host", "127.0.0.1",
         "--port", "0", "--db", str(work / "bench.db"), "--seed", str(seed), "--grace", "2"],
        stdout=subprocess.PIPE, stderr=log, text=True, cwd=ROOT,
    )
    assert proc.stdout is not None
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        if line.startswith("sandbox listening on "):
            return proc, line.split()[3]
        if proc.poll() is not None:
            break
    proc.kill()
    raise SystemExit(f"bench: the sandbox did not start: {(work / 'sandbox.log').read_text()}")


def measure(name: str, argv: list[str], env: dict[str, str], stamps: Path,
            *, shell_input: str | None = None) -> Result:
    stamps.unlink(missing_ok=True)
    env = {**env, "BENCH_STAMPS": str(stamps)}
    start = time.time()
    proc = subprocess.Popen(argv, env=env, cwd=ROOT, stdin=subprocess.PIPE,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    sampler = TreeSampler(proc.pid)
    sampler.start()
    _, err = proc.communicate(shell_input, timeout=3600)
    end = time.time()
    sampler.stop()
    done = [float(x) for x in stamps.read_text().split()] if stamps.exists() else []
    if proc.returncode not in (0, 1):
        print(f"bench: {name} exited {proc.returncode}:\n{err[-2000:]}", file=sys.stderr)
    return Result(name=name, wall=end - start,
                  last_to_verdict=(end - max(done)) if done else None,
                  peak_root=sampler.peak_root, peak_tree=sampler.peak_tree,
                  exit_code=proc.returncode, agents_done=len(done),
                  max_procs=sampler.max_procs)


def _mb(n: int) -> str:
    return f"{n / 1e6:.1f} MB" if n else "n/a"


def _ratio(a: float | None, b: float | None) -> str:
    return f"{a / b:.2f}" if a and b else "n/a"


def report(results: list[Result], starts: dict[str, float], items: int,
           concurrency: int) -> None:
    load = f", load avg {os.getloadavg()[0]:.1f}" if hasattr(os, "getloadavg") else ""
    print(f"\npull benchmark: {items} items, concurrency {concurrency}, fast stdlib agent, "
          f"one sandbox, {os.cpu_count()} CPU(s){load}")
    head = ["runner", "exit", "agents", "wall", "last item -> verdict", "peak RSS runner",
            "peak RSS tree", "--version"]
    rows = [head]
    for r in results:
        rows.append([r.name, str(r.exit_code), str(r.agents_done), f"{r.wall:.1f}s",
                     "n/a" if r.last_to_verdict is None else f"{r.last_to_verdict:.2f}s",
                     _mb(r.peak_root) if r.name != "floor (xargs -P)" else "n/a",
                     _mb(r.peak_tree),
                     f"{starts[r.name] * 1000:.0f} ms" if r.name in starts else "n/a"])
    widths = [max(len(row[i]) for row in rows) for i in range(len(head))]
    for row in rows:
        print("  " + "  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip())
    by = {r.name: r for r in results}
    ours, vendor, floor = by.get("neens-action"), by.get("vendor 0.8.0"), by.get(
        "floor (xargs -P)")
    if ours and vendor:
        print(f"  ratios ours/vendor: wall {_ratio(ours.wall, vendor.wall)}, "
              f"last item -> verdict {_ratio(ours.last_to_verdict, vendor.last_to_verdict)}, "
              f"peak RSS runner {_ratio(ours.peak_root, vendor.peak_root)}, "
              f"--version {_ratio(starts.get('neens-action'), starts.get('vendor 0.8.0'))}")
    if ours and floor:
        print(f"  ratio ours/floor: wall {_ratio(ours.wall, floor.wall)}")


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench pull")
    ap.add_argument("--items", type=int, default=500)
    ap.add_argument("--concurrency", type=int, default=8)
    ap.add_argument("--vendor", default=os.environ.get("NEENS_VENDOR_CLI",
                                                       str(ROOT / ".venv-vendor/bin/neens")))
    ap.add_argument("--skip-vendor", action="store_true")
    ap.add_argument("--skip-floor", action="store_true")
    args = ap.parse_args(argv)
    ours = editable_cli()
    agent = [sys.executable, str(AGENT)]
    with tempfile.TemporaryDirectory(prefix="neens-bench-") as tmp:
        work = Path(tmp)
        write_seed(work / "seed.yaml", args.items)
        sandbox, url = start_sandbox(work, work / "seed.yaml")
        try:
            env = {k: v for k, v in os.environ.items()
                   if not k.startswith(("OTEL_", "NEENS_"))}
            env.update(NEENS_BASE_URL=url, NEENS_API_KEY=KEY, OTEL_EXPORTER_OTLP_ENDPOINT=url,
                       OTEL_EXPORTER_OTLP_HEADERS=f"Authorization=Bearer {KEY}")
            results: list[Result] = []
            stamps = work / "stamps"
            flags = ["eval", "run", "--create", "--dataset", "ds_bench",
                     "--concurrency", str(args.concurrency)]
            if not args.skip_floor:
                prompts = "".join(f"{i}\n" for i in range(1, args.items + 1))
                inner = shlex.quote('echo "Refund for order $0" | ' + shlex.join(agent))
                cmd = f"xargs -P {args.concurrency} -I{{}} sh -c {inner} {{}}"
                floor_env = {**env, "OTEL_RESOURCE_ATTRIBUTES": "neens.eval_run_id=floor"}
                results.append(measure("floor (xargs -P)", ["sh", "-c", cmd], floor_env, stamps,
                                       shell_input=prompts))
            print("bench: running neens-action ...", file=sys.stderr)
            results.append(measure("neens-action", [*ours, *flags, "--version-label",
                                                    "bench-ours", "--", *agent], env, stamps))
            starts = {"neens-action": startup([*ours, "--version"])}
            if not args.skip_vendor:
                if not Path(args.vendor).exists():
                    print(f"bench: vendor CLI not found at {args.vendor} (create it: python3 -m "
                          "venv .venv-vendor && .venv-vendor/bin/pip install neens-eval==0.8.0)",
                          file=sys.stderr)
                    return 2
                print("bench: running the vendor CLI ...", file=sys.stderr)
                results.append(measure("vendor 0.8.0", [args.vendor, *flags, "--version-label",
                                                        "bench-vendor", "--", *agent], env,
                                       stamps))
                starts["vendor 0.8.0"] = startup([args.vendor, "--version"])
        finally:
            sandbox.terminate()
            try:
                sandbox.wait(10)
            except subprocess.TimeoutExpired:
                sandbox.kill()
    report(results, starts, args.items, args.concurrency)
    bad = [r.name for r in results if r.name != "floor (xargs -P)" and r.exit_code != 0]
    if bad:
        print(f"bench: unexpected exit code from {', '.join(bad)}", file=sys.stderr)
        return 1
    return 0
