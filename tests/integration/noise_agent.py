#!/usr/bin/env python3
"""A seeded nondeterministic agent for the noise tests: for each prompt it picks the example
agent's mode (good or bad) from hash(prompt, NOISE_SEED, how many times this sandbox has seen
this prompt with this seed before), bad with the
probability NOISE_P for orders listed in NOISE_FLAKY and always for orders in NOISE_BROKEN,
then runs the example agent (real OpenTelemetry SDK) on the prompt. In bad mode the example
agent gets odd-numbered orders wrong (examples/agent/answers.py).

Started with ``NEENS_WORKER_PROTOCOL=1`` (``--workers N``) it is a warm worker: the example
worker (examples/agent/worker.py, served by ``neens_action.agent.serve``) answers each item
in the mode drawn the same way. ``NOISE_STATE_DIR`` (default: a folder per sandbox port under
the temporary directory) holds the repetition counters."""

from __future__ import annotations

import hashlib
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

AGENT = Path(__file__).resolve().parents[2] / "examples" / "agent" / "agent.py"


def main() -> int:
    if os.environ.get("NEENS_WORKER_PROTOCOL") == "1":
        return _serve()
    prompt = sys.stdin.read()
    env = dict(os.environ, AGENT_MODE="bad" if _bad(prompt) else "good")
    return subprocess.run([sys.executable, str(AGENT)], input=prompt, text=True,
                          env=env).returncode


def _serve() -> int:
    """Worker mode: the example worker's ``respond`` in the drawn mode, item by item."""
    sys.path.insert(0, str(AGENT.parent))
    import worker  # the example worker: sets its tracer provider up at import

    from neens_action.agent import serve

    def respond(prompt: str) -> str:
        os.environ["AGENT_MODE"] = "bad" if _bad(prompt) else "good"
        return worker.respond(prompt)

    serve(respond)
    return 0


def _bad(prompt: str) -> bool:
    """Bad mode for this prompt and its repetition index (see the module docstring)."""
    order = re.search(r"order (\d+)", prompt)
    number = order.group(1) if order else ""
    flaky = set(filter(None, os.environ.get("NOISE_FLAKY", "").split(",")))
    broken = set(filter(None, os.environ.get("NOISE_BROKEN", "").split(",")))
    seed = os.environ.get("NOISE_SEED", "")
    key = f"{prompt}|{seed}|{_nth(prompt, seed)}"
    draw = int(hashlib.sha256(key.encode()).hexdigest()[:8], 16) / 0xFFFFFFFF
    return number in broken or (number in flaky and draw < float(os.environ.get("NOISE_P",
                                                                              "0.5")))


def _nth(prompt: str, seed: str) -> int:
    """How many times this prompt was answered with this seed against this sandbox before (the
    repetition index, claimed atomically): draws are the same whatever the run ids are."""
    where = os.environ.get("OTEL_EXPORTER_OTLP_ENDPOINT", "").rsplit(":", 1)[-1].strip("/")
    state = os.environ.get("NOISE_STATE_DIR")
    folder = Path(state) if state else Path(tempfile.gettempdir()) / f"neens-noise-agent-{where}"
    folder.mkdir(parents=True, exist_ok=True)
    stem = hashlib.sha256(f"{prompt}|{seed}".encode()).hexdigest()[:16]
    n = 0
    while True:
        try:
            os.close(os.open(folder / f"{stem}.{n}", os.O_CREAT | os.O_EXCL | os.O_WRONLY))
            return n
        except FileExistsError:
            n += 1


if __name__ == "__main__":
    sys.exit(main())
