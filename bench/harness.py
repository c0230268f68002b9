"""Shared pieces of the benchmark suite: a sandbox per scenario, a measured process, tables.

:func:`measure` runs one command and reports its wall time, its *agent phase* (from the
runner's ``Running N item(s)`` line to its last ``item i/N [...]`` line, timestamped as they
arrive; for the floor, the whole command) and its peak RSS (VmHWM of the process itself, and
the sum over its process tree), sampled from /proc by :class:`bench.procs.TreeSampler`.
"""

from __future__ import annotations

import os
import re
import statistics
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import yaml

from bench.procs import TreeSampler

ROOT = Path(__file__).resolve().parent.parent
KEY = "nk_live_bench_0123456789"
ITEM_LINE = re.compile(r"item\s+\d+/\d+ \[")


@dataclass
class Measured:
    name: str
    wall: float
    phase: float | None  # agent phase, seconds (None when the lines were not seen)
    peak_root: int  # bytes: the CLI process's VmHWM
    exit_code: int
    ended: float  # time.time() at exit
    tail: str = ""  # the last stderr lines, for error messages
    run_id: str = ""  # from the CLI's "Created run <id>" line


def editable_cli() -> list[str]:
    """The development venv's ``neens`` (or ``python -m neens_action``)."""
    ours = ROOT / ".venv" / "bin" / "neens"
    return [str(ours)] if ours.exists() else [sys.executable, "-m", "neens_action"]


def write_seed(path: Path, sizes: list[int], *, extra_small: int = 0) -> dict[int, str]:
    """One dataset per size (``ds_<n>``) of refund prompts; returns size -> dataset id."""
    datasets, ids = [], {}
    for n in sorted(set(sizes + ([extra_small] if extra_small else []))):
        ids[n] = f"ds_{n}"
        datasets.append({"id": f"ds_{n}", "name": f"{n} items", "judges": ["j_answer"],
                         "items": [{"id": f"b_{i}", "input": f"Refund for order {i} "
                                    f"(${i}.00)?", "expected_output": f"${i}.00"}
                                   for i in range(1, n + 1)]})
    seed = {"api_keys": [KEY], "pricing": {"gpt-4o-mini": {"input": 0.15, "output": 0.6}},
            "judges": [{"id": "j_answer", "metric": "correctness", "kind": "contains"}],
            "datasets": datasets}
    path.write_text(yaml.safe_dump(seed, sort_keys=False))
    return ids


class Sandbox:
    """``python -m neens_sandbox serve`` on 127.0.0.1 with a fresh DB."""

    def __init__(self, work: Path, seed: Path, *extra: str, name: str = "sandbox") -> None:
        self.log = work / f"{name}.log"
        errf = self.log.open("w")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "neens_sandbox", "serve", "--host", "127.0.0.1",
             "--port", "0", "--db", str(work / f"{name}.db"), "--seed", str(seed),
             "--api-key", KEY, *extra],
            stdout=subprocess.PIPE, stderr=errf, text=True, cwd=ROOT)
        assert self.proc.stdout is not None
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline:
            line = self.proc.stdout.readline()
            if line.startswith("sandbox listening on "):
                self.url = line.split()[3]
                return
            if self.proc.poll() is not None:
                break
        self.proc.kill()
        raise SystemExit(f"bench: the sandbox did not start:\n{self.log.read_text()[-2000:]}")

    def env(self, **extra: str) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items()
               if not k.startswith(("OTEL_", "NEENS_", "GITHUB_", "GITLAB_", "CI_"))
               and k not in ("CI", "JENKINS_URL")}
        env.update(NEENS_BASE_URL=self.url, NEENS_API_KEY=KEY,
                   OTEL_EXPORTER_OTLP_ENDPOINT=self.url,
                   OTEL_EXPORTER_OTLP_HEADERS=f"Authorization=Bearer {KEY}",
                   OTEL_BSP_SCHEDULE_DELAY="50", **extra)
        return env

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(10)


def measure(name: str, argv: list[str], env: dict[str, str], *, cwd: Path = ROOT,
            timeout: float = 3600) -> Measured:
    """Run ``argv`` (stdout discarded); see the module docstring."""
    marks: dict[str, float] = {}
    found: dict[str, str] = {}
    tail: list[str] = []
    start = time.time()
    proc = subprocess.Popen(argv, env=env, cwd=cwd, stdin=subprocess.DEVNULL,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            text=True, errors="replace")
    sampler = TreeSampler(proc.pid, interval=0.02, tree=False)  # VmHWM: the kernel's peak
    sampler.start()

    def read() -> None:
        assert proc.stderr is not None
        for line in proc.stderr:
            now = time.time()
            if line.startswith("Created run "):
                found["run_id"] = line.split()[2]
            elif "running" not in marks and line.lstrip().startswith(("Running ", "Replaying ")):
                marks["running"] = now
            elif ITEM_LINE.search(line):
                marks["last_item"] = now
            tail.append(line)
            del tail[:-8]

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    try:
        proc.wait(timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
    ended = time.time()
    reader.join(10)
    sampler.stop()
    phase = None
    if "running" in marks and "last_item" in marks:
        phase = marks["last_item"] - marks["running"]
    return Measured(name=name, wall=ended - start, phase=phase, peak_root=sampler.peak_root,
                    exit_code=proc.returncode, ended=ended,
                    tail="".join(tail), run_id=found.get("run_id", ""))


def median_of(results: list[Measured]) -> Measured:
    """The run with the median wall time (repeats smooth out a busy machine)."""
    ordered = sorted(results, key=lambda r: r.wall)
    return ordered[len(ordered) // 2]


def startup(argv: list[str], runs: int = 11) -> float:
    """Median seconds of ``argv`` (e.g. ``neens --version``), after one warm-up run."""
    subprocess.run(argv, capture_output=True, check=False, timeout=60)
    times = []
    for _ in range(runs):
        begin = time.perf_counter()
        subprocess.run(argv, capture_output=True, check=False, timeout=60)
        times.append(time.perf_counter() - begin)
    return statistics.median(times)


def mib(n: int) -> str:
    return f"{n / 2**20:.1f} MiB" if n else "n/a"


def secs(x: float | None) -> str:
    return "n/a" if x is None else f"{x:.2f}s"


def ratio(a: float | None, b: float | None) -> str:
    return f"{a / b:.2f}x" if a and b else "n/a"


def table(head: list[str], rows: list[list[str]]) -> str:
    widths = [max(len(str(r[i])) for r in [head, *rows]) for i in range(len(head))]
    lines = ["  " + "  ".join(str(c).ljust(w) for c, w in zip(row, widths, strict=True))
             for row in [head, *rows]]
    return "\n".join(line.rstrip() for line in lines)
