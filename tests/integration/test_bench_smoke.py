"""``python -m bench all`` runs a tiny configuration end to end (every section, the vendor CLI
side by side): a smoke test of the harness, not a timed test (no figure is asserted)."""

from __future__ import annotations

import subprocess

import pytest

from tests.helpers import PY, ROOT


@pytest.mark.timeout(600)
def test_bench_suite_runs_a_tiny_configuration():
    proc = subprocess.run(
        [PY, "-m", "bench", "all", "--sizes", "12", "--concurrency", "2", "--otel-items", "3",
         "--otel-concurrency", "2", "--latency-items", "3", "--ingest-traces", "20"],
        cwd=ROOT, capture_output=True, text=True, timeout=540)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    out = proc.stdout
    for heading in ("runner overhead, trivial agent (cat)", "peak memory of the CLI process",
                    "OpenTelemetry example agent", "server finished -> verdict",
                    "`neens --version` start-up", "image size", "sandbox OTLP/JSON ingest"):
        assert heading in out, (heading, out)
    assert "vendor 0.8.0" in out and "Traceback" not in proc.stderr
    assert "20/20" in out  # every ingested trace was captured by the sandbox


@pytest.mark.timeout(600)
def test_bench_scale_runs_a_tiny_configuration():
    proc = subprocess.run(
        [PY, "-m", "bench", "scale", "--start-sizes", "10,30", "--ingest-traces", "20",
         "--seed-items", "50", "--whole", "12x2", "--pairs", "1"],
        cwd=ROOT, capture_output=True, text=True, timeout=540)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    out = proc.stdout
    for heading in ("sandbox POST /start -> terminal", "30 items take",
                    "ingest vs the null-server floor", "20/20",
                    "start-up with a 50-item seed", "time to the first agent start",
                    "ours/vendor: median of pairs", "whole command, agent cat"):
        assert heading in out, (heading, out)
    assert "Traceback" not in proc.stderr


def test_bench_refuses_unknown_sections_and_benchmarks():
    bad = subprocess.run([PY, "-m", "bench", "all", "--only", "nope"], cwd=ROOT,
                         capture_output=True, text=True, timeout=60)
    assert bad.returncode == 2 and "unknown section" in bad.stderr
    unknown = subprocess.run([PY, "-m", "bench", "fast"], cwd=ROOT, capture_output=True,
                             text=True, timeout=60)
    assert unknown.returncode == 2 and "known: all, pull, scale" in unknown.stderr


def test_bench_noise_quick_prints_the_table_and_the_targets():
    """The noise-aware verdict's simulation (bench/noise.py) runs its smoke grid: the table
    and the target lines come out (no figure is asserted: 200 PRs per cell is a smoke run)."""
    proc = subprocess.run([PY, "-m", "bench", "noise", "--quick", "--prs", "40"], cwd=ROOT,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    out = proc.stdout
    assert "A/A false block" in out and "hard detected" in out and "invocations/PR" in out
    rows = [line for line in out.splitlines() if line.strip().startswith("15 %")]
    assert len(rows) == 2 and "auto" in rows[1], out
    assert "K = 3, N = 5, 30 flaky at p = 0.5: A/A false block" in out
    assert "auto, same cell:" in out and "of fixed K = 3's 600" in out
    bad = subprocess.run([PY, "-m", "bench", "noise", "--prs", "0"], cwd=ROOT,
                         capture_output=True, text=True, timeout=60)
    assert bad.returncode == 2 and "at least 1" in bad.stderr
    cell = subprocess.run([PY, "-m", "bench", "noise", "--cells", "3:x"], cwd=ROOT,
                          capture_output=True, text=True, timeout=60)
    assert cell.returncode == 2 and "bench noise:" in cell.stderr and "Traceback" not in cell.stderr


@pytest.mark.timeout(900)
def test_bench_noise_e2e_runs_a_tiny_configuration():
    """``python -m bench noise-e2e`` (bench/noise_e2e.py) through the sandbox with the seeded
    worker-mode agent: main runs, then A/A and regressed PRs per configuration, and the table
    (no figure is asserted but what the design fixes: K = 3 replays every item 3 times)."""
    proc = subprocess.run(
        [PY, "-m", "bench", "noise-e2e", "--items", "12", "--flaky", "2", "--prs", "1",
         "--main-runs", "2", "--configs", "k3,k1"],
        cwd=ROOT, capture_output=True, text=True, timeout=840)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    out = proc.stdout
    assert "main run 2/2" in out and "k3 regressed 1/1: exit 1 blocked regressed" in out, out
    assert "invocations 36" in out  # 12 items x 3 repetitions
    rows = [line for line in out.splitlines() if line.startswith("  K = ")]
    assert len(rows) == 2 and "K = 3, N = 2" in rows[0] and "K = 1, N = 1 (today)" in rows[1]
    assert "A/A blocked" in out and "invocations/PR" in out and "Traceback" not in proc.stderr
    bad = subprocess.run([PY, "-m", "bench", "noise-e2e", "--configs", "k9"], cwd=ROOT,
                         capture_output=True, text=True, timeout=60)
    assert bad.returncode == 2 and "bench noise-e2e:" in bad.stderr
