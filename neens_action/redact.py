"""Redaction: secrets never appear in anything we write.

The Neens key, every token the job was given (``NEENS_GITLAB_TOKEN``, ``GITHUB_TOKEN``,
``CI_JOB_TOKEN``...) and every value we mask are registered here once, by the front door
(``neens ci`` / ``entrypoint.py``) and by the CLI; :func:`redact` then replaces each of them
by ``***`` in a text, in the forms an agent is likely to print it: as is, base64 (standard
and URL-safe, with or without padding), URL-encoded and JSON-escaped.

It is called by the writers, never by the renderers: the step summary, the files we leave
(result JSON, summary, JUnit, dotenv), ``$GITHUB_OUTPUT``, the PR comment and MR note, the
annotations and the console streams (:class:`Redacted`, and
:class:`~neens_action.publish.actions.GuardedStream` on GitHub). Whatever a renderer
builds from agent output or a server's error text, it reaches the world through one of them.
"""

from __future__ import annotations

import base64
import io
import json
import re
import threading
from collections.abc import Iterable, Mapping
from typing import TextIO
from urllib.parse import quote, quote_plus

MASK = "***"
MIN_LENGTH = 6  # shorter values ("true", "1") would blank out ordinary text
# Variables that hold a credential of the job (the agents never get them either: see
# neens_action/ci/context.py); their values are redacted wherever they show up.
SECRET_VARIABLES = (
    "NEENS_API_KEY", "NEENS_INPUT_API_KEY", "INPUT_API-KEY", "INPUT_API_KEY",
    "NEENS_GITLAB_TOKEN", "NEENS_INPUT_GITHUB_TOKEN", "INPUT_GITHUB-TOKEN", "INPUT_GITHUB_TOKEN",
    "GITHUB_TOKEN", "GH_TOKEN", "ACTIONS_RUNTIME_TOKEN", "ACTIONS_ID_TOKEN_REQUEST_TOKEN",
    "CI_JOB_TOKEN", "CI_JOB_JWT", "CI_JOB_JWT_V1", "CI_JOB_JWT_V2", "CI_REGISTRY_PASSWORD",
    "CI_DEPENDENCY_PROXY_PASSWORD", "CI_DEPLOY_PASSWORD",
)

_lock = threading.Lock()
_secrets: set[str] = set()
_pattern: re.Pattern[str] | None = None


def forms(secret: str) -> set[str]:
    """The spellings of ``secret`` we look for."""
    raw = secret.encode("utf-8", "surrogatepass")
    out = {secret, quote(secret, safe=""), quote_plus(secret), json.dumps(secret)[1:-1]}
    for encode in (base64.b64encode, base64.urlsafe_b64encode):
        text = encode(raw).decode("ascii")
        out |= {text, text.rstrip("=")}
    return {f for f in out if len(f) >= MIN_LENGTH}


def register(values: Iterable[str | None]) -> None:
    """Redact each non-empty value (each line of a multi-line one too) from now on."""
    global _pattern
    added = False
    with _lock:
        for value in values:
            if not value:
                continue
            for part in {value.strip(), *value.splitlines()}:
                part = part.strip()
                if len(part) >= MIN_LENGTH and part not in _secrets:
                    _secrets.add(part)
                    added = True
        if added:
            spelled = sorted({f for s in _secrets for f in forms(s)}, key=len, reverse=True)
            _pattern = re.compile("|".join(re.escape(f) for f in spelled))


def register_environ(environ: Mapping[str, str]) -> None:
    """Redact the credentials the job's environment holds (:data:`SECRET_VARIABLES`)."""
    register(environ.get(name, "") for name in SECRET_VARIABLES)


def clear() -> None:
    """Forget every registered secret (tests)."""
    global _pattern
    with _lock:
        _secrets.clear()
        _pattern = None


def redact(text: str) -> str:
    """``text`` with every registered secret, in every form, replaced by ``***``."""
    pattern = _pattern
    if pattern is None or not text:
        return text
    return pattern.sub(MASK, text)


class TextWrapper(io.TextIOBase):
    """A text stream over ``raw`` that changes what is written (subclasses define ``write``)
    and hands everything else to ``raw``."""

    def __init__(self, raw: TextIO) -> None:
        super().__init__()
        self.raw = raw

    def writable(self) -> bool:
        return True

    def flush(self) -> None:
        self.raw.flush()

    def fileno(self) -> int:
        return self.raw.fileno()

    def isatty(self) -> bool:
        return self.raw.isatty()

    @property
    def encoding(self) -> str:  # type: ignore[override]
        return getattr(self.raw, "encoding", None) or "utf-8"


class Redacted(TextWrapper):
    """A text stream that redacts everything written through it."""

    def write(self, text: str) -> int:
        self.raw.write(redact(text))
        return len(text)
