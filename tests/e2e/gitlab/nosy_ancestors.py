#!/usr/bin/env python3
"""Run by tests/e2e/test_gitlab_component.py as the component's agent: it reads the
environment of every ancestor it can (``/proc/<pid>/environ``). An ancestor that holds the
Neens key or the GitLab token makes it fail (exit 3, naming the ancestor and the variable,
never the value); otherwise it becomes the example agent and answers."""

from __future__ import annotations

import os
import sys
from pathlib import Path

SECRETS = ("NEENS_API_KEY", "NEENS_GITLAB_TOKEN", "CI_JOB_TOKEN")


def parent_of(pid: int) -> int:
    return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])


def main() -> int:
    found = []
    pid = os.getppid()
    while pid > 0:
        try:
            raw = Path(f"/proc/{pid}/environ").read_bytes()
        except OSError:
            raw = b""
        names = {item.split(b"=", 1)[0].decode() for item in raw.split(b"\0")
                 if b"=" in item and item.split(b"=", 1)[1]}
        comm = Path(f"/proc/{pid}/comm").read_text().strip()
        found += [f"nosy: ancestor {pid} ({comm}) holds {n}" for n in SECRETS if n in names]
        try:
            pid = parent_of(pid)
        except (OSError, ValueError, IndexError):
            break
    if found:
        print("\n".join(found))
        return 3
    agent = Path(__file__).resolve().parents[1] / "examples" / "agent" / "agent.py"
    os.execv(sys.executable, [sys.executable, str(agent)])
    return 0


if __name__ == "__main__":
    sys.exit(main())
