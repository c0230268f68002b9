"""The sandbox's bounded worker pool: a fixed number of threads, a bounded queue, 503 beyond."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, HTTPServer

import pytest

from neens_sandbox.pool import BUSY_RESPONSE, BoundedPoolMixIn


class _Hello(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    timeout = 30

    def do_GET(self) -> None:
        self.send_response(200)
        self.send_header("Content-Length", "2")
        self.end_headers()
        self.wfile.write(b"ok")

    def log_message(self, format: str, *args: object) -> None:
        return


class _Server(BoundedPoolMixIn, HTTPServer):
    def __init__(self, workers: int, waiting: int) -> None:
        self.init_pool(workers, waiting)
        super().__init__(("127.0.0.1", 0), _Hello)

    def server_close(self) -> None:
        super().server_close()
        self.close_pool()


@pytest.fixture
def server() -> Iterator[_Server]:
    srv = _Server(workers=2, waiting=1)
    thread = threading.Thread(target=srv.serve_forever, daemon=True)
    thread.start()
    yield srv
    srv.shutdown()
    srv.server_close()


def _connect(srv: _Server) -> socket.socket:
    sock = socket.create_connection(srv.server_address[:2], timeout=5)
    return sock


def _get(sock: socket.socket) -> bytes:
    sock.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
    data = b""
    while b"\r\n\r\n" not in data or not data.endswith((b"ok", b"}")):
        chunk = sock.recv(4096)
        if not chunk:
            break
        data += chunk
    return data


def _pool_threads() -> int:
    return sum(t.name.startswith("sandbox-http") for t in threading.enumerate())


def test_idle_connections_hold_workers_then_the_queue_then_503(server: _Server):
    # Two idle keep-alive connections occupy both workers, a third waits in the queue.
    held = [_connect(server) for _ in range(3)]
    time.sleep(0.3)
    # The fourth finds neither a worker nor a place in the queue: 503, closed, unread.
    extra = _connect(server)
    answer = extra.recv(4096)
    assert answer == BUSY_RESPONSE
    assert extra.recv(4096) == b""  # closed
    extra.close()
    # Many more: still 503 each, and never a new thread.
    for _ in range(40):
        sock = _connect(server)
        assert sock.recv(4096).startswith(b"HTTP/1.1 503 ")
        sock.close()
    assert _pool_threads() <= 2
    # The queued connection is served once a worker is free.
    assert _get(held[0]).endswith(b"ok")
    held[0].close()
    assert _get(held[2]).endswith(b"ok")
    for sock in held[1:]:
        sock.close()


def test_freed_slots_serve_again(server: _Server):
    for _ in range(20):  # far more connections over time than workers + queue
        sock = _connect(server)
        assert _get(sock).endswith(b"ok")
        sock.close()
    time.sleep(0.2)
    assert _get(_connect(server)).endswith(b"ok")
    assert _pool_threads() <= 2


def test_bad_sizes_are_refused():
    with pytest.raises(ValueError):
        _Server(workers=0, waiting=1)
