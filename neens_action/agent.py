"""Helpers for agent programs: ``serve(answer)`` runs one agent file both ways.

::

    from neens_action.agent import serve

    def answer(prompt: str) -> str:      # or: async def answer(prompt: str) -> str
        return my_agent.run(prompt)

    if __name__ == "__main__":
        serve(answer)

- Per-item mode (``neens eval run -- python agent.py``): reads the prompt from stdin once,
  prints the answer, exports its spans and exits (1 when ``answer`` raised).
- Worker mode (``neens eval run --workers N -- python agent.py``, which sets
  ``NEENS_WORKER_PROTOCOL=1``): speaks the worker protocol (``docs/worker-protocol.md``) on
  stdin/stdout, one item at a time: the item's ``NEENS_*`` variables and
  ``OTEL_RESOURCE_ATTRIBUTES`` are set in ``os.environ`` while it runs, every span started
  meanwhile (through the global tracer provider, whatever made it) carries the item's
  ``neens.*`` resource attributes, and its spans are exported before it is answered. What
  the agent prints to stdout goes to stderr: stdout belongs to the protocol.

Tracing: when the agent set no global tracer provider, ``serve`` sets one up from the
standard OTLP variables (``OTEL_EXPORTER_OTLP_ENDPOINT``, ...); when it did (set it up
before calling ``serve``), ``serve`` hooks into it.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import os
import sys
import traceback
from collections.abc import Awaitable, Callable, Mapping

from neens_action.agents.item_spans import ItemTracing
from neens_action.agents.worker_protocol import PROTOCOL_VAR

Answer = Callable[[str], "str | Awaitable[str]"]
MAX_OUTPUT = 64 * 1024  # answer text sent back with each item (the runner keeps a tail)


def serve(answer: Answer) -> None:
    """Run ``answer`` for one prompt, or for every item a worker is handed. Exits the
    process with 1 when a one-shot ``answer`` raised (2 on a broken protocol line)."""
    if os.environ.get(PROTOCOL_VAR, "") not in ("", "0"):
        code = _serve_items(answer)
    else:
        code = _serve_once(answer)
    if code:
        raise SystemExit(code)


class _Caller:
    """Calls ``answer`` whether it is sync or async (one event loop for every item)."""

    def __init__(self, answer: Answer) -> None:
        self.answer = answer
        self.loop: asyncio.AbstractEventLoop | None = None

    def __call__(self, prompt: str) -> str:
        result = self.answer(prompt)
        if inspect.isawaitable(result):
            if self.loop is None:
                self.loop = asyncio.new_event_loop()
            result = self.loop.run_until_complete(_await(result))
        return "" if result is None else str(result)

    def close(self) -> None:
        if self.loop is not None:
            self.loop.close()


async def _await(value: Awaitable[str]) -> str:
    return await value


def _serve_once(answer: Answer) -> int:
    prompt = sys.stdin.read() if not sys.stdin.isatty() else ""
    if not prompt.strip():
        prompt = os.environ.get("NEENS_ITEM_INPUT", "")
    tracing = ItemTracing.setup(per_item=False)
    call = _Caller(answer)
    try:
        text = call(prompt)
    except Exception:
        traceback.print_exc()
        return 1
    finally:
        call.close()
        tracing.close()
    print(text, flush=True)
    return 0


def _serve_items(answer: Answer) -> int:
    """The worker loop: one item line in, one answer line out, until stdin ends."""
    sys.stdout.flush()
    proto_out = os.fdopen(os.dup(1), "wb", buffering=0)
    proto_in = os.fdopen(os.dup(0), "rb")
    os.dup2(2, 1)  # anything printed to stdout now lands on stderr
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)  # the agent's own reads of stdin cannot eat items
    os.close(devnull)
    tracing = ItemTracing.setup(per_item=True)
    call = _Caller(answer)
    try:
        for raw in proto_in:
            item = _parse_item(raw)
            if item is None:
                return 2
            proto_out.write(_handle(item, call, tracing))
    finally:
        call.close()
        tracing.close()
    return 0


def _parse_item(raw: bytes) -> dict[str, object] | None:
    try:
        msg = json.loads(raw)
    except ValueError:
        msg = None
    if (not isinstance(msg, dict) or msg.get("neens") != "item"
            or not isinstance(msg.get("id"), str) or not isinstance(msg.get("input"), str)):
        print(f"neens worker: not an item line: {raw[:200]!r}", file=sys.stderr, flush=True)
        return None
    return msg


def _handle(item: Mapping[str, object], call: _Caller, tracing: ItemTracing) -> bytes:
    """Run one item with its environment and resource; returns the answer line."""
    env = item.get("env")
    env = {str(k): str(v) for k, v in env.items()} if isinstance(env, dict) else {}
    env["NEENS_ITEM_INPUT"] = str(item["input"]).replace("\x00", "")
    saved = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    resource = item.get("resource")
    tracing.begin({str(k): str(v) for k, v in resource.items()}
                  if isinstance(resource, dict) else None)
    reply: dict[str, object] = {"neens": "done", "id": item["id"]}
    try:
        reply["output"] = call(str(item["input"]))[:MAX_OUTPUT]
        reply["ok"] = True
    except Exception as exc:
        traceback.print_exc()
        reply.update(ok=False, error=f"{type(exc).__name__}: {exc}"[:2000])
    finally:
        tracing.end()
        sys.stdout.flush()
        sys.stderr.flush()
        for key, old in saved.items():
            if old is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = old
    return json.dumps(reply, ensure_ascii=False).encode("utf-8", errors="replace") + b"\n"
