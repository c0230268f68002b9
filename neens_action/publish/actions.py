"""GitHub Actions side effects that need no API: workflow commands and the runner's files.

- :class:`Commands` writes workflow commands (``::add-mask::``, ``::stop-commands::``,
  ``::error``/``::warning``/``::notice`` capped at 10 per kind, ``::group::``) to the log.
- :func:`write_outputs` appends to ``$GITHUB_OUTPUT`` (random heredoc delimiters for
  multi-line values); :func:`write_summary` appends to ``$GITHUB_STEP_SUMMARY`` within 1 MiB.

The runner reads commands on stdout and stderr alike; we write them on the same stream as the
human log so their order is exact.
"""

from __future__ import annotations

import re
import secrets
import sys
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import TextIO

from neens_action.text import gh_data, gh_property, utf8_len

ANNOTATION_CAP = 10  # GitHub shows at most 10 annotations of each kind per step
_OUTPUT_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_-]*$")


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
        print(line, file=self.stream, flush=True)

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
                self._emit(f"::add-mask::{gh_data(part)}")

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
        self._emit(f"::group::{gh_data(title)}")
        try:
            yield
        finally:
            self._emit("::endgroup::")

    def annotate(self, kind: str, message: str, *, title: str | None = None) -> bool:
        """``::<kind> title=...::message``; False (and counted) once the cap is reached."""
        if kind not in {"error", "warning", "notice"}:
            raise ValueError(f"unknown annotation kind {kind!r}")
        resumed_from = self._token
        if resumed_from is not None:
            self.resume()
        try:
            used = self.counts.get(kind, 0)
            if used >= ANNOTATION_CAP:
                self.dropped[kind] = self.dropped.get(kind, 0) + 1
                self._emit(f"neens: {kind}: {' '.join(message.split())}")
                return False
            self.counts[kind] = used + 1
            props = f" title={gh_property(title)}" if title else ""
            self._emit(f"::{kind}{props}::{gh_data(message)}")
            return True
        finally:
            if resumed_from is not None:
                self.stop()

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
                self._emit(line)


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
        fh.write(format_outputs(outputs))


def summary_room(path: str | Path, limit: int) -> int:
    """Bytes still free in a step-summary file that may already hold earlier content."""
    try:
        used = Path(path).stat().st_size
    except OSError:
        used = 0
    return max(limit - used, 0)


def write_summary(path: str | Path, markdown: str) -> int:
    """Append ``markdown`` to the step summary file; returns the bytes written."""
    with open(path, "a", encoding="utf-8") as fh:
        fh.write(markdown)
    return utf8_len(markdown)
