"""What the GitHub runner would *run* from a step's log: its workflow-command rules, re-stated.

Rules (from reading the public actions/runner source, restated here, not copied):
- the log is read line by line; a line ends at ``\\r\\n``, ``\\r`` or ``\\n``;
- a line is first tried as ``::name props::data``: the line, leading whitespace trimmed, must
  start with ``::``; the name is what comes before the first space of the part up to the next
  ``::``; properties are ``k=v`` separated by ``,``;
- else as the legacy ``##[name props]data``, found *anywhere* in the line, up to the first
  ``]`` after it; properties are ``k=v`` separated by ``;``;
- only registered names count (case-insensitive); ``stop-commands`` pauses everything until a
  command named by its data (the token, registered while paused) comes by.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

REGISTERED = frozenset({
    "add-mask", "add-path", "add-matcher", "remove-matcher", "debug", "echo", "endgroup",
    "error", "group", "notice", "save-state", "set-env", "set-output", "warning",
    "stop-commands",
})


@dataclass
class Command:
    name: str
    data: str = ""
    properties: dict[str, str] = field(default_factory=dict)
    syntax: str = "::"
    line: str = ""


def lines(log: str) -> list[str]:
    return re.split(r"\r\n|\r|\n", log)


def _unescape(text: str, pairs: tuple[tuple[str, str], ...]) -> str:
    for token, code in pairs:
        text = text.replace(code, token)
    return text


_DATA = (("\r", "%0D"), ("\n", "%0A"), ("%", "%25"))
_PROP = (("\r", "%0D"), ("\n", "%0A"), (":", "%3A"), (",", "%2C"), ("%", "%25"))
_LEGACY = ((";", "%3B"), ("\r", "%0D"), ("\n", "%0A"), ("]", "%5D"), ("%", "%25"))


def _props(text: str, sep: str, pairs: tuple[tuple[str, str], ...]) -> dict[str, str]:
    out: dict[str, str] = {}
    for part in text.split(sep):
        if not part:
            continue
        key, eq, value = part.partition("=")
        if eq and key and value:
            out[key] = _unescape(value, pairs)
    return out


def parse_v2(line: str, registered: set[str]) -> Command | None:
    msg = line.lstrip()
    if not msg.startswith("::"):
        return None
    end = msg.find("::", 2)
    if end < 0:
        return None
    info = msg[2:end]
    name, _, props = info.partition(" ")
    if name.lower() not in registered:
        return None
    return Command(name, _unescape(msg[end + 2:], _DATA), _props(props.strip(), ",", _PROP),
                   "::", line)


def parse_v1(line: str, registered: set[str]) -> Command | None:
    start = line.find("##[")
    if start < 0:
        return None
    close = line.find("]", start)
    if close < 0:
        return None
    info = line[start + 3:close]
    name, _, props = info.partition(" ")
    if name.lower() not in registered:
        return None
    return Command(name, _unescape(line[close + 1:], _LEGACY), _props(props, ";", _LEGACY),
                   "##[", line)


def commands(log: str) -> list[Command]:
    """Every command the runner would run, in order (``stop-commands`` and each resume
    included, the resume as a Command named ``resume``)."""
    registered = set(REGISTERED)
    token: str | None = None
    ran: list[Command] = []
    for line in lines(log):
        if not line:
            continue
        cmd = parse_v2(line, registered) or parse_v1(line, registered)
        if cmd is None:
            continue
        if token is not None:
            if token and cmd.name.lower() == token.lower():
                registered.discard(token.lower())
                token = None
                ran.append(Command("resume", line=line, syntax=cmd.syntax))
            continue
        if cmd.name.lower() == "stop-commands":
            token = cmd.data
            registered.add(token.lower())
        ran.append(cmd)
    return ran


def run_commands(log: str) -> list[Command]:
    """The commands that do something (no stop/resume bookkeeping)."""
    return [c for c in commands(log) if c.name not in ("stop-commands", "resume")]
