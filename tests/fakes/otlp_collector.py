"""A company OTLP/HTTP collector on 127.0.0.1 (its own port, so another origin than the
sandbox): it accepts every export (traces, metrics, logs) and records the path, the headers
and the body size of each, so a test can check who sent what, and never the Neens key."""

from __future__ import annotations

import threading
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


@dataclass
class Export:
    path: str
    headers: dict[str, str]  # lower-cased names
    size: int


class _Handler(BaseHTTPRequestHandler):
    server: _Server
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: object) -> None:
        return

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        with self.server.lock:
            self.server.exports.append(Export(
                self.path, {k.lower(): v for k, v in self.headers.items()}, len(body)))
        self.send_response(200)
        self.send_header("Content-Type", self.headers.get("Content-Type") or "application/json")
        self.send_header("Content-Length", "0")
        self.end_headers()


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self) -> None:
        self.exports: list[Export] = []
        self.lock = threading.Lock()
        super().__init__(("127.0.0.1", 0), _Handler)


class Collector:
    def __init__(self) -> None:
        self._httpd = _Server()
        self._thread = threading.Thread(target=self._httpd.serve_forever,
                                        kwargs={"poll_interval": 0.05}, daemon=True)

    @property
    def url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}"

    @property
    def exports(self) -> list[Export]:
        with self._httpd.lock:
            return list(self._httpd.exports)

    def paths(self) -> set[str]:
        return {e.path for e in self.exports}

    def __enter__(self) -> Collector:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(10)
