"""A scripted worker for the worker-mode unit tests: speaks the protocol by hand (no
helper), misbehaving as ``WORKER_DO`` says for an item whose input contains ``WORKER_ON``.

WORKER_DO: ok (default) | exit (exit 5 without answering) | garbage (a broken protocol line)
| wrong-id (an answer for another item) | stray (print non-protocol lines, then answer)
| hang (never answer) | fail (answer ok=false) | early (exit before reading anything)
| noisy-start (stderr at start-up) | silent-exit (exit 0 at once, never a protocol line).
Logs ``<pid> <item id>`` per item to WORKER_LOG and each item's env/resource to WORKER_ECHO.
"""

from __future__ import annotations

import json
import os
import sys
import time

do = os.environ.get("WORKER_DO", "ok")
on = os.environ.get("WORKER_ON", "")
if do == "noisy-start":
    print("warming up the model", file=sys.stderr, flush=True)
if do == "early":
    print("cannot start: missing model file", file=sys.stderr, flush=True)
    sys.exit(4)
if do == "silent-exit":
    sys.exit(0)
assert os.environ.get("NEENS_WORKER_PROTOCOL") == "1"
assert "NEENS_DATASET_ITEM_ID" not in os.environ  # per-item variables come with each item
out = sys.stdout


def reply(msg: dict) -> None:
    out.write(json.dumps(msg) + "\n")
    out.flush()


for raw in sys.stdin:
    item = json.loads(raw)
    iid = item["id"]
    if os.environ.get("WORKER_LOG"):
        with open(os.environ["WORKER_LOG"], "a") as fh:
            fh.write(f"{os.getpid()} {iid}\n")
    if os.environ.get("WORKER_ECHO"):
        with open(os.environ["WORKER_ECHO"], "a") as fh:
            fh.write(json.dumps({"id": iid, "env": item["env"], "resource": item["resource"],
                                 "input": item["input"]}) + "\n")
    hit = bool(on) and on in item["input"]
    print(f"working on {iid}", file=sys.stderr, flush=True)
    if hit and do == "exit":
        print(f"dying on {iid}", file=sys.stderr, flush=True)
        sys.exit(5)
    if hit and do == "garbage":
        out.write('{"neens": "done", "id": \n')
        out.flush()
        time.sleep(60)
    if hit and do == "wrong-id":
        reply({"neens": "done", "id": "someone-else", "ok": True})
        time.sleep(60)
    if hit and do == "stray":
        out.write("a debug print on stdout\n{not protocol either}\n")
        out.flush()
    if hit and do == "hang":
        time.sleep(3600)
    if hit and do == "fail":
        reply({"neens": "done", "id": iid, "ok": False, "error": "model refused"})
        continue
    reply({"neens": "done", "id": iid, "ok": True, "output": f"answer to {item['input']}"})
