"""HTTP primitives shared by the sandbox's router and its route modules.

A route module declares ``ROUTES: list[Route]``; each handler takes a :class:`Request` and
returns a :class:`Response` (or a JSON-able value, sent as 200). Handlers signal client errors
by raising :class:`ApiError`; the router turns it into ``{"detail": ...}`` with that status.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from neens_sandbox.context import Context


# json.dumps with options builds a new encoder on every call
_ENCODE = json.JSONEncoder(separators=(",", ":"), allow_nan=False).encode


class ApiError(Exception):
    """A client-visible error: ``status`` and a one-sentence ``detail``."""

    def __init__(self, status: int, detail: str, headers: dict[str, str] | None = None) -> None:
        super().__init__(detail)
        self.status = status
        self.detail = detail
        self.headers = headers or {}


@dataclass
class Request:
    method: str
    path: str
    query: dict[str, str]
    headers: dict[str, str]  # lower-cased names
    body: bytes
    ctx: Context
    params: dict[str, str] = field(default_factory=dict)

    @property
    def content_type(self) -> str:
        return self.headers.get("content-type", "").split(";")[0].strip().lower()

    def json(self, *, required: bool = False) -> dict[str, Any]:
        """The body as a JSON object. Empty body => ``{}`` (unless ``required``)."""
        if not self.body.strip():
            if required:
                raise ApiError(400, "a JSON object body is required")
            return {}
        try:
            value = json.loads(self.body.decode("utf-8"))
        except (UnicodeDecodeError, ValueError) as exc:
            raise ApiError(400, f"malformed JSON body: {exc}") from None
        if not isinstance(value, dict):
            raise ApiError(400, "the JSON body must be an object")
        return value


@dataclass
class Response:
    status: int = 200
    body: Any = None  # JSON-able, or bytes (sent as is with content_type)
    content_type: str = "application/json"
    headers: dict[str, str] = field(default_factory=dict)

    def encode(self) -> bytes:
        if isinstance(self.body, bytes):
            return self.body
        if self.body is None and self.status == 204:
            return b""
        return _ENCODE(self.body).encode("utf-8")


Handler = Callable[[Request], Any]


@dataclass
class Route:
    """``pattern`` uses ``{name}`` for one path segment, e.g. ``/preprod-evals/{id}/gate``."""

    method: str
    pattern: str
    handler: Handler
    auth: bool = True  # every route is authenticated; kept for future public routes
    chaos: bool = True  # fault injection applies (never for the OTLP receiver)
    regex: re.Pattern[str] = field(init=False)

    def __post_init__(self) -> None:
        parts = re.split(r"(\{[a-zA-Z_]+\})", self.pattern)
        rx = "".join(
            f"(?P<{p[1:-1]}>[^/]+)" if p.startswith("{") else re.escape(p) for p in parts
        )
        self.regex = re.compile(f"^{rx}$")

    def match(self, path: str) -> dict[str, str] | None:
        m = self.regex.match(path)
        return m.groupdict() if m else None
