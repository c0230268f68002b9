"""The benchmark's agent: ``examples/agent/worker.py`` (the OpenTelemetry example agent served
by ``neens_action.agent.serve``) after ``WARM_STARTUP_S`` seconds of CPU at start-up, the way
importing a framework costs CPU (0 = the example agent as is)."""

from __future__ import annotations

import os
import runpy
import time
from pathlib import Path

_burn = float(os.environ.get("WARM_STARTUP_S", "0") or 0)
_until = time.process_time() + _burn
while time.process_time() < _until:  # CPU, not a sleep: start-up is CPU-bound
    sum(range(1000))

runpy.run_path(str(Path(__file__).resolve().parent.parent / "examples" / "agent" / "worker.py"),
               run_name="__main__")
