"""``python -m bench scale --only rss``: the CLI's peak memory with and without per-item outputs.

At each ``--rss-sizes`` item count, ``eval run --create`` against the sandbox (``--grace 0``)
with two warm workers that answer at once and send no trace (worker mode: no process per
item, so the CLI's own memory is what is measured), three ways: the console report alone,
``--json`` (stdout to a file) and ``--junit FILE``. Peak RSS is the kernel's own figure for
the CLI process (``ru_maxrss`` of ``wait4``, taken by a small launcher: see ``LAUNCHER``).
Each output is checked complete: the ``--json``
document parses and lists every item in ``run.items``, ``items``, ``report.items`` and
``report.agent_failures``; the JUnit file parses with one test case per item plus the run's.
Nothing is scored (no trace), so every run ends with exit 2 (nothing measured), with every
item listed.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.harness import ROOT, Sandbox, table, write_seed

MODES = ("console", "json", "junit")
WORKER = """\
import sys
sys.path.insert(0, {root!r})
from neens_action.agent import serve
serve(lambda prompt: "ok")
"""


@dataclass
class Peak:
    rss: int  # bytes
    wall: float
    exit_code: int
    output: int  # bytes of the per-item output (0 for the console run)
    complete: str  # "yes" or what is missing


# The CLI is started by this small launcher, which reports its ``wait4`` figures: a child's
# ``ru_maxrss`` counts the memory of the process it was forked from (the kernel keeps the
# larger of the pre-exec image's and the new program's peak), and this process holds the seed.
LAUNCHER = """\
import os, sys
pid = os.posix_spawnp(sys.argv[2], sys.argv[2:], os.environ)
_, status, usage = os.wait4(pid, 0)
with open(sys.argv[1], "w") as out:
    out.write(f"{usage.ru_maxrss} {os.waitstatus_to_exitcode(status)}")
"""


def peak_rss(argv: list[str], env: dict[str, str], *, stdout: Path, stderr: Path,
             timeout: float) -> tuple[int, float, int]:
    """Run ``argv``; (its peak RSS in bytes, from ``wait4`` in a small launcher, wall
    seconds, exit code)."""
    report = stdout.with_suffix(".rss")
    begin = time.perf_counter()
    with stdout.open("w") as out, stderr.open("w") as err:
        proc = subprocess.run([sys.executable, "-c", LAUNCHER, str(report), *argv], env=env,
                              cwd=ROOT, stdin=subprocess.DEVNULL, stdout=out, stderr=err,
                              timeout=timeout, check=False)
    wall = time.perf_counter() - begin
    if proc.returncode != 0 or not report.exists():
        return 0, wall, -1
    rss, code = report.read_text().split()
    report.unlink()
    return int(rss) * 1024, wall, int(code)


def json_complete(path: Path, n: int) -> str:
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except ValueError as exc:
        return f"not JSON ({exc})"
    counts = {"run.items": len((doc.get("run") or {}).get("items") or []),
              "items": len(doc.get("items") or []),
              "report.items": len(doc["report"].get("items") or []),
              "report.agent_failures": len(doc["report"].get("agent_failures") or [])}
    short = [f"{k} {v}" for k, v in counts.items() if v != n]
    return "yes" if not short else "short: " + ", ".join(short)


def junit_complete(path: Path, n: int) -> str:
    try:
        cases = sum(1 for _, el in ET.iterparse(path) if el.tag == "testcase")
    except (ET.ParseError, OSError) as exc:
        return f"not XML ({exc})"
    return "yes" if cases == n + 1 else f"{cases} test cases for {n} items"


def one(ours: list[str], sb: Sandbox, work: Path, worker: Path, n: int, mode: str,
        label: str) -> Peak:
    out = work / f"rss-{n}-{mode}.out"
    junit = work / f"rss-{n}-{mode}.xml"
    extra: list[str] = {"console": [], "json": ["--json"],
                        "junit": ["--junit", str(junit)]}[mode]
    env = {k: v for k, v in sb.env().items() if not k.startswith("OTEL_")}
    argv = [*ours, "eval", "run", "--create", "--dataset", f"ds_{n}", "--version-label",
            label, "--workers", "2", "--poll-interval", "0.5", *extra, "--",
            sys.executable, str(worker)]
    rss, wall, code = peak_rss(argv, env, stdout=out, stderr=work / f"rss-{n}-{mode}.err",
                               timeout=3600)
    if mode == "json":
        size, complete = out.stat().st_size, json_complete(out, n)
    elif mode == "junit":
        size = junit.stat().st_size if junit.exists() else 0
        complete = junit_complete(junit, n)
    else:
        size, complete = 0, "—"
    for path in (out, junit):
        path.unlink(missing_ok=True)
    return Peak(rss, wall, code, size, complete)


def run(scale: Any) -> None:
    """The section (``scale`` is the :class:`bench.scale.Scale` running it)."""
    sizes, work = scale.args.rss_sizes, scale.work
    seed = work / "rss.yaml"
    write_seed(seed, sizes)
    worker = work / "rss-worker.py"
    worker.write_text(WORKER.format(root=str(ROOT)))
    sb = Sandbox(work, seed, "--grace", "0", name="rss")
    rows, peaks = [], {}
    try:
        for n in sizes:
            for mode in MODES:
                print(f"bench: rss: {n} items, {mode} ...", file=sys.stderr)
                scale.labels += 1
                got = one(scale.ours, sb, work, worker, n, mode, f"rss-{scale.labels}")
                if got.exit_code != 2:
                    scale.failures.append(f"rss {n} {mode} exited {got.exit_code}")
                if got.complete not in ("yes", "—"):
                    scale.failures.append(f"rss {n} {mode}: output {got.complete}")
                peaks[n, mode] = got.rss
                rows.append([str(n), mode, f"{got.rss / 2**20:.1f} MiB",
                             f"{got.rss / peaks[n, 'console']:.2f}x", f"{got.wall:.1f}s",
                             f"{got.output / 2**20:.1f} MiB" if got.output else "—",
                             got.complete])
    finally:
        sb.stop()
    print("\nCLI peak RSS (wait4 ru_maxrss), 2 warm workers, no trace, sandbox --grace 0")
    print(table(["items", "output", "peak RSS", "vs console", "wall", "output size",
                 "complete"], rows))
