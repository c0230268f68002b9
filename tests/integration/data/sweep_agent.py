#!/usr/bin/env python3
"""Test wrapper around the example agent (examples/agent/agent.py) for model sweeps.

Picks the example agent's ``AGENT_MODE`` from the arm's model, then replaces itself with the
example agent (same pid, stdin and environment otherwise):

* ``SWEEP_BAD_MODELS``: comma-separated models whose arm answers in ``bad`` mode;
* ``SWEEP_AGENT_MODE``: the mode of every other invocation (default ``good``; e.g.
  ``ignore-model``, ``slow``, ``crash``);
* ``SWEEP_AGENT_LOG``: append ``pid run arm rep model item mode`` (tab-separated) per call.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

AGENT = Path(__file__).resolve().parents[3] / "examples" / "agent" / "agent.py"


def main() -> None:
    env = dict(os.environ)
    model = env.get("NEENS_EVAL_MODEL", "")
    bad = {m.strip() for m in env.get("SWEEP_BAD_MODELS", "").split(",") if m.strip()}
    mode = "bad" if model in bad else (env.get("SWEEP_AGENT_MODE", "").strip() or "good")
    env["AGENT_MODE"] = mode
    log = env.get("SWEEP_AGENT_LOG")
    if log:
        fields = [str(os.getpid()), env.get("NEENS_EVAL_RUN_ID", ""),
                  env.get("NEENS_SWEEP_ARM", ""), env.get("NEENS_SWEEP_REP", ""), model,
                  env.get("NEENS_DATASET_ITEM_ID", ""), mode]
        with open(log, "a", encoding="utf-8") as fh:
            fh.write("\t".join(fields) + "\n")
    os.execve(sys.executable, [sys.executable, str(AGENT)], env)


if __name__ == "__main__":
    main()
