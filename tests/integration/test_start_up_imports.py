"""What ``neens eval run`` imports before its first agent starts: what the run needs, not the
sweep, suite and noise-aware code, the report or the verdict (they come after the agents).
Measured on the real CLI against the sandbox: an audit hook records every import with its
time, and the agent stamps its own start."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from tests.helpers import PY, ROOT, start_sandbox

# imported only when a run uses them, or once the agents are done
LATER = ("neens_action.noise", "neens_action.flows.repeats", "neens_action.flows.history",
         "neens_action.api.sweeps", "neens_action.api.suites",
         "neens_action.api.sweep_comparison", "neens_action.report.build",
         "neens_action.report.render", "neens_action.verdict", "neens_action.policy")

BOOT = """
import atexit, json, runpy, sys, time
seen = []
sys.addaudithook(lambda event, args: event == "import" and seen.append((time.time(), args[0])))
out = sys.argv[1]
atexit.register(lambda: open(out, "w").write(json.dumps(seen)))
sys.argv = ["neens", *sys.argv[2:]]
runpy.run_module("neens_action", run_name="__main__", alter_sys=True)
"""


def _imports_before_the_first_agent(tmp_path: Path, *extra: str) -> tuple[set[str], set[str]]:
    sb = start_sandbox(tmp_path)
    mark, seen = tmp_path / "agent-started", tmp_path / "imports.json"
    try:
        proc = subprocess.run(
            [PY, "-c", BOOT, str(seen), "eval", "run", "--create", "--dataset", "ds_refunds",
             "--version-label", "imports", *extra, "--", "sh", "-c",
             f"date +%s.%N >> {mark}; exec cat"],
            env=sb.agent_env(), capture_output=True, text=True, timeout=120, cwd=ROOT)
    finally:
        sb.stop()
    assert proc.returncode in (0, 1, 2) and "Traceback" not in proc.stderr, proc.stderr
    first = min(float(t) for t in mark.read_text().split())
    events = json.loads(seen.read_text())
    return ({m for t, m in events if t < first}, {m for t, m in events if t >= first})


def _under(modules: set[str], prefixes: tuple[str, ...]) -> set[str]:
    return {m for m in modules if m.startswith(prefixes)}


def test_eval_run_starts_its_agents_before_the_report_sweeps_and_noise_code(tmp_path):
    before, after = _imports_before_the_first_agent(tmp_path)
    assert "neens_action.api.client" in before and "requests" in before  # the measure is real
    assert _under(before, LATER) == set()
    assert "neens_action.report.build" in after  # the report is made after the agents


def test_a_noise_aware_run_imports_its_statistics_before_the_agents(tmp_path):
    before, _ = _imports_before_the_first_agent(tmp_path, "--baseline-runs", "2")
    assert "neens_action.flows.repeats" in before and "neens_action.noise" in before
