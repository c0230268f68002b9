"""``python -m bench scale``: how the sandbox and the CLI scale, side by side in one run.

Sections (``--only`` picks some; every figure is measured in this run, on this machine):

start   the sandbox's ``POST /start`` -> terminal at each ``--start-sizes`` item count: a run
        whose every item has a trace (one span each, posted before the clock starts), then
        ``/start`` and polls (``?items=false``, every 50 ms) until the run is terminal; also
        a run with no trace at all (``--grace 0``: every item is closed as untraced), and
        the final read of the run with its items. The ratio of the largest to the smallest
        size is the growth (linear: 10x for 10x the items).
ingest  OTLP/JSON ingest (5-span traces, 8 client threads) into the sandbox against the
        floor: the same bodies posted by the same client to a server that only reads them
        (``bench/null_server.py``); ``--pairs`` interleaved rounds, the median ratio.
seed    the sandbox's start-up (process start -> listening) with a ``--seed-items`` seed,
        and the seed's parse alone with libyaml's loader and the pure-Python one.
first   seconds from the command's start to its first agent start (the agent stamps the
        time, then runs ``cat``), ours and the vendor's, ``--pairs`` interleaved pairs.
whole   the whole ``eval run --create`` command with ``cat`` as the agent, ours and the
        vendor's, at each ``--whole`` cell (items x concurrency), ``--pairs`` pairs each.
rss     the CLI's peak RSS at each ``--rss-sizes`` item count: the console report, ``--json``
        and ``--junit``, each output checked complete (``bench/scale_rss.py``).

Ratios are medians of per-pair ratios: on a shared machine a pair sees about the same load.
Our CLI runs as users install it (``--ours installed``, bench/installed.py: a wheel install
with bytecode, like the vendor's venv), not the development venv's editable install.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import requests
import yaml

from bench.harness import KEY, ROOT, Sandbox, editable_cli, measure, table, write_seed
from bench.suite import otlp_trace

SECTIONS = ("start", "ingest", "seed", "first", "whole", "rss")
HEADERS = {"Authorization": f"Bearer {KEY}", "Content-Type": "application/json"}
TERMINAL = ("completed", "completed_with_regressions", "failed", "cancelled")
_CRASH = re.compile(r"^Traceback |^\w+(Error|Exception): ", re.MULTILINE)  # a traceback's lines


def _post_all(url: str, bodies: list[bytes], threads: int = 8) -> float:
    """Post every body to ``url`` from ``threads`` keep-alive sessions; seconds taken."""
    local = threading.local()

    def post(body: bytes) -> int:
        session = getattr(local, "session", None) or requests.Session()
        local.session = session
        return session.post(url, data=body, headers=HEADERS, timeout=120).status_code

    begin = time.perf_counter()
    with ThreadPoolExecutor(threads) as pool:
        codes = set(pool.map(post, bodies))
    took = time.perf_counter() - begin
    if codes != {200}:
        raise SystemExit(f"bench: {url} answered {sorted(codes)}")
    return took


def _one_span(run_id: str, item_id: str, i: int) -> bytes:
    now = time.time_ns()
    attrs = [{"key": k, "value": {"stringValue": v}} for k, v in (
        ("neens.eval_run_id", run_id), ("neens.dataset_item_id", item_id))]
    span = {"traceId": f"{i:032x}", "spanId": f"{i:016x}", "name": "invoke_agent",
            "startTimeUnixNano": str(now), "endTimeUnixNano": str(now + 1_000_000),
            "attributes": [{"key": "output.value", "value": {"stringValue": f"${i}.00"}}]}
    return json.dumps({"resourceSpans": [{"resource": {"attributes": attrs}, "scopeSpans": [
        {"scope": {"name": "bench"}, "spans": [span]}]}]}).encode()


def _create(sb: Sandbox, dataset: str) -> str:
    run = requests.post(f"{sb.url}/preprod-evals", headers=HEADERS, timeout=300, json={
        "name": "scale", "version_label": "scale", "dataset_id": dataset}).json()
    return run["id"]


def start_to_terminal(sb: Sandbox, run_id: str) -> dict[str, float]:
    """``/start``, then polls until terminal, then the final read with items."""
    begin = time.perf_counter()
    started = requests.post(f"{sb.url}/preprod-evals/{run_id}/start", headers=HEADERS,
                            timeout=300)
    answered = time.perf_counter() - begin
    if started.status_code != 200:
        raise SystemExit(f"bench: /start answered {started.status_code}: {started.text[:300]}")
    while True:
        run = requests.get(f"{sb.url}/preprod-evals/{run_id}?items=false", headers=HEADERS,
                           timeout=300).json()
        if run["status"] in TERMINAL:
            break
        time.sleep(0.05)
    terminal = time.perf_counter() - begin
    mark = time.perf_counter()
    final = requests.get(f"{sb.url}/preprod-evals/{run_id}", headers=HEADERS, timeout=300)
    return {"answer": answered, "answer_kb": len(started.content) / 1024,
            "terminal": terminal, "final": time.perf_counter() - mark,
            "final_kb": len(final.content) / 1024}


def _scored(sb: Sandbox, run_id: str) -> int:
    """How many of the run's items are scored (its items read once, after the clock)."""
    run = requests.get(f"{sb.url}/preprod-evals/{run_id}", headers=HEADERS, timeout=300).json()
    return sum(1 for i in run.get("items", []) if i.get("passed") is not None)


class Scale:
    def __init__(self, args: argparse.Namespace, work: Path) -> None:
        self.args = args
        self.work = work
        from bench.installed import installed_cli

        self.ours = installed_cli() if args.ours == "installed" else editable_cli()
        self.vendor = None if args.skip_vendor else [args.vendor]
        if self.vendor and not Path(args.vendor).exists():
            raise SystemExit(f"bench: the vendor CLI is missing at {args.vendor} (see "
                             "bench/README.md, or pass --skip-vendor)")
        self.failures: list[str] = []
        self.labels = 0
        self.targets: list[tuple[str, float, float]] = []  # (target, measured ratio, limit)

    def start(self) -> None:
        sizes = self.args.start_sizes
        seed = self.work / "start.yaml"
        write_seed(seed, sizes)
        rows, growth = [], {}
        for case, extra in (("captured", ()), ("no trace", ("--grace", "0"))):
            sb = Sandbox(self.work, seed, *extra, name=f"start-{len(rows)}")
            try:
                for n in sizes:
                    print(f"bench: start: {case}, {n} items ...", file=sys.stderr)
                    rounds = []
                    for _ in range(self.args.start_rounds):  # the median round is shown
                        run_id = _create(sb, f"ds_{n}")
                        if case == "captured":
                            _post_all(f"{sb.url}/v1/traces", [_one_span(run_id, f"b_{i}", i)
                                                              for i in range(1, n + 1)])
                        rounds.append(start_to_terminal(sb, run_id))
                    rounds.sort(key=lambda r: r["terminal"])
                    got = rounds[len(rounds) // 2]
                    growth.setdefault(case, []).append(got["terminal"])
                    rows.append([case, str(n), f"{got['answer']:.2f}s",
                                 f"{got['answer_kb']:.1f} KiB", f"{got['terminal']:.2f}s",
                                 f"{got['final']:.2f}s", f"{got['final_kb']:.0f} KiB"])
            finally:
                sb.stop()
        print(f"\nsandbox POST /start -> terminal (polls ?items=false every 50 ms; the median "
              f"of {self.args.start_rounds} runs per row)")
        print(table(["traces", "items", "/start answer", "answer size", "-> terminal",
                     "final read", "final size"], rows))
        if len(sizes) > 1:
            for case, times in growth.items():
                print(f"  {case}: {sizes[-1]} items take {times[-1] / times[0]:.1f}x the time "
                      f"of {sizes[0]} ({sizes[-1] / sizes[0]:.0f}x the items)")
            self.targets.append((f"/start -> terminal, {sizes[-1]} vs {sizes[0]} items "
                                 "(captured)", growth["captured"][-1] / growth["captured"][0],
                                 1.2 * sizes[-1] / sizes[0]))

    def ingest(self) -> None:
        n = self.args.ingest_traces
        seed = self.work / "ingest.yaml"
        write_seed(seed, [n])
        sb = Sandbox(self.work, seed, name="ingest")
        null = subprocess.Popen([sys.executable, "-m", "bench.null_server"], cwd=ROOT,
                                stdout=subprocess.PIPE, text=True)
        try:
            assert null.stdout is not None
            null_url = null.stdout.readline().split()[2]
            rows, ratios = [], []
            for r in range(self.args.pairs):
                print(f"bench: ingest: round {r + 1} ...", file=sys.stderr)
                run_id = _create(sb, f"ds_{n}")
                bodies = [json.dumps(otlp_trace(run_id, f"b_{i}", i)).encode()
                          for i in range(1, n + 1)]
                floor = _post_all(f"{null_url}/v1/traces", bodies)
                ours = _post_all(f"{sb.url}/v1/traces", bodies)
                ratios.append(ours / floor)
                rows.append([str(r + 1), f"{floor:.2f}s", f"{ours:.2f}s",
                             f"{5 * n / ours:.0f}", f"{ours / floor:.2f}x",
                             f"{_scored(sb, run_id)}/{n}"])
        finally:
            null.kill()
            null.wait()
            sb.stop()
        print(f"\nsandbox OTLP/JSON ingest vs the null-server floor ({n} 5-span traces, "
              "8 threads; scored = items scored once the last post was answered)")
        print(table(["round", "floor", "sandbox", "spans/s", "sandbox/floor", "scored"], rows))
        print(f"  median ratio {statistics.median(ratios):.2f}x")
        self.targets.append(("ingest vs the null-server floor", statistics.median(ratios), 1.3))

    def seed(self) -> None:
        n = self.args.seed_items
        seed = self.work / "big-seed.yaml"
        write_seed(seed, [n])
        text = seed.read_text()
        parse = {}
        for name in ("CSafeLoader", "SafeLoader"):
            loader = getattr(yaml, name, None)
            if loader is not None:
                begin = time.perf_counter()
                yaml.load(text, Loader=loader)
                parse[name] = time.perf_counter() - begin
        begin = time.perf_counter()
        sb = Sandbox(self.work, seed, name="seed")
        up = time.perf_counter() - begin
        sb.stop()
        print(f"\nsandbox start-up with a {n}-item seed ({len(text) / 2**20:.1f} MiB)")
        print(table(["serve -> listening", "parse (libyaml)", "parse (pure Python)"],
                    [[f"{up:.2f}s", f"{parse.get('CSafeLoader', 0):.2f}s",
                      f"{parse['SafeLoader']:.2f}s"]]))

    def _cli(self, who: str, sb: Sandbox, dataset: str, c: int, agent: list[str]) -> float:
        self.labels += 1
        argv = [*(self.ours if who == "ours" else self.vendor or []), "eval", "run",
                "--create", "--dataset", dataset, "--version-label",
                f"scale-{who}-{self.labels}", "--concurrency", str(c), "--", *agent]
        got = measure(who, argv, sb.env())
        # these agents (``cat``) export no trace: nothing is scored, which our runner calls a
        # run error (exit 2: a measurement of nothing is never a pass); the runner is timed
        allowed = (0, 1, 2) if who == "ours" else (0, 1)
        if got.exit_code not in allowed or _CRASH.search(got.tail):  # a crash is no figure
            self.failures.append(f"{who} {dataset} c={c} exited {got.exit_code}:\n{got.tail}")
        return got.wall

    def first(self) -> None:
        seed = self.work / "first.yaml"
        write_seed(seed, [20])
        mark = self.work / "first-agent"
        agent = ["sh", "-c", f"date +%s.%N >> {mark}; exec cat"]
        sb = Sandbox(self.work, seed, name="first")
        times: dict[str, list[float]] = {"ours": [], "vendor": []}
        try:
            for p in range(self.args.pairs):
                print(f"bench: first agent: pair {p + 1} ...", file=sys.stderr)
                for who in ("ours", "vendor") if self.vendor else ("ours",):
                    mark.unlink(missing_ok=True)
                    begin = time.time()
                    self._cli(who, sb, "ds_20", 1, agent)
                    stamps = mark.read_text().split() if mark.exists() else []
                    times[who].append(float(stamps[0]) - begin if stamps else float("nan"))
        finally:
            sb.stop()
        rows = [[who, f"{statistics.median(t):.3f}s", f"{min(t):.3f}s", f"{max(t):.3f}s"]
                for who, t in times.items() if t]
        print(f"\ntime to the first agent start (command start -> agent; {self.args.pairs} "
              "pairs)")
        print(table(["runner", "median", "best", "worst"], rows))
        if times["vendor"]:
            pairs = [o / v for o, v in zip(times["ours"], times["vendor"], strict=True)]
            print(f"  ours/vendor: median of pairs {statistics.median(pairs):.2f}x")
            self.targets.append(("time to the first agent vs the vendor",
                                 statistics.median(pairs), 1.0))

    def summary(self) -> None:
        """Every ratio measured in this run against its target, in one table."""
        if not self.targets:
            return
        rows = [[name, f"{got:.2f}x", f"<= {limit:.2f}x", "yes" if got <= limit else "no"]
                for name, got, limit in self.targets]
        print("\ntargets (ratios measured in this run; medians of pairs)")
        print(table(["target", "measured", "target", "met?"], rows))

    def whole(self) -> None:
        cells = [(int(n), int(c)) for n, c in (x.split("x") for x in self.args.whole)]
        seed = self.work / "whole.yaml"
        write_seed(seed, sorted({n for n, _ in cells}))
        sb = Sandbox(self.work, seed, name="whole")
        rows = []
        try:
            for n, c in cells:
                ours, vendor = [], []
                for p in range(self.args.pairs):
                    print(f"bench: whole: {n} items c={c}, pair {p + 1} ...", file=sys.stderr)
                    ours.append(self._cli("ours", sb, f"ds_{n}", c, ["cat"]))
                    if self.vendor:
                        vendor.append(self._cli("vendor", sb, f"ds_{n}", c, ["cat"]))
                pair = ([o / v for o, v in zip(ours, vendor, strict=True)] if vendor else [])
                if pair:
                    self.targets.append((f"whole command vs the vendor, {n} items c={c}",
                                         statistics.median(pair), 0.9))
                rows.append([str(n), str(c), f"{statistics.median(ours):.2f}s",
                             f"{statistics.median(vendor):.2f}s" if vendor else "skipped",
                             f"{statistics.median(pair):.2f}x" if pair else "n/a"])
        finally:
            sb.stop()
        print(f"\nwhole command, agent cat ({self.args.pairs} interleaved pairs per cell)")
        print(table(["items", "conc", "ours (median)", "vendor 0.8.0 (median)",
                     "ours/vendor (median of pairs)"], rows))


    def rss(self) -> None:
        from bench.scale_rss import run

        run(self)


def parse(argv: list[str]) -> argparse.Namespace:
    ints = lambda text: [int(x) for x in text.split(",") if x.strip()]  # noqa: E731
    ap = argparse.ArgumentParser(prog="python -m bench scale", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--only", default=",".join(SECTIONS),
                    help=f"comma-separated sections ({', '.join(SECTIONS)})")
    ap.add_argument("--start-sizes", type=ints, default=[1000, 10000])
    ap.add_argument("--start-rounds", type=int, default=3,
                    help="runs per size in the start section (the median is shown)")
    ap.add_argument("--ingest-traces", type=int, default=2000)
    ap.add_argument("--seed-items", type=int, default=20000)
    ap.add_argument("--rss-sizes", type=ints, default=[1000, 10000, 50000])
    ap.add_argument("--whole", default="1000x8,10000x32",
                    help="cells ITEMSxCONCURRENCY, comma-separated")
    ap.add_argument("--pairs", type=int, default=7, help="interleaved pairs per figure")
    ap.add_argument("--vendor", default=os.environ.get(
        "NEENS_VENDOR_CLI", str(ROOT / ".venv-vendor" / "bin" / "neens")))
    ap.add_argument("--skip-vendor", action="store_true")
    ap.add_argument("--ours", choices=("installed", "editable"), default="installed",
                    help="our CLI as users install it (a wheel with bytecode, in "
                         ".venv-bench; bench/installed.py) or the development venv's")
    args = ap.parse_args(argv)
    args.only = [s.strip() for s in args.only.split(",") if s.strip()]
    args.whole = [x.strip() for x in args.whole.split(",") if x.strip()]
    unknown = set(args.only) - set(SECTIONS)
    if unknown:
        ap.error(f"unknown section(s): {', '.join(sorted(unknown))}")
    return args


def main(argv: list[str]) -> int:
    args = parse(argv)
    print(f"bench: {os.cpu_count()} CPU(s), load average {os.getloadavg()[0]:.1f}",
          file=sys.stderr)
    with tempfile.TemporaryDirectory(prefix="neens-scale-") as tmp:
        scale = Scale(args, Path(tmp))
        for section in args.only:
            getattr(scale, section)()
        scale.summary()
    print(f"\nload average at the end: {os.getloadavg()[0]:.1f} ({os.cpu_count()} CPUs)")
    if scale.failures:
        print("\nbench: unexpected exit codes:\n" + "\n".join(scale.failures), file=sys.stderr)
        return 1
    return 0
