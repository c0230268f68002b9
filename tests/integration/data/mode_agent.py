#!/usr/bin/env python3
"""Test wrapper around the example agent (examples/agent/agent.py).

It picks the example agent's ``AGENT_MODE`` per invocation, then replaces itself with the
example agent (same stdin, same environment otherwise):

* ``AGENT_MODE_FILE``: a file whose first line is the mode (good, bad, leaky, ...). Tests edit
  it between watch iterations to switch the agent's behaviour; a missing or empty file means
  ``$AGENT_MODE`` (default good).
* ``AGENT_SILENT_RE``: a regular expression; an item whose input matches it runs in
  ``silent`` mode (answers, exports no trace), so its item is never scored.

Extra command-line arguments are handed to the example agent, which ignores them.
"""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

AGENT = Path(__file__).resolve().parents[3] / "examples" / "agent" / "agent.py"


def pick_mode(environ: dict[str, str], prompt: str) -> str:
    mode = environ.get("AGENT_MODE", "").strip() or "good"
    path = environ.get("AGENT_MODE_FILE", "").strip()
    if path:
        try:
            first = Path(path).read_text(encoding="utf-8").strip().splitlines()
        except OSError:
            first = []
        if first and first[0].strip():
            mode = first[0].strip()
    silent = environ.get("AGENT_SILENT_RE", "")
    if silent and re.search(silent, prompt):
        mode = "silent"
    return mode


def main() -> None:
    env = dict(os.environ)
    env["AGENT_MODE"] = pick_mode(env, env.get("NEENS_ITEM_INPUT", ""))
    # extra arguments are passed on (the example agent ignores them): tests use one as a tag
    # to find their agent processes in /proc
    os.execve(sys.executable, [sys.executable, str(AGENT), *sys.argv[1:]], env)


if __name__ == "__main__":
    main()
