"""Small HTTP helpers of the client: backoff, ``Retry-After``, error-body details, JSON kinds,
and reading 2xx bodies (whole, streamed through a reader, or drained).

Kept apart from :mod:`neens_action.api.transport` (how a call is made) and
:mod:`neens_action.api.client` (the endpoints; it re-exports a few of these).
"""

from __future__ import annotations

import email.utils
import functools
import json
import random
import re
import time
from collections.abc import Callable, Iterable
from typing import Any
from urllib.parse import quote, urlsplit

import requests
from requests.auth import AuthBase

from neens_action.api.json_stream import TooLarge, decode_chunks, loads
from neens_action.errors import NeensApiError
from neens_action.settings.names import CONNECTION_NAMES, phrase

DETAIL_MAX = 200
def status_hint(status: int) -> str | None:
    """Advice for an HTTP status (the key named as the front door in force names it)."""
    if status == 401:
        return f"check {phrase('api_key', CONNECTION_NAMES, 'either')}: a nk_live_… project key"
    if status == 403:
        return "the API key is not allowed to access this project or resource"
    return None


def status_lead(status: int) -> str:
    """What an HTTP error status means, in words that open an error's first line."""
    if status == 401:
        return "Neens refused the API key"
    if status == 403:
        return "Neens refused access"
    if status == 404:
        return "Neens found no such resource"
    if status == 429:
        return "Neens is rate-limiting this client"
    if status >= 500:
        return "Neens had a server error"
    return "Neens refused the request"


def origin_question() -> str:
    """``is --base-url the Neens API origin?`` (``the base-url input`` in the CI step)."""
    return f"is {phrase('base_url', CONNECTION_NAMES)} the Neens API origin?"


def path_hint(base_url: str) -> str | None:
    """For a 404 through a base URL with a path (``…/api``): use the origin instead."""
    parts = urlsplit(base_url)
    if parts.path.strip("/"):
        return (f"{phrase('base_url', CONNECTION_NAMES)} has a path ({parts.path}): use the "
                f"origin, e.g. {parts.scheme}://{parts.netloc}")
    return None


def request_text(method: str, path: str) -> str:
    """``POST /preprod-evals``: the call, named in an error's details (never first)."""
    return f"{method} {path}".strip()


_TAG = re.compile(r"<[^>]*>")
_SCRIPT = re.compile(r"<(script|style)\b.*?</\1\s*>", re.IGNORECASE | re.DOTALL)
_TITLE = re.compile(r"<title[^>]*>(.*?)</title\s*>", re.IGNORECASE | re.DOTALL)


def backoff_delay(attempt: int, *, base: float = 0.5, cap: float = 8.0,
                  rand: Callable[[float, float], float] = random.uniform) -> float:
    """Full-jitter exponential backoff: uniform(0, min(cap, base * 2**attempt))."""
    return rand(0.0, min(cap, base * (2 ** max(0, attempt))))


def parse_retry_after(value: str | None, *, now: float | None = None) -> float | None:
    """Seconds from a ``Retry-After`` header (delta-seconds or HTTP date), else None."""
    if not value:
        return None
    value = value.strip()
    try:
        seconds = float(value)
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(value)
        except (TypeError, ValueError, IndexError):
            return None
        if when is None:
            return None
        seconds = when.timestamp() - (time.time() if now is None else now)
    if seconds != seconds:  # NaN
        return None
    return max(0.0, seconds)


def error_detail(text: str, content_type: str = "") -> str:
    """The server's ``detail`` from an error body: JSON ``detail``/``message``/``error``, or
    at most 200 characters of the body's text with HTML removed."""
    text = text or ""
    stripped = text.strip()
    if stripped.startswith(("{", "[")) or "json" in content_type.lower():
        try:
            data = json.loads(stripped)
        except (ValueError, RecursionError):
            data = None
        found = _detail_from_json(data)
        if found:
            return _one_line(found)[:DETAIL_MAX * 2]
    if "<" in stripped and ">" in stripped:
        title = _TITLE.search(stripped)
        body = _TAG.sub(" ", _SCRIPT.sub(" ", stripped))
        stripped = _one_line(title.group(1)) if title and _one_line(title.group(1)) else body
    line = _one_line(stripped)
    return line[:DETAIL_MAX] + ("…" if len(line) > DETAIL_MAX else "")


def _detail_from_json(data: Any) -> str:
    if isinstance(data, dict):
        for key in ("detail", "message", "msg", "error", "title"):
            if key in data:
                return _detail_from_json(data[key])
        return ""
    if isinstance(data, list):  # e.g. [{"loc": [...], "msg": "..."}]
        parts = [_detail_from_json(x) for x in data[:3]]
        return "; ".join(p for p in parts if p)
    if isinstance(data, str):
        return data
    if data is None:
        return ""
    return str(data)


def _one_line(text: str) -> str:
    return " ".join(str(text).split())


def json_kind(value: Any) -> str:
    """``a JSON array`` / ``a JSON string`` ... for messages about unexpected answers."""
    if isinstance(value, bool):
        return "a JSON boolean"
    if isinstance(value, (int, float)):
        return "a JSON number"
    if isinstance(value, str):
        return "a JSON string"
    if isinstance(value, list):
        return "a JSON array"
    if isinstance(value, dict):
        return "a JSON object"
    return "JSON null"


def transport_failure(exc: Exception, *, connect_timeout: float, read_timeout: float) -> str:
    """What went wrong below HTTP, in a few words (``connection refused``...)."""
    if isinstance(exc, requests.exceptions.ConnectTimeout):
        return f"could not connect within {connect_timeout:g}s"
    if isinstance(exc, requests.exceptions.Timeout):
        return f"no response within {read_timeout:g}s (read timeout)"
    if isinstance(exc, requests.exceptions.SSLError):
        return "TLS error"
    if isinstance(exc, requests.exceptions.ConnectionError):
        text = str(exc).lower()
        if "refused" in text:
            return "connection refused"
        if "name or service not known" in text or "resolve" in text or "getaddrinfo" in text:
            return "host name not found"
        if "reset" in text or "aborted" in text or "remote end closed" in text:
            return "connection reset"
        return "connection failed"
    return type(exc).__name__


def never_sent(exc: Exception) -> bool:
    """True when the request cannot have reached the server (no connection was made)."""
    if isinstance(exc, requests.exceptions.ConnectTimeout):
        return True
    return (isinstance(exc, requests.exceptions.ConnectionError)
            and "refused" in str(exc).lower())


def decode_json(method: str, path: str, status: int, raw: bytes, content_type: str) -> Any:
    """A 2xx body: None when empty, else JSON (decoded from the bytes, no text copy); a
    non-JSON body is a NeensApiError that names the content type, never the body."""
    if not raw or not raw.strip():
        return None
    try:
        return loads(raw)
    except ValueError as exc:  # JSONDecodeError, UnicodeDecodeError
        if "nested too deeply" in str(exc):
            raise
        raise non_json_error(method, path, status, content_type) from None


CHUNK = 64 * 1024  # bytes per read of a streamed body
WITHOUT_ITEMS = functools.partial(decode_chunks, element=None)  # a run, its items dropped


def rows_reader(row: Callable[[Any], Any],
                restart: Callable[[], None] | None) -> Callable[[Iterable[bytes]], Any]:
    """A body reader that streams the ``items`` rows through ``row`` (after ``restart``:
    a retried request reads the body again from its first row)."""
    def read(chunks: Iterable[bytes]) -> Any:
        if restart is not None:
            restart()
        return decode_chunks(chunks, element=row)
    return read


MAX_BODY_BYTES = 256 * 1024 * 1024  # a 2xx answer, by default (10,000 items: ~3 MB)
ERROR_BODY_BYTES = 64 * 1024  # an error answer: only its detail is read


def capped(chunks: Iterable[bytes], limit: int, what: str = "NEENS_MAX_BODY_BYTES"
           ) -> Iterable[bytes]:
    """``chunks``, raising :class:`TooLarge` once more than ``limit`` bytes came."""
    seen = 0
    for chunk in chunks:
        seen += len(chunk)
        if seen > limit:
            raise TooLarge(f"more than {limit} bytes (the cap, {what})")
        yield chunk


def decode_body(method: str, path: str, resp: requests.Response,
                reader: Callable[[Iterable[bytes]], Any] | None,
                limit: int = MAX_BODY_BYTES) -> Any:
    """A 2xx body, read through the byte cap: ``json.loads`` of the whole (small) body, or
    ``reader`` over its chunks as they arrive. A body that is not JSON (or not UTF-8), is
    nested too deeply, or is past a cap is a NeensApiError of one line."""
    content_type = resp.headers.get("Content-Type", "")
    with resp:
        chunks = capped(resp.iter_content(CHUNK), limit)
        try:
            if reader is None:
                return decode_json(method, path, resp.status_code, b"".join(chunks),
                                   content_type)
            return reader(chunks)
        except TooLarge as exc:
            raise unreadable(method, path, f"an answer with {exc}") from None
        except RecursionError:
            raise unreadable(method, path, "JSON nested too deeply to read") from None
        except MemoryError:
            raise unreadable(method, path, "an answer too large to hold in memory") from None
        except ValueError as exc:  # JSONDecodeError, UnicodeDecodeError
            if "nested too deeply" in str(exc):
                raise unreadable(method, path, "JSON nested too deeply to read") from None
            raise non_json_error(method, path, resp.status_code, content_type) from None


def unreadable(method: str, path: str, what: str) -> NeensApiError:
    return NeensApiError(f"Neens sent {what}: {origin_question()} "
                         f"({request_text(method, path)})", status=200,
                         method=method, path=path)


def read_error_body(resp: requests.Response) -> None:
    """Read at most :data:`ERROR_BODY_BYTES` of an error answer (kept as its content)."""
    data = bytearray()
    with resp:
        for chunk in resp.iter_content(CHUNK):
            data += chunk[: ERROR_BODY_BYTES - len(data)]
            if len(data) >= ERROR_BODY_BYTES:
                break
    resp._content = bytes(data)  # what `resp.content` / `resp.text` give from now on


def drain(resp: requests.Response) -> None:
    """Read an unwanted 2xx body chunk by chunk (so the connection can be reused) without
    holding it."""
    with resp:
        for _ in resp.iter_content(CHUNK):
            pass


def non_json_error(method: str, path: str, status: int, content_type: str) -> NeensApiError:
    kind = (content_type or "unknown content type").split(";")[0]
    return NeensApiError(
        f"Neens answered with a non-JSON response: {origin_question()} "
        f"(HTTP {status}, {kind}; {request_text(method, path)})",
        status=status, method=method, path=path)


def expect_object(method: str, path: str, data: Any) -> dict:
    """``data`` when it is a JSON object ({} for an empty body); else an error."""
    if data is None:
        return {}
    if isinstance(data, dict):
        return data
    raise NeensApiError(
        f"Neens answered with {json_kind(data)} where a JSON object was expected: "
        f"{origin_question()} ({request_text(method, path)})",
        status=200, method=method, path=path,  # a 2xx answer: not transient
    )


class BearerAuth(AuthBase):
    """Adds ``Authorization: Bearer <key>``; its repr never shows the key.

    Using an auth object (rather than a default header) also stops requests from
    replacing our header with credentials from ``~/.netrc``.
    """

    def __init__(self, key: str) -> None:
        self._key = key

    def __call__(self, r: requests.PreparedRequest) -> requests.PreparedRequest:
        r.headers["Authorization"] = f"Bearer {self._key}"
        return r

    def __repr__(self) -> str:
        return "BearerAuth(***)"


def path_segment(value: str) -> str:
    """A path segment: every reserved character escaped (ids never break out of the path)."""
    return quote(str(value), safe="")
