"""``neens_action.agent.serve``: one file, both modes (real processes, no tracing set up)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

AGENT = r'''
import asyncio, os, sys
from neens_action.agent import serve

async def answer(prompt):
    print("stray print", flush=True)  # must not reach the protocol
    if "boom" in prompt:
        raise ValueError("boom asked")
    await asyncio.sleep(0)
    return f"{prompt.upper()} item={os.environ.get('NEENS_DATASET_ITEM_ID')}"

serve(answer)
'''


def env(**extra: str) -> dict[str, str]:
    out = {k: v for k, v in os.environ.items() if not k.startswith(("OTEL_", "NEENS_"))}
    out.update(extra)
    return out


def test_one_shot_mode_reads_stdin_once(tmp_path):
    agent = tmp_path / "agent.py"
    agent.write_text(AGENT)
    done = subprocess.run([sys.executable, str(agent)], input="hi", capture_output=True,
                          text=True, env=env(NEENS_DATASET_ITEM_ID="it_9"), timeout=60)
    assert done.returncode == 0 and done.stdout == "stray print\nHI item=it_9\n"
    boom = subprocess.run([sys.executable, str(agent)], input="boom", capture_output=True,
                          text=True, env=env(), timeout=60)
    assert boom.returncode == 1 and "ValueError: boom asked" in boom.stderr


def test_worker_mode_answers_each_item_with_its_environment(tmp_path):
    agent = tmp_path / "agent.py"
    agent.write_text(AGENT)
    items = [{"neens": "item", "id": f"it_{n}", "input": text,
              "env": {"NEENS_DATASET_ITEM_ID": f"it_{n}"}, "resource": {}}
             for n, text in enumerate(["a", "boom", "c"])]
    done = subprocess.run([sys.executable, str(agent)], capture_output=True, text=True,
                          input="".join(json.dumps(i) + "\n" for i in items),
                          env=env(NEENS_WORKER_PROTOCOL="1"), timeout=60)
    assert done.returncode == 0, done.stderr
    replies = [json.loads(line) for line in done.stdout.splitlines()]
    assert replies == [
        {"neens": "done", "id": "it_0", "output": "A item=it_0", "ok": True},
        {"neens": "done", "id": "it_1", "ok": False, "error": "ValueError: boom asked"},
        {"neens": "done", "id": "it_2", "output": "C item=it_2", "ok": True},
    ]
    assert done.stderr.count("stray print") == 3 and "Traceback" in done.stderr
    bad = subprocess.run([sys.executable, str(agent)], capture_output=True, text=True,
                         input="not json\n", env=env(NEENS_WORKER_PROTOCOL="1"), timeout=60)
    assert bad.returncode == 2 and "not an item line" in bad.stderr and bad.stdout == ""
