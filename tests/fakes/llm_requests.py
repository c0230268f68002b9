"""How the fake model (tests/fakes/llm_server.py) reads a request: message text, the tools it
offers, whether it asks for code, and a JSON object filled for an output schema."""

from __future__ import annotations

from typing import Any


def _text(content: Any) -> str:
    """A message's text: a string, or the text parts of a list of parts."""
    if isinstance(content, list):
        return " ".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return str(content)


def _output_tool(tools: Any) -> tuple[str, dict[str, Any]] | None:
    """(name, JSON schema) of an offered ``final_result*`` tool (structured output)."""
    for tool in tools if isinstance(tools, list) else []:
        fn = tool.get("function") if isinstance(tool, dict) else None
        if isinstance(fn, dict) and str(fn.get("name", "")).startswith("final_result"):
            return str(fn["name"]), fn.get("parameters") or {}
    return None


def _named_tool(tools: Any, name: str) -> bool:
    for tool in tools if isinstance(tools, list) else []:
        fn = tool.get("function") if isinstance(tool, dict) else None
        if isinstance(fn, dict) and fn.get("name") == name:
            return True
    return False


def _asks_for_code(messages: Any) -> bool:
    """smolagents' CodeAgent: a system prompt that wants code calling final_answer()."""
    for msg in messages or []:
        if isinstance(msg, dict) and msg.get("role") == "system":
            text = _text(msg.get("content", ""))
            if "final_answer(" in text and "<code>" in text:
                return True
    return False


def _fill(schema: dict[str, Any], text: str) -> dict[str, Any]:
    """Arguments for a tool schema: strings get ``text``, numbers 0, booleans true."""
    out: dict[str, Any] = {}
    for key, prop in (schema.get("properties") or {}).items():
        kind = prop.get("type") if isinstance(prop, dict) else None
        out[key] = {"number": 0, "integer": 0, "boolean": True}.get(str(kind), text)
    return out
