"""The Neens HTTP client: the only place URLs live.

One :class:`NeensClient` wraps a ``requests.Session``. Every call has a ``(connect, read)``
timeout. Safe calls (every GET, and the idempotent POSTs ``/start``, ``/cancel``,
``/ci-result`` and sweep cancel) are retried on transport errors, 429 (honouring
``Retry-After``, capped) and 5xx, with exponential backoff and full jitter. Calls that
create something (runs, sweeps, suites, push trigger, preview, launch, regenerate) are never
retried: a lost response must not create a second run.

Every failure is a :class:`~neens_action.errors.NeensApiError` whose message is one line:
``<METHOD> <path> failed: HTTP <status>: <server detail>``. The server's ``detail`` is read
from a JSON error body; a non-JSON body contributes at most 200 characters of its text with
HTML stripped (never a whole proxy page). The API key is sent only in the Authorization
header and never appears in a message or a ``repr``.
"""

from __future__ import annotations

import email.utils
import json
import random
import re
import time
from collections.abc import Callable, Mapping
from typing import Any
from urllib.parse import quote

import requests
from requests.auth import AuthBase

from neens_action import __version__
from neens_action.errors import NeensApiError

USER_AGENT = f"neens-action/{__version__} (+https://neens.ai)"
DETAIL_MAX = 200
_TAG = re.compile(r"<[^>]*>")
_SCRIPT = re.compile(r"<(script|style)\b.*?</\1\s*>", re.IGNORECASE | re.DOTALL)
_TITLE = re.compile(r"<title[^>]*>(.*?)</title\s*>", re.IGNORECASE | re.DOTALL)


class _Bearer(AuthBase):
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
        return "_Bearer(***)"


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
        except ValueError:
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


def _q(value: str) -> str:
    """A path segment: every reserved character escaped (ids never break out of the path)."""
    return quote(str(value), safe="")


class NeensClient:
    """A Neens API client. Methods return the decoded JSON or raise NeensApiError."""

    def __init__(
        self,
        base_url: str,
        api_key: str | None = None,
        project_id: str | None = None,
        *,
        timeout: float = 30.0,
        retries: int = 3,
        session: requests.Session | None = None,
        connect_timeout: float | None = None,
        max_retry_after: float = 30.0,
        sleep: Callable[[float], None] = time.sleep,
        rand: Callable[[float, float], float] = random.uniform,
    ) -> None:
        base = (base_url or "").strip().rstrip("/")
        if not base:
            raise NeensApiError("no Neens base URL: pass --base-url or set NEENS_BASE_URL")
        self.base_url = base
        self.project_id = project_id or None
        self.timeout = float(timeout)
        self.connect_timeout = float(connect_timeout if connect_timeout is not None
                                     else min(10.0, self.timeout))
        self.retries = max(0, int(retries))
        self.max_retry_after = max_retry_after
        self._api_key = api_key or None
        self._sleep = sleep
        self._rand = rand
        self.session = session or requests.Session()
        if self._api_key:
            self.session.auth = _Bearer(self._api_key)
        self.session.headers.update({"Accept": "application/json", "User-Agent": USER_AGENT})
        if self.project_id:
            self.session.headers["X-Neens-Project-Id"] = self.project_id

    def __repr__(self) -> str:
        key = "set" if self._api_key else "none"
        return f"NeensClient(base_url={self.base_url!r}, api_key=<{key}>)"

    @property
    def has_key(self) -> bool:
        return self._api_key is not None

    def close(self) -> None:
        self.session.close()

    # -- transport ---------------------------------------------------------------------------

    def request(
        self,
        method: str,
        path: str,
        *,
        body: Mapping[str, Any] | None = None,
        query: str = "",
        safe: bool = False,
        timeout: float | None = None,
        conflict_ok: bool = False,
        retries: int | None = None,
    ) -> Any:
        """One API call. ``safe`` enables retries (``retries`` overrides the client's count);
        ``conflict_ok`` turns a 409 into None."""
        url = self.base_url + path + (f"?{query}" if query else "")
        read = self.timeout if timeout is None else timeout
        tmo = (min(self.connect_timeout, read), read)
        data: bytes | None = None
        headers: dict[str, str] = {}
        if body is not None:
            clean = {k: v for k, v in body.items() if v is not None}
            data = json.dumps(clean, separators=(",", ":"), allow_nan=False).encode()
            headers["Content-Type"] = "application/json"
        attempts = 1 + ((self.retries if retries is None else max(0, retries)) if safe else 0)
        for attempt in range(attempts):
            last = attempt == attempts - 1
            try:
                resp = self.session.request(
                    method, url, data=data, headers=headers, timeout=tmo, allow_redirects=True
                )
            except requests.exceptions.RequestException as exc:
                err = self._transport_error(method, path, exc, read)
                if last:
                    raise err from None
                self._sleep(backoff_delay(attempt, rand=self._rand))
                continue
            status = resp.status_code
            if 200 <= status < 300:
                return self._decode(method, path, resp)
            if status == 409 and conflict_ok:
                return None
            if (status == 429 or status >= 500) and not last:
                wait = backoff_delay(attempt, rand=self._rand)
                after = parse_retry_after(resp.headers.get("Retry-After"))
                if after is not None:
                    wait = min(after, self.max_retry_after)
                resp.close()
                self._sleep(wait)
                continue
            raise self._status_error(method, path, resp)
        raise AssertionError("unreachable")  # pragma: no cover

    def _redact(self, text: str) -> str:
        if self._api_key and self._api_key in text:
            text = text.replace(self._api_key, "***")
        return text

    def _decode(self, method: str, path: str, resp: requests.Response) -> Any:
        raw = resp.content
        if not raw or not raw.strip():
            return None
        try:
            return json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, ValueError):
            ctype = resp.headers.get("Content-Type", "unknown content type")
            raise NeensApiError(
                f"{method} {path} returned a non-JSON response (HTTP {resp.status_code}, "
                f"{ctype.split(';')[0]}); is --base-url the Neens API origin?",
                status=resp.status_code, method=method, path=path,
            ) from None

    def _status_error(self, method: str, path: str, resp: requests.Response) -> NeensApiError:
        try:
            text = resp.content.decode("utf-8", errors="replace")
        except Exception:  # pragma: no cover - defensive
            text = ""
        detail = self._redact(error_detail(text, resp.headers.get("Content-Type", "")))
        reason = resp.reason or ""
        msg = f"{method} {path} failed: HTTP {resp.status_code}"
        if reason:
            msg += f" {reason}"
        if detail:
            msg += f": {detail}"
        hint = _STATUS_HINTS.get(resp.status_code)
        if hint:
            msg += f" ({hint})"
        return NeensApiError(msg, status=resp.status_code, detail=detail or None,
                             method=method, path=path)

    def _transport_error(self, method: str, path: str, exc: Exception,
                         read: float) -> NeensApiError:
        if isinstance(exc, requests.exceptions.ConnectTimeout):
            what = f"could not connect within {self.connect_timeout:g}s"
        elif isinstance(exc, requests.exceptions.Timeout):
            what = f"no response within {read:g}s (read timeout)"
        elif isinstance(exc, requests.exceptions.SSLError):
            what = "TLS error"
        elif isinstance(exc, requests.exceptions.ConnectionError):
            text = str(exc).lower()
            if "refused" in text:
                what = "connection refused"
            elif "name or service not known" in text or "resolve" in text or "getaddrinfo" in text:
                what = "host name not found"
            elif "reset" in text or "aborted" in text or "remote end closed" in text:
                what = "connection reset"
            else:
                what = "connection failed"
        else:
            what = type(exc).__name__
        msg = self._redact(
            f"{method} {path} failed: {what} (is Neens reachable at {self.base_url}?)"
        )
        return NeensApiError(msg, status=None, method=method, path=path)

    def _get(self, path: str, query: str = "") -> Any:
        return self.request("GET", path, query=query, safe=True)

    # -- pre-prod runs (E1-E10) -------------------------------------------------------------

    def create_run(self, body: Mapping[str, Any]) -> dict:
        """E1 ``POST /preprod-evals``: never retried (it is not idempotent)."""
        return self.request("POST", "/preprod-evals", body=body) or {}

    def get_run(self, run_id: str) -> dict:
        """E2 ``GET /preprod-evals/{id}``."""
        return self._get(f"/preprod-evals/{_q(run_id)}") or {}

    def get_items(self, run_id: str) -> list[dict]:
        """E3 ``GET /preprod-evals/{id}/items``, envelope unwrapped (missing => [])."""
        data = self._get(f"/preprod-evals/{_q(run_id)}/items")
        if isinstance(data, dict):
            data = data.get("items")
        return list(data) if isinstance(data, list) else []

    def start_run(self, run_id: str) -> dict | None:
        """E4 ``POST /preprod-evals/{id}/start``; 409 (already terminal) => None."""
        return self.request("POST", f"/preprod-evals/{_q(run_id)}/start", safe=True,
                            conflict_ok=True)

    def trigger_push(self, run_id: str) -> dict:
        """E5 ``POST /preprod-evals/{id}/run`` (push trigger): never retried."""
        return self.request("POST", f"/preprod-evals/{_q(run_id)}/run") or {}

    def cancel_run(self, run_id: str, *, quick: bool = False) -> dict | None:
        """E6 ``POST /preprod-evals/{id}/cancel``; 409 (already terminal) => None.

        ``quick`` (the interrupt path): one attempt, at most 5 s.
        """
        return self.request("POST", f"/preprod-evals/{_q(run_id)}/cancel", safe=True,
                            conflict_ok=True, **_quick(self, quick))

    def get_gate(self, run_id: str) -> dict:
        """E7 ``GET /preprod-evals/{id}/gate``."""
        return self._get(f"/preprod-evals/{_q(run_id)}/gate") or {}

    def get_comparison(self, run_id: str, baseline: str | None = None) -> dict:
        """E8 ``GET /preprod-evals/{id}/comparison[?baseline=SPEC]``."""
        query = f"baseline={_q(baseline)}" if baseline else ""
        return self._get(f"/preprod-evals/{_q(run_id)}/comparison", query) or {}

    def get_metrics(self, run_id: str) -> dict:
        """E9 ``GET /preprod-evals/{id}/metrics``."""
        return self._get(f"/preprod-evals/{_q(run_id)}/metrics") or {}

    def post_ci_result(self, run_id: str, body: Mapping[str, Any], *,
                       quick: bool = False) -> Any:
        """E10 ``POST /preprod-evals/{id}/ci-result``: at most 10 s per attempt and at most
        2 retries, so a slow report cannot hold a build; ``quick``: one attempt, 5 s."""
        kw = _quick(self, quick) if quick else {
            "timeout": min(self.timeout, 10.0), "retries": min(self.retries, 2)}
        return self.request("POST", f"/preprod-evals/{_q(run_id)}/ci-result", body=body,
                            safe=True, **kw)

    def list_ci_gates(self) -> list[dict]:
        """E11 ``GET /flywheel/gates/ci``, envelope unwrapped."""
        data = self._get("/flywheel/gates/ci")
        if isinstance(data, dict):
            data = data.get("gates")
        return list(data) if isinstance(data, list) else []

    # -- model sweeps (E12-E16) ---------------------------------------------------------------

    def preview_sweep(self, body: Mapping[str, Any]) -> dict:
        """E12 ``POST /model-sweeps/preview`` (estimate, bare or enveloped, returned as is)."""
        return self.request("POST", "/model-sweeps/preview", body=body) or {}

    def create_sweep(self, body: Mapping[str, Any]) -> dict:
        """E13 ``POST /model-sweeps``: never retried."""
        return self.request("POST", "/model-sweeps", body=body) or {}

    def get_sweep(self, sweep_id: str) -> dict:
        """E14 ``GET /model-sweeps/{id}``."""
        return self._get(f"/model-sweeps/{_q(sweep_id)}") or {}

    def get_sweep_comparison(self, sweep_id: str, bar: float | None = None,
                             baseline_arm: str | None = None) -> dict:
        """E15 ``GET /model-sweeps/{id}/comparison[?bar=&baselineArm=]``."""
        parts = []
        if bar is not None:
            parts.append(f"bar={_q(repr(float(bar)))}")
        if baseline_arm:
            parts.append(f"baselineArm={_q(baseline_arm)}")
        return self._get(f"/model-sweeps/{_q(sweep_id)}/comparison", "&".join(parts)) or {}

    def cancel_sweep(self, sweep_id: str, *, quick: bool = False) -> dict | None:
        """E16 ``POST /model-sweeps/{id}/cancel``; 409 (already terminal) => None.
        ``quick`` (the interrupt path): one attempt, at most 5 s."""
        return self.request("POST", f"/model-sweeps/{_q(sweep_id)}/cancel", safe=True,
                            conflict_ok=True, **_quick(self, quick))

    # -- scenario suites (E17-E20) -------------------------------------------------------------

    def create_suite(self, body: Mapping[str, Any]) -> dict:
        """E17 ``POST /scenario-suites``: never retried."""
        return self.request("POST", "/scenario-suites", body=body) or {}

    def get_suite(self, suite_id: str) -> dict:
        """E18 ``GET /scenario-suites/{id}``."""
        return self._get(f"/scenario-suites/{_q(suite_id)}") or {}

    def regenerate_suite(self, suite_id: str, body: Mapping[str, Any] | None = None) -> dict:
        """E19 ``POST /scenario-suites/{id}/regenerate``: never retried."""
        return self.request("POST", f"/scenario-suites/{_q(suite_id)}/regenerate",
                            body=dict(body or {})) or {}

    def launch_suite(self, suite_id: str, body: Mapping[str, Any]) -> dict:
        """E20 ``POST /scenario-suites/{id}/launch`` (creates a run): never retried."""
        return self.request("POST", f"/scenario-suites/{_q(suite_id)}/launch", body=body) or {}


def _quick(client: NeensClient, quick: bool) -> dict[str, Any]:
    return {"timeout": min(client.timeout, 5.0), "retries": 0} if quick else {}


_STATUS_HINTS = {
    401: "check --api-key / NEENS_API_KEY: a nk_live_… project key",
    403: "the API key is not allowed to access this project or resource",
}

NeensEvalClient = NeensClient

__all__ = ["USER_AGENT", "NeensClient", "NeensEvalClient", "backoff_delay", "error_detail",
           "parse_retry_after"]
