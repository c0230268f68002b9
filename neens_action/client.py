"""The Neens HTTP client: the only place URLs live.

One :class:`NeensClient` wraps a ``requests.Session``. Every call has a ``(connect, read)``
timeout. Safe calls (every GET, and the idempotent POSTs ``/start``, ``/cancel``,
``/ci-result`` and sweep cancel) are retried on transport errors, 429 (honouring
``Retry-After``, capped) and 5xx, with exponential backoff and full jitter. Calls that
create something (sweeps, suites, push trigger, preview, launch, regenerate) are never
retried: a lost response must not create a second object.

Creating a run (E1) is never repeated blindly either. It carries an ``Idempotency-Key``
header. A refusal that did nothing (429, or a connection that was never made) is retried.
When the outcome is unknown (a 5xx, a reset or a read timeout after the request left), the
client looks the key up (``GET /preprod-evals?idempotency_key=K`` => ``{"runs": [...]}``):
a run found is the answer; no run means nothing was created, so the create is sent again
(same key); a server that cannot answer the lookup makes it an error that says the run may
exist. Answers that should be JSON objects and are not (a list, a string) are errors too.

Every failure is a :class:`~neens_action.errors.NeensApiError` whose message is one line:
``<METHOD> <path> failed: HTTP <status>: <server detail>``. The server's ``detail`` is read
from a JSON error body; a non-JSON body contributes at most 200 characters of its text with
HTML stripped (never a whole proxy page). The API key is sent only in the Authorization
header and never appears in a message or a ``repr``.
"""

from __future__ import annotations

import json
import random
import time
import uuid
from collections.abc import Callable, Iterable, Mapping
from typing import Any

import requests

from neens_action import __version__
from neens_action.errors import NeensApiError
from neens_action.http_util import (
    STATUS_HINTS,
    WITHOUT_ITEMS,
    BearerAuth,
    backoff_delay,
    decode_body,
    drain,
    error_detail,
    expect_object,
    never_sent,
    parse_retry_after,
    path_segment,
    rows_reader,
    transport_failure,
)
from neens_action.items import ItemDigest
from neens_action.json_stream import keep

USER_AGENT = f"neens-action/{__version__} (+https://neens.ai)"
CI_RESULT_RETRIES = 8  # within a 15 s budget (post_ci_result)


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
        budget: float | None = None,
        decode: bool = True,
        reader: Callable[[Iterable[bytes]], Any] | None = None,
    ) -> Any:
        """One API call. ``safe`` enables retries (``retries`` overrides the client's count);
        ``conflict_ok`` turns a 409 into None; ``idempotency_key`` makes a create safe to
        retry the way the module docstring says; ``budget``: no retry starts after that many
        seconds; ``decode=False``: the 2xx body is drained unread (None is returned);
        ``reader``: decodes the 2xx body from its chunks as they arrive (see
        :mod:`neens_action.json_stream`), instead of ``json.loads`` on the whole body.

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
            try:
                resp = self.session.request(method, url, data=data, headers=headers,
                                            timeout=tmo, allow_redirects=True, stream=True)
                status = resp.status_code
                if 200 <= status < 300:
                    if not decode:
                        return drain(resp)
                    return decode_body(method, path, resp, reader)
                resp.content  # noqa: B018 - read the (small) error body here, under the except
            except requests.exceptions.RequestException as exc:
                err = self._transport_error(method, path, exc, read)
                if idempotency_key and not never_sent(exc):
                    found = self._created_by(idempotency_key, err)
                    if found is not None:
                        return found
                if last:
                    raise err from None
                self._sleep(backoff_delay(attempt, rand=self._rand))
                continue
            if status == 409 and conflict_ok:
                return None
            if idempotency_key and status >= 500:
                found = self._created_by(idempotency_key, self._status_error(method, path, resp))
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

    def _created_by(self, key: str, err: NeensApiError) -> dict | None:
        """After a create whose outcome is unknown: the run it made, or None when it made
        none (so sending it again is safe). Raises when the server cannot tell."""
        why = ""
        try:
            found = self.request("GET", "/preprod-evals",
                                 query=f"idempotency_key={path_segment(key)}", safe=True)
        except NeensApiError as exc:
            found, why = None, f": {exc}"
        runs = found.get("runs") if isinstance(found, dict) else None
        if not isinstance(runs, list):
            raise NeensApiError(
                f"{err}; the run may have been created anyway and the server could not say "
                f"(lookup by Idempotency-Key failed{why[:160]}), so it was not sent again: "
                "check the runs in Neens before re-running",
                status=err.status, detail=err.detail, method=err.method, path=err.path,
            )
        for run in runs:
            if isinstance(run, dict) and isinstance(run.get("id"), str) and run["id"]:
                return run
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
        reason = resp.reason or ""
        msg = f"{method} {path} failed: HTTP {resp.status_code}"
        if reason:
            msg += f" {reason}"
        if detail:
            msg += f": {detail}"
        hint = STATUS_HINTS.get(resp.status_code)
        if hint:
            msg += f" ({hint})"
        return NeensApiError(msg, status=resp.status_code, detail=detail or None,
                             method=method, path=path)

    def _transport_error(self, method: str, path: str, exc: Exception,
                         read: float) -> NeensApiError:
        what = transport_failure(exc, connect_timeout=self.connect_timeout, read_timeout=read)
        msg = self._redact(
            f"{method} {path} failed: {what} (is Neens reachable at {self.base_url}?)"
        )
        return NeensApiError(msg, status=None, method=method, path=path)

    def _get(self, path: str, query: str = "") -> Any:
        return self.request("GET", path, query=query, safe=True)

    def _get_object(self, path: str, query: str = "") -> dict:
        return self._object("GET", path, self._get(path, query))

    def _post_object(self, path: str, body: Mapping[str, Any] | None = None) -> dict:
        return self._object("POST", path, self.request("POST", path, body=body))

    # -- pre-prod runs (E1-E10) -------------------------------------------------------------

    def create_run(self, body: Mapping[str, Any]) -> dict:
        """E1 ``POST /preprod-evals`` with an ``Idempotency-Key``: never repeated blindly
        (see the module docstring)."""
        key = f"neens-action-{uuid.uuid4().hex}"
        run = self._object("POST", "/preprod-evals",
                           self.request("POST", "/preprod-evals", body=body,
                                        idempotency_key=key, reader=WITHOUT_ITEMS))
        run.pop("items", None)  # not kept: E3 lists the frozen items
        return run

    def get_run(self, run_id: str, *, digest: ItemDigest | None = None) -> dict:
        """E2 ``GET /preprod-evals/{id}``, streamed. ``digest``: the item rows are folded
        into it as they are decoded and the run comes back without ``items``, so a
        10,000-item run is never held whole."""
        path = f"/preprod-evals/{path_segment(run_id)}"
        if digest is None:
            return self._get_object(path)
        run = self._object("GET", path, self.request(
            "GET", path, safe=True, reader=rows_reader(digest.add, digest.reset)))
        run.pop("items", None)
        return run

    def get_run_summary(self, run_id: str) -> dict:
        """E2 without the per-item list (``?items=false``), for polling: a 10,000-item run
        is polled without moving 10,000 items each time. From a server that ignores the
        parameter, the items are dropped as they stream in (the poll never holds them)."""
        path = f"/preprod-evals/{path_segment(run_id)}"
        run = self._object("GET", path, self.request("GET", path, query="items=false",
                                                     safe=True, reader=WITHOUT_ITEMS))
        run.pop("items", None)
        return run

    def get_items(self, run_id: str, row: Callable[[Any], Any] = keep,
                  restart: Callable[[], None] | None = None) -> list[Any]:
        """E3 ``GET /preprod-evals/{id}/items``, envelope unwrapped (missing => []).
        ``row`` turns each row into what is kept, as the body streams in (None: dropped);
        ``restart`` is called before each read of the body (a retry reads it again)."""
        data = self.request("GET", f"/preprod-evals/{path_segment(run_id)}/items", safe=True,
                            reader=rows_reader(row, restart))
        if isinstance(data, list):  # a bare list (no envelope)
            return [kept for kept in map(row, data) if kept is not None]
        rows = data.get("items") if isinstance(data, dict) else None
        return rows if isinstance(rows, list) else []

    def start_run(self, run_id: str) -> None:
        """E4 ``POST /preprod-evals/{id}/start``; a 409 (already terminal) is fine. The
        answer (the whole run) is not read, so it is not decoded either."""
        self.request("POST", f"/preprod-evals/{path_segment(run_id)}/start", safe=True,
                     conflict_ok=True, decode=False)

    def trigger_push(self, run_id: str) -> dict:
        """E5 ``POST /preprod-evals/{id}/run`` (push trigger): never retried."""
        return self._post_object(f"/preprod-evals/{path_segment(run_id)}/run")

    def cancel_run(self, run_id: str, *, quick: bool = False) -> dict | None:
        """E6 ``POST /preprod-evals/{id}/cancel``; 409 (already terminal) => None.

        ``quick`` (the interrupt path): one attempt, at most 5 s.
        """
        return self.request("POST", f"/preprod-evals/{path_segment(run_id)}/cancel", safe=True,
                            conflict_ok=True, **_quick(self, quick))

    def get_gate(self, run_id: str) -> dict:
        """E7 ``GET /preprod-evals/{id}/gate``."""
        return self._get_object(f"/preprod-evals/{path_segment(run_id)}/gate")

    def get_comparison(self, run_id: str, baseline: str | None = None) -> dict:
        """E8 ``GET /preprod-evals/{id}/comparison[?baseline=SPEC]``."""
        query = f"baseline={path_segment(baseline)}" if baseline else ""
        return self._get_object(f"/preprod-evals/{path_segment(run_id)}/comparison", query)

    def get_metrics(self, run_id: str) -> dict:
        """E9 ``GET /preprod-evals/{id}/metrics``."""
        return self._get_object(f"/preprod-evals/{path_segment(run_id)}/metrics")

    def post_ci_result(self, run_id: str, body: Mapping[str, Any], *,
                       quick: bool = False) -> Any:
        """E10 ``POST /preprod-evals/{id}/ci-result``: retried briefly (at most 10 s per
        attempt, up to 8 retries but none starting after 15 s: five faults in a row must
        not lose the verdict, and a slow report cannot hold a build); ``quick`` (the
        interrupt path): one attempt, 5 s."""
        kw = _quick(self, quick) if quick else {
            "timeout": min(self.timeout, 10.0), "retries": CI_RESULT_RETRIES if self.retries else 0,
            "budget": 15.0}
        return self.request("POST", f"/preprod-evals/{path_segment(run_id)}/ci-result", body=body,
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
        return self._post_object("/model-sweeps/preview", body)

    def create_sweep(self, body: Mapping[str, Any]) -> dict:
        """E13 ``POST /model-sweeps``: never retried."""
        return self._post_object("/model-sweeps", body)

    def get_sweep(self, sweep_id: str) -> dict:
        """E14 ``GET /model-sweeps/{id}``."""
        return self._get_object(f"/model-sweeps/{path_segment(sweep_id)}")

    def get_sweep_comparison(self, sweep_id: str, bar: float | None = None,
                             baseline_arm: str | None = None) -> dict:
        """E15 ``GET /model-sweeps/{id}/comparison[?bar=&baselineArm=]``."""
        parts = []
        if bar is not None:
            parts.append(f"bar={path_segment(repr(float(bar)))}")
        if baseline_arm:
            parts.append(f"baselineArm={path_segment(baseline_arm)}")
        return self._get_object(f"/model-sweeps/{path_segment(sweep_id)}/comparison",
                                "&".join(parts))

    def cancel_sweep(self, sweep_id: str, *, quick: bool = False) -> dict | None:
        """E16 ``POST /model-sweeps/{id}/cancel``; 409 (already terminal) => None.
        ``quick`` (the interrupt path): one attempt, at most 5 s."""
        return self.request("POST", f"/model-sweeps/{path_segment(sweep_id)}/cancel", safe=True,
                            conflict_ok=True, **_quick(self, quick))

    # -- scenario suites (E17-E20) -------------------------------------------------------------

    def create_suite(self, body: Mapping[str, Any]) -> dict:
        """E17 ``POST /scenario-suites``: never retried."""
        return self._post_object("/scenario-suites", body)

    def get_suite(self, suite_id: str) -> dict:
        """E18 ``GET /scenario-suites/{id}``."""
        return self._get_object(f"/scenario-suites/{path_segment(suite_id)}")

    def regenerate_suite(self, suite_id: str, body: Mapping[str, Any] | None = None) -> dict:
        """E19 ``POST /scenario-suites/{id}/regenerate``: never retried."""
        return self._post_object(f"/scenario-suites/{path_segment(suite_id)}/regenerate",
                                 dict(body or {}))

    def launch_suite(self, suite_id: str, body: Mapping[str, Any]) -> dict:
        """E20 ``POST /scenario-suites/{id}/launch`` (creates a run): never retried."""
        return self._post_object(f"/scenario-suites/{path_segment(suite_id)}/launch", body)


def _quick(client: NeensClient, quick: bool) -> dict[str, Any]:
    return {"timeout": min(client.timeout, 5.0), "retries": 0} if quick else {}


NeensEvalClient = NeensClient

__all__ = ["USER_AGENT", "NeensClient", "NeensEvalClient", "backoff_delay",
           "error_detail", "parse_retry_after"]
