"""A fake of a *broken* Neens server (127.0.0.1, random port, own thread) for the bad-input
and reliability tests.

By default it answers like a well-behaved Neens for one run ``ppr_1`` with one item; a test
overrides single routes with raw answers (any status, content type and bytes, including HTML
error pages, truncated JSON and dropped connections) to see how the CLI copes.
"""

from __future__ import annotations

import contextlib
import json
import re
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

RUN_ID = "ppr_1"
DROP = "drop"  # a raw body value that closes the connection without an answer


@dataclass
class Raw:
    status: int = 200
    body: bytes | str | Any = b""  # bytes/str are sent as is; anything else as JSON
    content_type: str = "application/json"
    headers: dict[str, str] = field(default_factory=dict)
    drip: float = 0.0  # > 0: the body is sent one byte per `drip` seconds
    stream: Callable[[], Iterator[bytes]] | None = None  # an unsized body (may never end)

    def payload(self) -> bytes:
        if isinstance(self.body, bytes):
            return self.body
        if isinstance(self.body, str):
            return self.body.encode("utf-8")
        return json.dumps(self.body).encode("utf-8")


def good_run(status: str = "completed", **extra: Any) -> dict[str, Any]:
    run = {"id": RUN_ID, "status": status, "versionLabel": "v1", "datasetId": "ds_1",
           "completed": 1, "total": 1, "aggregate": {"passRate": 1.0, "passed": 1,
                                                     "failed": 0, "errored": 0,
                                                     "regressions": 0},
           "items": [{"datasetVersionItemId": "it_1", "input": "q", "passed": True,
                      "score": 1.0, "error": None}]}
    run.update(extra)
    return run


DEFAULTS: dict[tuple[str, str], Raw] = {
    ("POST", "/preprod-evals"): Raw(200, good_run("awaiting_traces")),
    ("GET", f"/preprod-evals/{RUN_ID}"): Raw(200, good_run()),
    ("GET", f"/preprod-evals/{RUN_ID}/items"): Raw(200, {"items": [
        {"item_id": "it_1", "input": "q", "expected_output": "a"}]}),
    ("POST", f"/preprod-evals/{RUN_ID}/start"): Raw(200, good_run("running")),
    ("POST", f"/preprod-evals/{RUN_ID}/cancel"): Raw(200, good_run("cancelled")),
    ("GET", f"/preprod-evals/{RUN_ID}/gate"): Raw(200, {
        "passed": True, "passRate": 1.0, "regressions": 0, "reasons": [], "gates": []}),
    ("GET", f"/preprod-evals/{RUN_ID}/comparison"): Raw(200, {
        "baseline": {"compared": False, "matchedItems": 0}, "regressions": []}),
    ("GET", f"/preprod-evals/{RUN_ID}/metrics"): Raw(200, {"metrics": []}),
    ("POST", f"/preprod-evals/{RUN_ID}/ci-result"): Raw(200, {}),
}


class _Handler(BaseHTTPRequestHandler):
    server: _Server
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:
        return

    def _serve(self) -> None:
        owner = self.server.owner
        path = self.path.split("?", 1)[0].rstrip("/")
        length = int(self.headers.get("Content-Length") or 0)
        if length:
            self.rfile.read(length)
        with owner.lock:
            owner.seen.append((self.command, path))
            answer = owner.answer(self.command, path)
        if callable(answer):
            answer = answer()
        if answer.body == DROP:
            self.close_connection = True
            with contextlib.suppress(OSError):
                self.connection.shutdown(2)
            return
        data = answer.payload()
        self.send_response(answer.status)
        self.send_header("Content-Type", answer.content_type)
        if answer.stream is None:
            self.send_header("Content-Length", str(len(data)))
        else:
            self.send_header("Connection", "close")
            self.close_connection = True
        for key, value in answer.headers.items():
            self.send_header(key, value)
        self.end_headers()
        with contextlib.suppress(OSError):  # the client may hang up on a hostile body
            if answer.stream is not None:
                for chunk in answer.stream():
                    self.wfile.write(chunk)
            elif answer.drip > 0:
                for i in range(len(data)):
                    self.wfile.write(data[i:i + 1])
                    self.wfile.flush()
                    time.sleep(answer.drip)
            else:
                self.wfile.write(data)

    do_GET = do_POST = do_PUT = do_DELETE = _serve


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    owner: BrokenNeens


class BrokenNeens:
    """``routes``: ``{(METHOD, path or regex): Raw | callable -> Raw}`` overriding DEFAULTS."""

    def __init__(self, routes: dict[tuple[str, str], Raw | Callable[[], Raw]] | None = None):
        self.routes = dict(routes or {})
        self.seen: list[tuple[str, str]] = []
        self.lock = threading.Lock()
        self._httpd = _Server(("127.0.0.1", 0), _Handler)
        self._httpd.owner = self
        self._thread = threading.Thread(target=self._httpd.serve_forever,
                                        kwargs={"poll_interval": 0.05}, daemon=True)

    def answer(self, method: str, path: str) -> Raw | Callable[[], Raw]:
        for (m, pattern), raw in self.routes.items():
            if m == method and (pattern == path or re.fullmatch(pattern, path)):
                return raw
        return DEFAULTS.get((method, path)) or Raw(404, {"detail": f"no route {path}"})

    @property
    def url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}"

    def __enter__(self) -> BrokenNeens:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(10)
