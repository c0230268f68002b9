"""GitHub Actions side effects that need no API: workflow commands and the runner's files.

- :class:`Commands` writes workflow commands (``::add-mask::``, ``::stop-commands::``,
  ``::error``/``::warning``/``::notice`` capped at 10 per kind, ``::group::``) to the log.
- :func:`write_outputs` appends to ``$GITHUB_OUTPUT`` (random heredoc delimiters for
  multi-line values); :func:`write_summary` appends to ``$GITHUB_STEP_SUMMARY`` within 1 MiB.

The runner reads commands on stdout and stderr alike; we write them on the same stream as the
human log so their order is exact. :class:`GuardedStream` is that stream on GitHub: every
line of text written through it is made inert (``##[`` anywhere and a leading ``::`` are
broken, lone surrogates replaced) and only :meth:`Commands._emit` writes a real command, as
one ``write`` under the stream's lock so no other thread's text can split it.
"""

from __future__ import annotations

import re
import secrets
import sys
import threading
from collections.abc import Iterator, Mapping
from contextlib import contextmanager, nullcontext
from pathlib import Path
from typing import TextIO

from neens_action.redact import TextWrapper, redact
from neens_action.text import ZWSP, gh_data, gh_inert, gh_property, scrub_text, utf8_len

ANNOTATION_CAP = 10  # GitHub shows at most 10 annotations of each kind per step
_JSON_LEGACY = re.compile(r"(?<=##)\[")
_OUTPUT_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_-]*$")


class GuardedStream(TextWrapper):
    """A text stream whose plain text can never be read as a workflow command.

    ``write`` neutralises untrusted text line by line (knowing whether it starts a line);
    :meth:`command` writes one trusted command line whole, on a line of its own.
    """

    def __init__(self, raw: TextIO) -> None:
        super().__init__(raw)
        self.lock = threading.RLock()
        self._line_blank = True  # nothing but whitespace written on the current line
        self._lead_colon = False  # the current line is blanks and one ``:`` so far
        self._tail = ""  # the last two characters written on the current line

    def write(self, text: str) -> int:
        """Inert text, also when a command is split across writes (``"##"`` then
        ``"[set-output ..."``, ``":"`` then ``":warning::"``): the state of the current line
        is kept from one write to the next."""
        if not text:
            return 0
        with self.lock:
            safe = gh_inert(redact(scrub_text(text)), line_start=self._line_blank)
            if ((self._tail.endswith("##") and safe.startswith("["))
                    or (self._tail.endswith("#") and safe.startswith("#["))
                    or (self._lead_colon and safe.startswith(":"))):
                safe = ZWSP + safe
            self.raw.write(safe)
            self._follow(safe)
            return len(text)

    def _follow(self, written: str) -> None:
        """Update what we know of the current line after ``written``."""
        parts = re.split(r"[\r\n]", written)
        tail = parts[-1]
        if len(parts) > 1:
            self._line_blank, self._lead_colon, self._tail = True, False, ""
        if self._line_blank:
            stripped = tail.strip()
            self._lead_colon = stripped == ":"
            self._line_blank = not stripped
        else:
            self._lead_colon = False
        self._tail = (self._tail + tail)[-2:]

    def command(self, line: str) -> None:
        """Write one command line whole (a newline first when a line is open)."""
        with self.lock:
            lead = "" if self._line_blank else "\n"
            self.raw.write(f"{lead}{line}\n")
            self.raw.flush()
            self._line_blank, self._lead_colon, self._tail = True, False, ""

    def flush(self) -> None:
        with self.lock:
            self.raw.flush()


class JsonStream(TextWrapper):
    """Machine output (``--json``) that the runner cannot read as a command and that parses
    to the same values: ``##[`` only occurs inside a JSON string, where ``[`` is spelled
    ``\\u005b`` (a ``::`` never opens a line of JSON). Secrets are redacted."""

    def __init__(self, raw: TextIO) -> None:
        super().__init__(raw)
        self._tail = ""

    def write(self, text: str) -> int:
        safe = _JSON_LEGACY.sub(r"\\u005b", redact(text))
        if self._tail.endswith("##") and safe.startswith("["):
            safe = "\\u005b" + safe[1:]
        elif self._tail.endswith("#") and safe.startswith("#["):
            safe = "#\\u005b" + safe[2:]
        self.raw.write(safe)
        self._tail = (self._tail + safe)[-2:]
        return len(text)


class Commands:
    """Workflow commands on one stream, with the per-kind annotation cap and command pausing.

    ``stop()`` pauses command processing (so untrusted text printed afterwards is inert) and
    ``resume()`` turns it back on; both are idempotent, so a front door can pause around a
    whole flow and a publisher can resume before it annotates.
    """

    def __init__(self, stream: TextIO | None = None) -> None:
        self.stream = stream or sys.stderr
        self.counts: dict[str, int] = {}
        self.dropped: dict[str, int] = {}
        self._token: str | None = None

    def _emit(self, line: str) -> None:
        """One trusted command line, in one write (never split by another thread's text)."""
        if isinstance(self.stream, GuardedStream):
            self.stream.command(line)
        else:
            self.stream.write(line + "\n")
            self.stream.flush()

    def _command(self, line: str) -> None:
        """A command that must run even while commands are paused: resumed around it (the
        pause goes on with a fresh token)."""
        lock = self.stream.lock if isinstance(self.stream, GuardedStream) else nullcontext()
        with lock:  # no other thread's text between the resume and the new pause
            if self._token is None:
                self._emit(line)
                return
            self.resume()
            try:
                self._emit(line)
            finally:
                self.stop()

    def _text(self, line: str) -> None:
        """Untrusted text: inert whatever the stream (and shown as text while paused)."""
        self.stream.write(gh_inert(redact(scrub_text(line))) + "\n")
        self.stream.flush()

    @property
    def paused(self) -> bool:
        return self._token is not None

    def mask(self, secret: str | None) -> None:
        """``::add-mask::`` a non-empty secret (each line of a multi-line one too)."""
        if not secret or not secret.strip():
            return
        parts = [secret, *secret.splitlines()]
        for part in dict.fromkeys(parts):
            if part.strip():
                self._command(f"::add-mask::{gh_data(part)}")

    def stop(self) -> str:
        """Pause command processing with a fresh random token; returns the token."""
        if self._token is None:
            self._token = "neens-" + secrets.token_hex(16)
            self._emit(f"::stop-commands::{self._token}")
        return self._token

    def resume(self) -> None:
        if self._token is not None:
            self._emit(f"::{self._token}::")
            self._token = None

    @contextmanager
    def stopped(self) -> Iterator[None]:
        """Everything printed inside is shown verbatim, never run as a command."""
        was_paused = self.paused
        self.stop()
        try:
            yield
        finally:
            if not was_paused:
                self.resume()

    @contextmanager
    def group(self, title: str) -> Iterator[None]:
        self._command(f"::group::{gh_data(title)}")
        try:
            yield
        finally:
            self._command("::endgroup::")

    def annotate(self, kind: str, message: str, *, title: str | None = None) -> bool:
        """``::<kind> title=...::message``; False (and counted) once the cap is reached: the
        message is then printed as inert text, commands left paused when they were."""
        if kind not in {"error", "warning", "notice"}:
            raise ValueError(f"unknown annotation kind {kind!r}")
        used = self.counts.get(kind, 0)
        if used >= ANNOTATION_CAP:
            self.dropped[kind] = self.dropped.get(kind, 0) + 1
            self._text(f"neens: {kind}: {' '.join(message.split())}")
            return False
        self.counts[kind] = used + 1
        props = f" title={gh_property(redact(title))}" if title else ""
        self._command(f"::{kind}{props}::{gh_data(redact(scrub_text(message)))}")
        return True

    def error(self, message: str, *, title: str | None = None) -> bool:
        return self.annotate("error", message, title=title)

    def warning(self, message: str, *, title: str | None = None) -> bool:
        return self.annotate("warning", message, title=title)

    def notice(self, message: str, *, title: str | None = None) -> bool:
        return self.annotate("notice", message, title=title)

    def echo(self, text: str) -> None:
        """Print untrusted text verbatim with command processing paused."""
        with self.stopped():
            for line in text.splitlines() or [""]:
                self._text(line)


def _delimiter(value: str) -> str:
    while True:
        token = "ghadelimiter_" + secrets.token_hex(16)
        if token not in value:
            return token


def format_outputs(outputs: Mapping[str, str]) -> str:
    """The ``$GITHUB_OUTPUT`` text for ``outputs`` (``name=value`` or a heredoc block)."""
    chunks: list[str] = []
    for name, raw in outputs.items():
        if not _OUTPUT_NAME.match(name):
            raise ValueError(f"invalid output name {name!r}")
        value = "" if raw is None else str(raw)
        if "\n" in value or "\r" in value:
            delim = _delimiter(value)
            chunks.append(f"{name}<<{delim}\n{value}\n{delim}\n")
        else:
            chunks.append(f"{name}={value}\n")
    return "".join(chunks)


def write_outputs(path: str | Path, outputs: Mapping[str, str]) -> None:
    """Append ``outputs`` to the runner's output file (``$GITHUB_OUTPUT``)."""
    with open(path, "a", encoding="utf-8") as fh:
        fh.write(redact(scrub_text(format_outputs(outputs))))


def summary_room(path: str | Path, limit: int) -> int:
    """Bytes still free in a step-summary file that may already hold earlier content."""
    try:
        used = Path(path).stat().st_size
    except OSError:
        used = 0
    return max(limit - used, 0)


def write_summary(path: str | Path, markdown: str) -> int:
    """Append ``markdown`` to the step summary file; returns the bytes written."""
    clean = redact(scrub_text(markdown))
    with open(path, "a", encoding="utf-8") as fh:
        fh.write(clean)
    return utf8_len(clean)
