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
                    "ingest vs the null-server floor", "20/20 captured",
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
