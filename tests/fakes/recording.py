"""A real HTTP server on 127.0.0.1 (random port, own thread) that records every request.

Fakes subclass :class:`RecordingServer` and implement ``handle(req) -> Reply``; tests read
``server.requests`` to see exactly what a client sent.
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit


@dataclass
class Request:
    method: str
    path: str
    query: dict[str, str]
    headers: dict[str, str]
    body: Any = None  # decoded JSON, or the raw text


@dataclass
class Reply:
    status: int = 200
    body: Any = None
    headers: dict[str, str] = field(default_factory=dict)


class _Handler(BaseHTTPRequestHandler):
    server: _Server
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:  # quiet
        return

    def _serve(self) -> None:
        parts = urlsplit(self.path)
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length).decode("utf-8") if length else ""
        try:
            body: Any = json.loads(raw) if raw else None
        except ValueError:
            body = raw
        req = Request(
            method=self.command,
            path=parts.path,
            query={k: v[-1] for k, v in parse_qs(parts.query).items()},
            headers={k.lower(): v for k, v in self.headers.items()},
            body=body,
        )
        owner = self.server.owner
        with owner.lock:
            owner.requests.append(req)
            try:
                reply = owner.handle(req)
            except Exception as exc:  # a fake bug must be visible, not a hang
                reply = Reply(500, {"message": f"fake server error: {exc!r}"})
        data = b"" if reply.body is None else json.dumps(reply.body).encode("utf-8")
        self.send_response(reply.status)
        self.send_header("Content-Type", "application/json; charset=utf-8")
        self.send_header("Content-Length", str(len(data)))
        for key, value in reply.headers.items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(data)

    do_GET = do_POST = do_PATCH = do_PUT = do_DELETE = _serve


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    owner: RecordingServer


class RecordingServer:
    def __init__(self) -> None:
        self.requests: list[Request] = []
        self.lock = threading.RLock()
        self._httpd = _Server(("127.0.0.1", 0), _Handler)
        self._httpd.owner = self
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )

    @property
    def url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}"

    def start(self) -> RecordingServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(10)

    def __enter__(self) -> RecordingServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def handle(self, req: Request) -> Reply:  # pragma: no cover - subclasses implement
        raise NotImplementedError

    def calls(self, method: str | None = None, contains: str = "") -> list[Request]:
        with self.lock:
            return [
                r for r in self.requests
                if (method is None or r.method == method) and contains in r.path
            ]
