"""The Anthropic Messages side of the fake model (tests/fakes/llm_server.py): the user's
question as Claude Code sends it, and the server-sent events of a streamed reply."""

from __future__ import annotations

import json
import re
from typing import Any

REMINDER = re.compile(r"<system-reminder>.*?</system-reminder>", re.DOTALL)


def _anthropic_user(req: dict[str, Any]) -> str:
    """The last user message's text, without Claude Code's <system-reminder> blocks."""
    user = ""
    for msg in req.get("messages") or []:
        if not isinstance(msg, dict) or msg.get("role") != "user":
            continue
        content = msg.get("content", "")
        if isinstance(content, list):
            texts = [str(p.get("text", "")) for p in content
                     if isinstance(p, dict) and p.get("type") == "text"]
            if not texts:
                continue  # a tool result: the question is earlier
            content = " ".join(texts)
        user = REMINDER.sub("", str(content)).strip()
    return user


def _sse(events: list[dict[str, Any]]) -> bytes:
    return b"".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n".encode() for e in events)


def anthropic_events(model: str, content: str, prompt_tokens: int) -> list[dict[str, Any]]:
    """The server-sent events of one streamed Messages reply (one text block)."""
    return [
        {"type": "message_start", "message": {
            "id": "msg_fake", "type": "message", "role": "assistant", "model": model,
            "content": [], "stop_reason": None, "stop_sequence": None,
            "usage": {"input_tokens": prompt_tokens, "output_tokens": 1}}},
        {"type": "content_block_start", "index": 0,
         "content_block": {"type": "text", "text": ""}},
        {"type": "content_block_delta", "index": 0,
         "delta": {"type": "text_delta", "text": content}},
        {"type": "content_block_stop", "index": 0},
        {"type": "message_delta", "delta": {"stop_reason": "end_turn", "stop_sequence": None},
         "usage": {"output_tokens": 10}},
        {"type": "message_stop"},
    ]
