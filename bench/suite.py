"""``python -m bench all``: the issue-10 benchmark suite, side by side with the vendor CLI.

Sections (``--only`` picks some; figures are measured in this run, on this machine):

overhead  the runner's own cost with a trivial agent (``cat``) at each ``--concurrency`` over
          each ``--sizes`` item count, against the floor: bare ``xargs -P<c> -n1 cat`` over
          the same prompts (one ``cat`` per item, no runner at all). "phase" is the agent
          phase only (Running... to the last item line); "wall" the whole command (create,
          items, start, poll, gate: server time included). Also the peak RSS of the CLI.
otel      the same with the OpenTelemetry example agent (``examples/agent/agent.py``, a
          Python process per item exporting a trace): ``--otel-items`` items.
latency   seconds from the server finishing the run (its ``finishedAt``) to the CLI's exit,
          against a sandbox with ``--score-delay 3`` (scoring takes 3 s after /start).
startup   ``neens --version``, median of 11.
image     the size the Dockerfile adds over its base (needs the container lab and the built
          image; else reported as not measured).
ingest    sandbox OTLP/JSON ingest: traces of 5 spans posted by 8 threads, spans/s.

Every CLI run uses its own defaults (poll interval 5 s for both; ours starts fast and backs
off). ``--repeat`` takes the median run of each cell.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime
from pathlib import Path

import requests

from bench.harness import (
    KEY,
    ROOT,
    Measured,
    Sandbox,
    editable_cli,
    measure,
    median_of,
    mib,
    ratio,
    secs,
    startup,
    table,
    write_seed,
)

AGENT = ROOT / "examples" / "agent" / "agent.py"
FAST_AGENT = Path(__file__).resolve().parent / "fast_agent.py"
IMAGE = "ghcr.io/neens/eval-action:1.0.0"
SECTIONS = ("overhead", "otel", "latency", "startup", "image", "ingest")


class Suite:
    def __init__(self, args: argparse.Namespace, work: Path) -> None:
        self.args = args
        self.work = work
        self.ours = editable_cli()
        self.vendor = None if args.skip_vendor else [args.vendor]
        if self.vendor and not Path(args.vendor).exists():
            raise SystemExit(f"bench: the vendor CLI is missing at {args.vendor}: python3 -m "
                             "venv .venv-vendor && .venv-vendor/bin/pip install "
                             "neens-eval==0.8.0 (or pass --skip-vendor)")
        self.labels = 0
        self.failures: list[str] = []

    # -- helpers -----------------------------------------------------------------------------

    def label(self, who: str) -> str:
        self.labels += 1
        return f"bench-{who}-{self.labels}"

    def prompts(self, n: int) -> Path:
        """One prompt file per item and a list of their paths (the floor's input)."""
        folder = self.work / f"prompts-{n}"
        listing = self.work / f"prompts-{n}.list"
        if not listing.exists():
            folder.mkdir()
            paths = []
            for i in range(1, n + 1):
                path = folder / str(i)
                path.write_text(f"Refund for order {i} (${i}.00)?")
                paths.append(str(path))
            listing.write_text("\n".join(paths) + "\n")
        return listing

    def cli(self, who: str, sb: Sandbox, dataset: str, c: int, agent: list[str],
            **env: str) -> Measured:
        argv = [*(self.ours if who == "ours" else self.vendor or []), "eval", "run",
                "--create", "--dataset", dataset, "--version-label", self.label(who),
                "--concurrency", str(c), "--", *agent]
        result = measure(who, argv, sb.env(**env))
        # ``cat`` exports no trace: nothing is scored, which our runner calls a run error
        # (exit 2: a measurement of nothing is never a pass); its overhead is what is timed
        allowed = (0, 1, 2) if agent == ["cat"] and who == "ours" else (0, 1)
        if result.exit_code not in allowed:
            self.failures.append(f"{who} {dataset} c={c} exited {result.exit_code}:\n"
                                 f"{result.tail}")
        return result

    def floor(self, n: int, c: int, command: str, sb: Sandbox) -> Measured:
        argv = ["sh", "-c", f"xargs -P {c} -n 1 -a {shlex.quote(str(self.prompts(n)))} "
                            f"{command}"]
        return measure("floor", argv, sb.env())

    def cell(self, n: int, c: int, sb: Sandbox, agent: list[str],
             floor_cmd: str) -> dict[str, Measured]:
        """floor, ours, vendor, interleaved ``--repeat`` times (a busy machine slows all
        three alike); the median run of each."""
        runs: dict[str, list[Measured]] = {"floor": [], "ours": []}
        if self.vendor:
            runs["vendor"] = []
        for _ in range(self.args.repeat):
            runs["floor"].append(self.floor(n, c, floor_cmd, sb))
            runs["ours"].append(self.cli("ours", sb, f"ds_{n}", c, agent))
            if self.vendor:
                runs["vendor"].append(self.cli("vendor", sb, f"ds_{n}", c, agent))
        return {who: median_of(results) for who, results in runs.items()}

    def side_by_side(self, title: str, sb: Sandbox, sizes: list[int], concs: list[int],
                     agent: list[str], floor_cmd: str) -> list[tuple[int, int, dict]]:
        rows, cells = [], []
        for n in sizes:
            for c in concs:
                print(f"bench: {title}: {n} items, concurrency {c} ...", file=sys.stderr)
                got = self.cell(n, c, sb, agent, floor_cmd)
                cells.append((n, c, got))
                f, o, v = got["floor"], got["ours"], got.get("vendor")
                rows.append([str(n), str(c), secs(f.wall),
                             f"{secs(o.phase)} / {secs(o.wall)}",
                             f"{secs(v.phase)} / {secs(v.wall)}" if v else "skipped",
                             f"{ratio(o.phase, f.wall)} / {ratio(o.wall, f.wall)}",
                             f"{ratio(v.phase, f.wall)} / {ratio(v.wall, f.wall)}" if v
                             else "n/a",
                             ratio(o.wall, v.wall) if v else "n/a"])
        print(f"\n{title} (phase / wall; ratios against the floor)")
        print(table(["items", "conc", "floor", "ours", "vendor 0.8.0", "ours/floor",
                     "vendor/floor", "ours/vendor wall"], rows))
        return cells

    # -- sections -----------------------------------------------------------------------------

    def overhead(self) -> None:
        sizes, concs = self.args.sizes, self.args.concurrency
        seed = self.work / "overhead.yaml"
        write_seed(seed, sizes)
        sb = Sandbox(self.work, seed, "--grace", "0", name="overhead")
        try:
            cells = self.side_by_side("runner overhead, trivial agent (cat)", sb, sizes,
                                      concs, ["cat"], "cat")
        finally:
            sb.stop()
        conc = 8 if 8 in concs else concs[0]
        rows = []
        for n, c, got in cells:
            if c == conc:
                v = got.get("vendor")
                rows.append([str(n), mib(got["ours"].peak_root),
                             mib(v.peak_root) if v else "skipped",
                             ratio(got["ours"].peak_root, v.peak_root) if v else "n/a"])
        print(f"\npeak memory of the CLI process (VmHWM), cat agent, concurrency {conc}")
        print(table(["items", "ours", "vendor 0.8.0", "ours/vendor"], rows))

    def otel(self) -> None:
        n, c = self.args.otel_items, self.args.otel_concurrency
        seed = self.work / "otel.yaml"
        write_seed(seed, [n])
        sb = Sandbox(self.work, seed, "--grace", "2", name="otel")
        try:
            inner = "exec " + shlex.join([sys.executable, str(AGENT)]) + ' < "$0"'
            floor = "sh -c " + shlex.quote(inner)
            self.side_by_side("OpenTelemetry example agent", sb, [n], [c],
                              [sys.executable, str(AGENT)], floor)
        finally:
            sb.stop()

    def latency(self) -> None:
        seed = self.work / "latency.yaml"
        write_seed(seed, [self.args.latency_items])
        sb = Sandbox(self.work, seed, "--score-delay", "3", "--grace", "2", name="latency")
        rows = []
        try:
            for who in ["ours", *(["vendor"] if self.vendor else [])]:
                lags = []
                for _ in range(max(3, self.args.repeat)):
                    res = self.cli(who, sb, f"ds_{self.args.latency_items}", 4,
                                   [sys.executable, str(FAST_AGENT)])
                    finished = finished_at(sb, res)
                    if finished is not None:
                        lags.append(res.ended - finished)
                lags.sort()
                rows.append([who, secs(lags[len(lags) // 2]) if lags else "n/a",
                             secs(max(lags)) if lags else "n/a"])
        finally:
            sb.stop()
        print("\nserver finished -> verdict (CLI exit), sandbox --score-delay 3")
        print(table(["runner", "median", "worst"], rows))

    def startup(self) -> None:
        rows = [["ours", f"{startup([*self.ours, '--version']) * 1000:.0f} ms"]]
        if self.vendor:
            rows.append(["vendor 0.8.0", f"{startup([*self.vendor, '--version']) * 1000:.0f} ms"])
        print("\n`neens --version` start-up (median of 11)")
        print(table(["runner", "time"], rows))

    def image(self) -> None:
        sizes = image_sizes(self.args.image)
        print("\nimage size")
        if sizes is None:
            print("  not measured: no container lab, or the image is not built (build it: "
                  "eval \"$(/work/shared/tools/container-lab env)\"; docker build --network "
                  f"host -t {self.args.image} .)")
            return
        image, base = sizes
        print(table(["image", "base", "added"], [[mib(image), mib(base), mib(image - base)]]))

    def ingest(self) -> None:
        n = self.args.ingest_traces
        seed = self.work / "ingest.yaml"
        write_seed(seed, [n])
        sb = Sandbox(self.work, seed, name="ingest")
        try:
            spans, took, captured = ingest_rate(sb, n)
        finally:
            sb.stop()
        print("\nsandbox OTLP/JSON ingest (5-span traces, 8 threads, one item per trace)")
        print(table(["spans", "seconds", "spans/s", "items captured"],
                    [[str(spans), f"{took:.2f}", f"{spans / took:.0f}", f"{captured}/{n}"]]))


def finished_at(sb: Sandbox, res: Measured) -> float | None:
    if not res.run_id:
        return None
    run = requests.get(f"{sb.url}/preprod-evals/{res.run_id}?items=false", timeout=30,
                       headers={"Authorization": f"Bearer {KEY}"}).json()
    stamp = run.get("finishedAt")
    return datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp() if stamp else None


def image_sizes(image: str) -> tuple[int, int] | None:
    lab = Path("/work/shared/tools/container-lab")
    if not lab.exists():
        return None
    try:
        out = subprocess.run([str(lab), "env"], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.SubprocessError):
        return None
    env = dict(os.environ)
    for line in out.stdout.splitlines():
        key, _, value = line.removeprefix("export ").partition("=")
        if key and value:
            env[key.strip()] = shlex.split(value)[0] if value.strip() else ""
    base = env.get("NEENS_BASE_IMAGE", "python:3.12-slim")
    sizes = []
    for name in (image, base):
        try:
            got = subprocess.run(["docker", "image", "inspect", name, "--format",
                                  "{{.Size}}"], capture_output=True, text=True, env=env,
                                 timeout=60)
        except (OSError, subprocess.SubprocessError):
            return None
        if got.returncode != 0 or not got.stdout.strip().isdigit():
            return None
        sizes.append(int(got.stdout.strip()))
    return sizes[0], sizes[1]


def ingest_rate(sb: Sandbox, n: int) -> tuple[int, float, int]:
    headers = {"Authorization": f"Bearer {KEY}", "Content-Type": "application/json"}
    run = requests.post(f"{sb.url}/preprod-evals", json={
        "name": "ingest", "version_label": "ingest", "dataset_id": f"ds_{n}"},
        headers=headers, timeout=120).json()
    bodies = [json.dumps(otlp_trace(run["id"], f"b_{i}", i)).encode() for i in range(1, n + 1)]
    local = __import__("threading").local()

    def post(body: bytes) -> int:
        session = getattr(local, "session", None) or requests.Session()
        local.session = session
        return session.post(f"{sb.url}/v1/traces", data=body, headers=headers,
                            timeout=60).status_code

    begin = time.perf_counter()
    with ThreadPoolExecutor(8) as pool:
        codes = list(pool.map(post, bodies))
    took = time.perf_counter() - begin
    if set(codes) != {200}:
        raise SystemExit(f"bench: OTLP ingest answered {sorted(set(codes))}")
    items = requests.get(f"{sb.url}/preprod-evals/{run['id']}", headers=headers,
                         timeout=120).json().get("items", [])
    return 5 * n, took, sum(1 for i in items if i.get("captured"))


def otlp_trace(run_id: str, item_id: str, seed: int) -> dict:
    now = time.time_ns()
    trace = f"{seed:032x}"
    attrs = [{"key": k, "value": {"stringValue": v}} for k, v in (
        ("service.name", "bench"), ("neens.eval_run_id", run_id),
        ("neens.dataset_item_id", item_id), ("neens.version_label", "ingest"))]
    spans = [{"traceId": trace, "spanId": f"{seed:08x}{k:08x}", "name": name,
              "parentSpanId": "" if k == 0 else f"{seed:08x}{0:08x}",
              "startTimeUnixNano": str(now), "endTimeUnixNano": str(now + 1_000_000 * (k + 1)),
              "attributes": [{"key": "gen_ai.operation.name", "value": {"stringValue": op}},
                             *([{"key": "output.value", "value": {"stringValue":
                                 f"Your refund of ${seed}.00 is approved."}}] if k == 0 else [])]}
             for k, (name, op) in enumerate([("invoke_agent", "invoke_agent"),
                                             ("execute_tool", "execute_tool"),
                                             ("chat", "chat"), ("chat", "chat"),
                                             ("execute_tool", "execute_tool")])]
    return {"resourceSpans": [{"resource": {"attributes": attrs},
                               "scopeSpans": [{"scope": {"name": "bench"}, "spans": spans}]}]}


def parse(argv: list[str]) -> argparse.Namespace:
    ints = lambda text: [int(x) for x in text.split(",") if x.strip()]  # noqa: E731
    ap = argparse.ArgumentParser(prog="python -m bench all", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--only", default=",".join(SECTIONS),
                    help=f"comma-separated sections ({', '.join(SECTIONS)})")
    ap.add_argument("--sizes", type=ints, default=[1000, 10000])
    ap.add_argument("--concurrency", type=ints, default=[1, 8, 32])
    ap.add_argument("--otel-items", type=int, default=200)
    ap.add_argument("--otel-concurrency", type=int, default=8)
    ap.add_argument("--latency-items", type=int, default=20)
    ap.add_argument("--ingest-traces", type=int, default=2000)
    ap.add_argument("--repeat", type=int, default=1, help="median of N runs per cell")
    ap.add_argument("--vendor", default=os.environ.get(
        "NEENS_VENDOR_CLI", str(ROOT / ".venv-vendor" / "bin" / "neens")))
    ap.add_argument("--skip-vendor", action="store_true")
    ap.add_argument("--image", default=IMAGE)
    args = ap.parse_args(argv)
    args.only = [s.strip() for s in args.only.split(",") if s.strip()]
    unknown = set(args.only) - set(SECTIONS)
    if unknown:
        ap.error(f"unknown section(s): {', '.join(sorted(unknown))}")
    return args


def main(argv: list[str]) -> int:
    args = parse(argv)
    print(f"bench: {os.cpu_count()} CPU(s), load average {os.getloadavg()[0]:.1f}",
          file=sys.stderr)
    with tempfile.TemporaryDirectory(prefix="neens-bench-") as tmp:
        suite = Suite(args, Path(tmp))
        for section in args.only:
            getattr(suite, section)()
    if suite.failures:
        print("\nbench: unexpected exit codes:\n" + "\n".join(suite.failures), file=sys.stderr)
        return 1
    return 0
