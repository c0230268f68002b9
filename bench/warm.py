"""``python -m bench warm``: the same agent in per-item and in worker mode (``--workers``).

Agents: ``startup`` = the OpenTelemetry example agent after about a second of CPU at start-up
(a framework's imports), ``otel`` = the example agent as is (``bench/warm_agent.py``). For each
agent x items x concurrency x mode: wall time of ``neens eval run --create``, CPU time of the
whole process tree (the CLI and every agent it reaped: ``wait4``), peak RSS of the tree
(sampled from /proc), and a check that every item was scored exactly once from its own spans
(one root span per item in the sandbox, its ``input.value`` the item's prompt).
"""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from bench.harness import ROOT, Sandbox, mib, table, write_seed
from bench.procs import TreeSampler

AGENT = [sys.executable, str(ROOT / "bench" / "warm_agent.py")]
STARTUP = {"startup": "1.0", "otel": "0"}


@dataclass
class Row:
    agent: str
    items: int
    concurrency: int
    mode: str
    wall: float
    cpu: float
    peak_tree: int
    exit_code: int
    scored_once: bool


def run_one(sb: Sandbox, db: Path, dataset: str, *, agent: str, items: int, concurrency: int,
            workers: bool) -> Row:
    how = ["--workers", str(concurrency)] if workers else ["--concurrency", str(concurrency)]
    label = f"{agent}-{items}-{concurrency}-{'w' if workers else 'p'}"
    argv = [sys.executable, "-m", "neens_action", "eval", "run", "--create", "--dataset",
            dataset, "--version-label", label, "--timeout", "120", "--poll-interval", "1",
            *how, "--", *AGENT]
    env = sb.env(WARM_STARTUP_S=STARTUP[agent])
    start = time.time()
    proc = subprocess.Popen(argv, env=env, cwd=ROOT, stdin=subprocess.DEVNULL,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    sampler = TreeSampler(proc.pid, interval=0.25, tree=True)
    sampler.start()
    err = proc.stderr.read() if proc.stderr else ""
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.time() - start
    sampler.stop()
    proc.returncode = os.waitstatus_to_exitcode(status)
    run_id = next((line.split()[2] for line in err.splitlines()
                   if line.startswith("Created run ")), "")
    if proc.returncode != 0:
        print(err[-2000:], file=sys.stderr)
    return Row(agent, items, concurrency, "workers" if workers else "per-item", wall,
               usage.ru_utime + usage.ru_stime, sampler.peak_tree, proc.returncode,
               scored_once(db, run_id, items))


def scored_once(db: Path, run_id: str, items: int) -> bool:
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=30)
    try:
        rows = con.execute("SELECT item_id, attributes FROM spans WHERE run_id = ? AND "
                           "name = 'invoke_agent refund-agent'", (run_id,)).fetchall()
    finally:
        con.close()
    seen = {}
    for item_id, attrs in rows:
        n = int(item_id.removeprefix("b_"))
        prompt = f"Refund for order {n} (${n}.00)?"
        if item_id in seen or json.loads(attrs)["input.value"] != prompt:
            return False
        seen[item_id] = True
    return len(seen) == items


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench warm")
    ap.add_argument("--agents", default="startup,otel")
    ap.add_argument("--sizes", default="200,1000")
    ap.add_argument("--concurrency", default="2,8")
    ap.add_argument("--modes", default="per-item,workers")
    args = ap.parse_args(argv)
    sizes = [int(x) for x in args.sizes.split(",")]
    rows: list[Row] = []
    with tempfile.TemporaryDirectory(prefix="neens-warm-") as tmp:
        work = Path(tmp)
        ids = write_seed(work / "seed.yaml", sizes)
        sb = Sandbox(work, work / "seed.yaml")
        try:
            for agent in args.agents.split(","):
                for n in sizes:
                    for conc in (int(x) for x in args.concurrency.split(",")):
                        for mode in args.modes.split(","):
                            row = run_one(sb, work / "sandbox.db", ids[n], agent=agent,
                                          items=n, concurrency=conc,
                                          workers=mode == "workers")
                            rows.append(row)
                            print(f"{row.agent} {row.items} c={row.concurrency} {row.mode}: "
                                  f"wall {row.wall:.1f}s cpu {row.cpu:.1f}s peak "
                                  f"{mib(row.peak_tree)} exit {row.exit_code} "
                                  f"scored-once {row.scored_once}", file=sys.stderr, flush=True)
        finally:
            sb.stop()
    print(table(["agent", "items", "conc", "mode", "wall", "cpu", "peak tree", "exit",
                 "scored once"],
                [[r.agent, str(r.items), str(r.concurrency), r.mode, f"{r.wall:.1f}s",
                  f"{r.cpu:.1f}s", mib(r.peak_tree), str(r.exit_code), str(r.scored_once)]
                 for r in rows]))
    return 0 if all(r.exit_code == 0 and r.scored_once for r in rows) else 1
