"""How every call to Neens is made: timeouts, retries, idempotent creates, errors, bodies.

One :class:`Transport` (the base of :class:`~neens_action.api.client.NeensClient`, where the
URLs live) wraps a ``requests.Session``. Every call has a ``(connect, read)``
timeout. Safe calls (every GET, and the idempotent POSTs ``/start``, ``/cancel``,
``/ci-result`` and sweep cancel) are retried on transport errors, 429 (honouring
``Retry-After``, capped) and 5xx, with exponential backoff and full jitter. The other calls
that change something (push trigger, preview, regenerate) are never retried: a lost
response must not do it twice.

Creates (a run, a sweep, a scenario suite, a suite launch, which creates a
run) are never repeated blindly either. Each carries an ``Idempotency-Key`` header. A
refusal that did nothing (429, or a connection that was never made) is retried. When the
outcome is unknown (a 5xx, a reset or a read timeout after the request left), the client
looks the key up in the collection it created in (``GET /preprod-evals?idempotency_key=K``
=> ``{"runs": [...]}``; ``/model-sweeps`` => ``sweeps``; ``/scenario-suites`` => ``suites``):
an object found is the answer; none means nothing was created, so the create is sent again
(same key); a server that cannot answer the lookup makes it an error that says the object
may exist. Answers that should be JSON objects and are not (a list, a string) are errors too.

Every failure is a :class:`~neens_action.errors.NeensApiError` whose message is one line that
opens with what is wrong and how to fix it; the call stays in the details at the end:
``Neens refused the API key: check --api-key: … (HTTP 401 Unauthorized: <server detail>;
POST /preprod-evals)``. The server's ``detail`` is read
from a JSON error body; a non-JSON body contributes at most 200 characters of its text with
HTML stripped (never a whole proxy page). The API key is sent only in the Authorization
header and never appears in a message or a ``repr``.
"""

from __future__ import annotations

import json
import random
import time
from collections.abc import Callable, Iterable, Mapping
from typing import Any

import requests

from neens_action import __version__
from neens_action.api import json_stream
from neens_action.api.deadline import Deadline, DeadlineAdapter
from neens_action.api.http_util import (
    MAX_BODY_BYTES,
    BearerAuth,
    backoff_delay,
    decode_body,
    drain,
    error_detail,
    expect_object,
    never_sent,
    parse_retry_after,
    path_hint,
    path_segment,
    read_error_body,
    request_text,
    status_hint,
    status_lead,
    transport_failure,
)
from neens_action.errors import NeensApiError
from neens_action.settings.names import CONNECTION_NAMES, phrase

USER_AGENT = f"neens-action/{__version__} (+https://neens.ai)"
REQUEST_BUDGET = 300.0  # seconds of wall clock per attempt, body included


class Transport:
    """The session, the key and the rules every call follows (see the module docstring);
    :class:`~neens_action.api.client.NeensClient` adds the endpoints."""

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
        request_budget: float | None = REQUEST_BUDGET,
        max_body_bytes: int = MAX_BODY_BYTES,
        max_items: int = json_stream.MAX_ITEMS,
    ) -> None:
        base = (base_url or "").strip().rstrip("/")
        if not base:
            raise NeensApiError("no Neens base URL: "
                                + phrase("base_url", CONNECTION_NAMES, "set"))
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
        self.request_budget = request_budget
        self.max_body_bytes = max_body_bytes
        self.max_items = max_items
        self.session = session or requests.Session()
        if isinstance(self.session, requests.Session):  # the budget needs our adapter
            self.session.mount("http://", DeadlineAdapter())
            self.session.mount("https://", DeadlineAdapter())
        if self._api_key:
            self.session.auth = BearerAuth(self._api_key)
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
        idempotency_key: str | None = None,
        created_in: tuple[str, str] = ("/preprod-evals", "runs"),
        budget: float | None = None,
        decode: bool = True,
        reader: Callable[[Iterable[bytes]], Any] | None = None,
    ) -> Any:
        """One API call. ``safe`` enables retries (``retries`` overrides the client's count);
        ``conflict_ok`` turns a 409 into None; ``idempotency_key`` makes a create safe to
        retry the way the module docstring says (``created_in``: the collection path and
        the listing field its lookup reads); ``budget``: no retry starts after that many
        seconds; ``decode=False``: the 2xx body is drained unread (None is returned);
        ``reader``: decodes the 2xx body from its chunks as they arrive (see
        :mod:`neens_action.api.json_stream`), instead of ``json.loads`` on the whole body.

        Bodies are streamed: a body that breaks off is a transport failure like any other
        (retried when the call is safe, looked up when it was a create)."""
        url = self.base_url + path + (f"?{query}" if query else "")
        read = self.timeout if timeout is None else timeout
        tmo = (min(self.connect_timeout, read), read)
        data: bytes | None = None
        headers: dict[str, str] = {}
        if body is not None:
            clean = {k: v for k, v in body.items() if v is not None}
            data = json.dumps(clean, separators=(",", ":"), allow_nan=False).encode()
            headers["Content-Type"] = "application/json"
        if idempotency_key:
            headers["Idempotency-Key"] = idempotency_key
        count = self.retries if retries is None else max(0, retries)
        attempts = 1 + (count if safe or idempotency_key else 0)
        ends = None if budget is None else time.monotonic() + budget
        for attempt in range(attempts):
            last = attempt == attempts - 1 or (ends is not None and time.monotonic() >= ends)
            deadline = Deadline(self.request_budget)
            cap = json_stream.max_items.set(self.max_items)
            try:
                with deadline:
                    resp = self.session.request(method, url, data=data, headers=headers,
                                                timeout=tmo, allow_redirects=True, stream=True)
                    status = resp.status_code
                    if 200 <= status < 300:
                        if not decode:
                            return drain(resp)
                        return decode_body(method, path, resp, reader, self.max_body_bytes)
                    read_error_body(resp)  # a capped read, here under the except
            except NeensApiError:
                if deadline.fired:
                    raise self._budget_error(method, path) from None
                raise
            except requests.exceptions.RequestException as exc:
                if deadline.fired:  # a dripping server: no retry would do better
                    raise self._budget_error(method, path) from None
                err = self._transport_error(method, path, exc, read)
                if idempotency_key and not never_sent(exc):
                    found = self._created_by(idempotency_key, err, created_in)
                    if found is not None:
                        return found
                if last:
                    raise err from None
                self._sleep(backoff_delay(attempt, rand=self._rand))
                continue
            finally:
                json_stream.max_items.reset(cap)
            if status == 409 and conflict_ok:
                return None
            if idempotency_key and status >= 500:
                found = self._created_by(idempotency_key,
                                         self._status_error(method, path, resp), created_in)
                if found is not None:
                    resp.close()
                    return found
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

    def _budget_error(self, method: str, path: str) -> NeensApiError:
        return NeensApiError(
            f"no complete answer from Neens within {self.request_budget:g} s: is Neens "
            f"reachable at {self.base_url}? (the request budget, NEENS_REQUEST_BUDGET; "
            f"{request_text(method, path)})",
            # 408, our own request timeout: not transient, so no poll loop asks again
            status=408, method=method, path=path)

    def _created_by(self, key: str, err: NeensApiError,
                    created_in: tuple[str, str] = ("/preprod-evals", "runs")) -> dict | None:
        """After a create whose outcome is unknown: the object it made, or None when it made
        none (so sending it again is safe). Raises when the server cannot tell."""
        collection, field = created_in
        noun = field.removesuffix("s")
        why = ""
        try:
            found = self.request("GET", collection,
                                 query=f"idempotency_key={path_segment(key)}", safe=True)
        except NeensApiError as exc:
            found, why = None, f": {exc}"
        listed = found.get(field) if isinstance(found, dict) else None
        if not isinstance(listed, list):
            raise NeensApiError(
                f"{err}; the {noun} may have been created anyway and the server could not say "
                f"(lookup by Idempotency-Key failed{why[:160]}), so it was not sent again: "
                f"check the {field} in Neens before re-running",
                status=err.status, detail=err.detail, method=err.method, path=err.path,
            )
        for obj in listed:
            if isinstance(obj, dict) and isinstance(obj.get("id"), str) and obj["id"]:
                return obj
        return None

    def _object(self, method: str, path: str, data: Any) -> dict:
        return expect_object(method, path, data)

    def _redact(self, text: str) -> str:
        if self._api_key and self._api_key in text:
            text = text.replace(self._api_key, "***")
        return text

    def _status_error(self, method: str, path: str, resp: requests.Response) -> NeensApiError:
        try:
            text = resp.content.decode("utf-8", errors="replace")
        except Exception:  # pragma: no cover - defensive
            text = ""
        detail = self._redact(error_detail(text, resp.headers.get("Content-Type", "")))
        status = resp.status_code
        facts = f"HTTP {status}" + (f" {resp.reason}" if resp.reason else "")
        hint = status_hint(status) or (path_hint(self.base_url) if status == 404 else None)
        if hint:  # what is wrong, the fix, then what the server said
            msg = f"{status_lead(status)}: {hint}"
            if detail:
                facts += f": {detail}"
        elif detail:  # the server's own sentence says what is wrong
            msg = f"{status_lead(status)}: {detail}"
        else:
            msg = status_lead(status)
        msg += f" ({facts}; {request_text(method, path)})"
        return NeensApiError(msg, status=status, detail=detail or None,
                             method=method, path=path)

    def _transport_error(self, method: str, path: str, exc: Exception,
                         read: float) -> NeensApiError:
        what = transport_failure(exc, connect_timeout=self.connect_timeout, read_timeout=read)
        msg = self._redact(f"could not reach Neens at {self.base_url}: {what} "
                           f"({request_text(method, path)})")
        return NeensApiError(msg, status=None, method=method, path=path)

    def _get(self, path: str, query: str = "") -> Any:
        return self.request("GET", path, query=query, safe=True)

    def _get_object(self, path: str, query: str = "") -> dict:
        return self._object("GET", path, self._get(path, query))

    def _post_object(self, path: str, body: Mapping[str, Any] | None = None) -> dict:
        return self._object("POST", path, self.request("POST", path, body=body))

    def quick(self, quick: bool) -> dict[str, Any]:
        """``request`` options of the interrupt path: one attempt, at most 5 s."""
        return {"timeout": min(self.timeout, 5.0), "retries": 0} if quick else {}
