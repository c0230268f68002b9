"""The worker protocol (``docs/worker-protocol.md``): line-delimited JSON over a worker's
stdin and stdout. Pure: what a message looks like, and how a line from a worker is read.

Runner -> worker, one line per item::

    {"neens": "item", "id": "<item id>", "input": "<prompt>",
     "env": {"NEENS_EVAL_RUN_ID": ..., "OTEL_RESOURCE_ATTRIBUTES": ..., ...},
     "resource": {"neens.eval_run_id": ..., "neens.dataset_item_id": ..., ...}}

Worker -> runner, one line per item, once that item's spans are exported::

    {"neens": "done", "id": "<item id>", "ok": true, "output": "<answer>"}
    {"neens": "done", "id": "<item id>", "ok": false, "error": "<why>"}

A line of the worker's stdout that starts with ``{"neens"`` is a protocol line and must be
a valid answer for the item in hand; any other line is the worker's output (kept like its
stderr, in the item's output tail).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass

from neens_action.agents.correlation import (
    RUN_KEYS,
    SWEEP_KEYS,
    merge_resource_attributes,
    parse_resource_attributes,
)

PROTOCOL_VAR = "NEENS_WORKER_PROTOCOL"  # set to "1" in every worker's environment
PROTOCOL_VERSION = "1"
PREFIX = b'{"neens"'
MAX_LINE = 1024 * 1024  # longest protocol line a worker may write
# What the per-item mode sets per invocation (NEENS_* variables), sent with each item instead.
ITEM_VARS = (
    "NEENS_EVAL_RUN_ID", "NEENS_VERSION_LABEL", "NEENS_DATASET_ITEM_ID",
    "NEENS_SWEEP_ID", "NEENS_SWEEP_ARM", "NEENS_SWEEP_REP", "NEENS_EVAL_MODEL",
    "OTEL_RESOURCE_ATTRIBUTES",
)
_NEENS_KEYS = frozenset(RUN_KEYS + SWEEP_KEYS)


class ProtocolError(Exception):
    """A worker wrote a protocol line that is not a valid answer for the item in hand."""


@dataclass(frozen=True)
class Reply:
    item_id: str
    ok: bool
    output: str = ""
    error: str = ""


def item_message(item_id: str, text: str, env: Mapping[str, str]) -> bytes:
    """The line that hands one item to a worker; ``env`` is the item's whole per-item-mode
    environment (only its per-item variables and neens resource attributes are sent)."""
    item_env = {k: env[k] for k in ITEM_VARS if k in env}
    resource = {k: v for k, v in parse_resource_attributes(env.get("OTEL_RESOURCE_ATTRIBUTES"))
                if k in _NEENS_KEYS}
    msg = {"neens": "item", "id": item_id, "input": text, "env": item_env,
           "resource": resource}
    return json.dumps(msg, ensure_ascii=False).encode("utf-8", errors="replace") + b"\n"


def worker_env(env: Mapping[str, str]) -> dict[str, str]:
    """A worker's own environment from one item's: the per-item variables dropped, the
    user's own resource attributes kept, ``NEENS_WORKER_PROTOCOL=1`` added."""
    out = {k: v for k, v in env.items() if k not in ITEM_VARS and k != "NEENS_ITEM_INPUT"}
    own = [(k, v) for k, v in parse_resource_attributes(env.get("OTEL_RESOURCE_ATTRIBUTES"))
           if k not in _NEENS_KEYS]
    if own:
        out["OTEL_RESOURCE_ATTRIBUTES"] = merge_resource_attributes("", own)
    out[PROTOCOL_VAR] = PROTOCOL_VERSION
    return out


def is_protocol_line(line: bytes) -> bool:
    return line.lstrip().startswith(PREFIX)


def parse_reply(line: bytes, item_id: str) -> Reply:
    """Decode a protocol line written while ``item_id`` was in hand; ProtocolError if it is
    not a valid answer for that item."""
    try:
        msg = json.loads(line)
    except ValueError as exc:
        raise ProtocolError(f"a protocol line that is not JSON ({exc.msg})") from None
    if not isinstance(msg, dict):
        raise ProtocolError("a protocol line that is not a JSON object")
    kind = msg.get("neens")
    if kind != "done":
        raise ProtocolError(f"unknown message {str(kind)[:40]!r} (expected 'done')")
    got = msg.get("id")
    if got != item_id:
        raise ProtocolError(f"an answer for item {str(got)[:200]!r} while {item_id!r} was "
                            "in hand")
    ok = msg.get("ok")
    if not isinstance(ok, bool):
        raise ProtocolError("'ok' must be true or false")
    output, error = msg.get("output", ""), msg.get("error", "")
    if not isinstance(output, str) or not isinstance(error, str):
        raise ProtocolError("'output' and 'error' must be strings")
    return Reply(item_id=item_id, ok=ok, output=output, error=error)


class LineBuffer:
    """Splits what a worker writes into lines. A line longer than ``cap`` comes out in
    pieces (``partial`` True), so it can never grow without bound."""

    def __init__(self, cap: int = MAX_LINE) -> None:
        self.cap = cap
        self.buf = bytearray()

    def feed(self, chunk: bytes) -> list[tuple[bytes, bool]]:
        """Add ``chunk``; returns the lines it completed as ``(line, partial)``."""
        self.buf += chunk
        out: list[tuple[bytes, bool]] = []
        while True:
            nl = self.buf.find(b"\n")
            if nl < 0:
                break
            out.append((bytes(self.buf[:nl + 1]), False))
            del self.buf[:nl + 1]
        if len(self.buf) > self.cap:
            out.append((bytes(self.buf), True))
            self.buf.clear()
        return out

    def rest(self) -> bytes:
        """What is left without a line end (the worker's last words before it exited)."""
        rest = bytes(self.buf)
        self.buf.clear()
        return rest
