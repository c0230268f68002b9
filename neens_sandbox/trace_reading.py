"""Read one item's answer, model, tokens and steps from what its agent emitted, by convention.

The conventions are listed in one table, ``docs/trace-conventions.md``; this module follows it:

* a span's **kind** (:func:`span_kind`): a model call, a tool execution, or neither, from
  ``openinference.span.kind``, ``traceloop.span.kind`` / ``llm.request.type``, the Vercel AI
  SDK's ``ai.operationId`` / ``operation.name``, ``gen_ai.operation.name``, or Pydantic AI's
  ``gen_ai.tool.name``. **Steps** = model calls + tool executions;
* **tokens** (:func:`usage_of`) from the spans that carry usage and have no descendant that
  does: an agent's aggregate over its calls is never added to the calls themselves;
* the **model** (:func:`model_of`) of each span that carries usage (else of each model call);
* the **answer** (:func:`answer_of`, :func:`event_answer`): explicit answers first (a root's
  ``neens.output``, Pydantic AI's ``final_result``, the text of the last model call or of a
  root's ``gen_ai.output.messages``, ``llm.output_messages``, ``ai.response.text``, GenAI
  events on spans or in OTLP log records), then ``output.value`` as a fallback. A tool call
  named ``final_result*`` (Pydantic AI's structured output) answers with its arguments.
  ``traceloop.entity.*`` (the serialized state of a workflow task) is never an answer.
  Claude Code's own telemetry: ``span.type`` ``llm_request`` / ``tool`` spans, and the answer
  in the ``claude_code.assistant_response`` log record (``response``);
* the **final answer of an agent run** (:func:`final_answer_of`): a root OpenInference agent
  span's plain ``output.value``, or a ``final_answer`` tool's (smolagents), preferred over a
  model's intermediate text by ``sessions``. Which spans are not counted as model calls
  (one call traced twice, a hollow model span): ``calls``.
"""

from __future__ import annotations

import json
import re
from typing import Any

Attrs = dict[str, Any]

MODEL_OPS = {"chat", "text_completion", "completion", "generate_content", "embeddings",
             "responses"}
TOOL_OPS = {"execute_tool"}
VERCEL_CALLS = ("doGenerate", "doStream")
INPUT_TOKENS = ("gen_ai.usage.input_tokens", "gen_ai.usage.prompt_tokens",
                "llm.token_count.prompt", "ai.usage.inputTokens", "ai.usage.promptTokens")
OUTPUT_TOKENS = ("gen_ai.usage.output_tokens", "gen_ai.usage.completion_tokens",
                 "llm.token_count.completion", "ai.usage.outputTokens",
                 "ai.usage.completionTokens")
MODEL_KEYS = ("gen_ai.response.model", "gen_ai.request.model", "llm.model_name",
              "ai.response.model", "ai.model.id")
CLAUDE_CODE_KINDS = {"llm_request": "llm", "tool": "tool"}
# Claude Code's answer event (a log record named by its event.name, the body its full name);
# without OTEL_LOG_ASSISTANT_RESPONSES its text is this placeholder, which is no answer
CLAUDE_CODE_ANSWER = ("claude_code.assistant_response", "assistant_response")
REDACTED = "<REDACTED>"
ANSWER_EVENTS = {"gen_ai.client.inference.operation.details", "gen_ai.choice",
                 "gen_ai.content.completion"}


def num(value: Any) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return value
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


def span_kind(attrs: Attrs) -> str | None:
    """``"llm"`` (a model call), ``"tool"`` (a tool execution) or None (anything else)."""
    oi = attrs.get("openinference.span.kind")
    if isinstance(oi, str):
        return {"LLM": "llm", "TOOL": "tool"}.get(oi.upper())
    tl = attrs.get("traceloop.span.kind")
    if isinstance(tl, str):
        return "tool" if tl == "tool" else None
    if attrs.get("llm.request.type"):
        return "llm"
    claude_code = attrs.get("span.type")  # Claude Code's own spans
    if claude_code in CLAUDE_CODE_KINDS:
        return CLAUDE_CODE_KINDS[claude_code]
    vercel = attrs.get("ai.operationId") or attrs.get("operation.name")
    if isinstance(vercel, str) and vercel.startswith("ai."):
        op = vercel.split()[0]
        if op.endswith(VERCEL_CALLS):
            return "llm"
        return "tool" if op == "ai.toolCall" else None
    op = attrs.get("gen_ai.operation.name")
    if isinstance(op, str):
        return "llm" if op in MODEL_OPS else "tool" if op in TOOL_OPS else None
    if attrs.get("gen_ai.tool.name"):
        return "tool"
    return None


def usage_of(attrs: Attrs) -> tuple[float | None, float | None]:
    """(input, output) tokens recorded on one span (None where absent)."""
    i = next((num(attrs[k]) for k in INPUT_TOKENS if k in attrs), None)
    o = next((num(attrs[k]) for k in OUTPUT_TOKENS if k in attrs), None)
    if i is None and o is None and attrs.get("span.type") == "llm_request":
        i, o = num(attrs.get("input_tokens")), num(attrs.get("output_tokens"))
    return i, o


def model_of(attrs: Attrs) -> tuple[str | None, str | None]:
    """(response model, request model) of one span; either may be None."""
    response = attrs.get("gen_ai.response.model") or attrs.get("ai.response.model")
    request = (attrs.get("gen_ai.request.model") or attrs.get("llm.model_name")
               or attrs.get("ai.model.id"))
    return (str(response) if response else None), (str(request) if request else None)


# -- answer text ----------------------------------------------------------------------------
def _parsed(value: Any) -> Any:
    if isinstance(value, str):
        try:
            return json.loads(value)
        except ValueError:
            return value
    return value


def _dumps(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, sort_keys=True)


def _part_text(part: Any) -> str | None:
    if isinstance(part, str):
        return part
    if not isinstance(part, dict):
        return None
    kind = part.get("type")
    if kind in ("tool_call", "tool-call"):
        name = str(part.get("name") or part.get("toolName") or "")
        if name.startswith("final_result"):
            return _dumps(_parsed(part.get("arguments", part.get("args", part.get("input")))))
        return None
    for key in ("content", "text"):
        if isinstance(part.get(key), str):
            return part[key]
    return None


def messages_text(value: Any) -> str | None:
    """Text of a list of GenAI messages (``parts`` or ``content``), or of one message."""
    data = _parsed(value)
    if isinstance(value, str) and data is value:
        return value
    if isinstance(data, dict):
        data = [data]
    if not isinstance(data, list):
        return None
    texts: list[str] = []
    for msg in data:
        if isinstance(msg, dict) and isinstance(msg.get("message"), dict):
            msg = msg["message"]  # a gen_ai.choice body
        if not isinstance(msg, dict):
            text = _part_text(msg)
            if text is not None:
                texts.append(text)
            continue
        content = msg.get("content")
        if content is None and not msg.get("parts") and isinstance(msg.get("text"), str):
            texts.append(msg["text"])  # a list of content blocks (Strands' gen_ai.choice)
        elif isinstance(content, str):
            texts.append(content)
        elif isinstance(content, list):
            texts.extend(t for t in map(_part_text, content) if t is not None)
        texts.extend(t for t in map(_part_text, msg.get("parts") or []) if t is not None)
    return "\n".join(texts) if texts else None


# OpenInference's message parts: ``message.contents.M.message_content.text``, and
# ``message.content.M`` (a list of text blocks, as the Claude Agent SDK instrumentor writes)
PART_KEY = re.compile(r"message\.content(?:s\.(\d+)\.message_content\.text|\.(\d+))$")


def _indexed_text(attrs: Attrs, prefix: str, whole: str) -> str | None:
    """The last indexed message's text, e.g. ``llm.output_messages.0.message.content`` (or
    its parts in order)."""
    found: dict[int, dict[int, str]] = {}
    for key, value in attrs.items():
        if not key.startswith(prefix) or not isinstance(value, str):
            continue
        head, _, rest = key[len(prefix):].partition(".")
        if not head.isdigit():
            continue
        part = PART_KEY.match(rest) if prefix == "llm.output_messages." else None
        if rest == whole:
            found.setdefault(int(head), {})[-1] = value
        elif part:
            found.setdefault(int(head), {})[int(part.group(1) or part.group(2))] = value
    if not found:
        return None
    last = found[max(found)]
    return last[-1] if -1 in last else "\n".join(last[k] for k in sorted(last))


def answer_of(attrs: Attrs, *, root: bool) -> str | None:
    """The answer one span states by a content convention (not ``output.value``)."""
    if root and "neens.output" in attrs:
        return _dumps(attrs["neens.output"])
    if "final_result" in attrs:  # Pydantic AI's agent run span
        return _dumps(_parsed(attrs["final_result"]))
    for key in ("gen_ai.output.messages", "gen_ai.completion"):
        if key in attrs:
            text = messages_text(attrs[key])
            if text is not None:
                return text
    text = _indexed_text(attrs, "gen_ai.completion.", "content")
    if text is None:
        text = _indexed_text(attrs, "llm.output_messages.", "message.content")
    if text is not None:
        return text
    value = attrs.get("ai.response.text")
    if isinstance(value, str):
        return value
    obj = attrs.get("ai.response.object")
    return obj if isinstance(obj, str) else None


FINAL_ANSWER_TOOLS = {"final_answer"}  # smolagents' FinalAnswerTool


def final_answer_of(attrs: Attrs, *, root: bool) -> str | None:
    """The final answer of an agent run: a root agent span's plain ``output.value``
    (OpenInference ``AGENT``), or a final-answer tool's output. A JSON object or list there is
    a framework's result object, not an answer (it stays a fallback)."""
    kind = str(attrs.get("openinference.span.kind") or "").upper()
    is_final_tool = kind == "TOOL" and attrs.get("tool.name") in FINAL_ANSWER_TOOLS
    if not (is_final_tool or (root and kind == "AGENT")):
        return None
    value = attrs.get("output.value")
    if not isinstance(value, str) or isinstance(_parsed(value), (dict, list)):
        return None
    return value


def fallback_of(attrs: Attrs) -> str | None:
    """``output.value`` (OpenInference's whole output) or ``neens.output`` on any span."""
    for key in ("output.value", "neens.output"):
        if key in attrs:
            return _dumps(attrs[key])
    return None


def event_answer(name: str, attrs: Attrs, body: Any) -> str | None:
    """The answer a GenAI event states (a span event or an OTLP log record)."""
    if name in CLAUDE_CODE_ANSWER or body == CLAUDE_CODE_ANSWER[0]:
        text = attrs.get("response")
        return text if isinstance(text, str) and text != REDACTED else None
    if name not in ANSWER_EVENTS:
        return None
    for key in ("gen_ai.output.messages", "gen_ai.completion", "message"):
        if key in attrs:
            text = messages_text(attrs[key])
            if text is not None:
                return text
    if isinstance(body, dict):
        if "gen_ai.output.messages" in body:
            return messages_text(body["gen_ai.output.messages"])
        return messages_text(body)
    return None
