"""Shared helpers of the sharding, chaos and signal tests (real processes only).

- :func:`write_seed`: a small sandbox seed (refund prompts the example agent answers; items
  listed in ``failing`` expect an amount the agent never says, so they fail on purpose).
- :func:`recorded_agent`: the example agent behind ``data/record_agent.sh``, which appends
  each invocation's item id to ``$RECORD_FILE`` (so a test can prove "exactly once").
- :func:`marked_processes`: live processes whose environment carries a marker variable,
  found by scanning ``/proc`` (no psutil), to prove no agent outlives the CLI.
- :func:`start_cli` / :func:`wait_for` / :func:`wait_for_text`: a background CLI process
  whose stderr goes to a file that tests poll (never fixed sleeps).
"""

from __future__ import annotations

import os
import subprocess
import time
import uuid
from collections.abc import Callable
from pathlib import Path

import yaml

from tests.helpers import AGENT, PY, ROOT

DATA = Path(__file__).resolve().parent / "data"
RECORD = DATA / "record_agent.sh"
KEY = "nk_live_scale_0123456789abcdef"


def write_seed(path: Path, items: int, *, failing: tuple[int, ...] = (),
               dataset: str = "ds_scale") -> Path:
    rows = []
    for i in range(1, items + 1):
        amount = f"${i}.{i % 100:02d}"
        expected = "$999.99" if i in failing else amount
        rows.append({"id": f"s_{i:03d}", "input": f"Refund for order {i} ({amount})?",
                     "expected_output": expected})
    seed = {
        "api_keys": [KEY],
        "pricing": {"gpt-4o-mini": {"input": 0.15, "output": 0.6}},
        "judges": [{"id": "j_answer", "metric": "correctness", "kind": "contains"}],
        "datasets": [{"id": dataset, "name": "Scale", "judges": ["j_answer"], "items": rows}],
    }
    path.write_text(yaml.safe_dump(seed, sort_keys=False))
    return path


def recorded_agent(*prefix: str) -> list[str]:
    """``sh record_agent.sh [prefix...] python agent.py`` (prefix: e.g. ``sh -c ...``)."""
    return ["sh", str(RECORD), *prefix, PY, str(AGENT)]


def recorded(path: Path) -> list[str]:
    return path.read_text().split() if path.exists() else []


def marker() -> tuple[str, str]:
    return "NEENS_TEST_MARKER", uuid.uuid4().hex


def marked_processes(name: str, value: str) -> list[int]:
    """Pids of live (non-zombie) processes whose environment has ``name=value``."""
    needle = f"{name}={value}".encode()
    found = []
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            env = Path(f"/proc/{entry.name}/environ").read_bytes()
            stat = Path(f"/proc/{entry.name}/stat").read_text()
        except OSError:
            continue
        if stat.rsplit(")", 1)[-1].split()[0] == "Z":
            continue
        if needle in env.split(b"\0"):
            found.append(int(entry.name))
    return found


def wait_for(predicate: Callable[[], object], timeout: float = 60.0,
             every: float = 0.1) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(every)
    return bool(predicate())


def start_cli(args: list[str], env: dict[str, str], log: Path) -> subprocess.Popen:
    """The CLI in the background; stderr to ``log`` (poll it), stdout piped."""
    errf = log.open("w")
    return subprocess.Popen([PY, "-m", "neens_action", *args], env=env, cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=errf, text=True)


def wait_for_text(log: Path, text: str, proc: subprocess.Popen | None = None,
                  timeout: float = 120.0) -> bool:
    def seen() -> bool:
        if proc is not None and proc.poll() is not None:
            raise AssertionError(f"the CLI exited {proc.returncode} before {text!r}:\n"
                                 f"{log.read_text()}")
        return text in log.read_text()

    return wait_for(seen, timeout)
