"""A bounded worker pool for the sandbox's HTTP server.

``ThreadingHTTPServer`` starts one thread per connection, without a limit: a client opening
thousands of connections gets thousands of threads. Here a fixed set of ``workers`` threads
serves connections; up to ``waiting`` more connections queue for a free worker, and any
connection beyond that is answered ``503`` with ``Retry-After`` and closed at once, without
reading its request.
"""

from __future__ import annotations

import json
import socket
import threading
from concurrent.futures import ThreadPoolExecutor
from socketserver import BaseServer

DEFAULT_WORKERS = 64
DEFAULT_WAITING = 128

_BUSY_BODY = json.dumps({"detail": "sandbox busy: too many connections, retry shortly"})
BUSY_RESPONSE = (
    "HTTP/1.1 503 Service Unavailable\r\n"
    "Content-Type: application/json\r\n"
    "Retry-After: 1\r\n"
    "Connection: close\r\n"
    f"Content-Length: {len(_BUSY_BODY)}\r\n"
    "\r\n"
    f"{_BUSY_BODY}"
).encode("ascii")


class BoundedPoolMixIn:
    """Mix in before a ``socketserver.TCPServer``: connections go to a fixed thread pool.

    ``slots`` counts the connections held (being served or queued); when none is free, the
    connection is refused with :data:`BUSY_RESPONSE` by the accepting thread itself.
    """

    def init_pool(self, workers: int = DEFAULT_WORKERS, waiting: int = DEFAULT_WAITING) -> None:
        if workers < 1 or waiting < 0:
            raise ValueError("the pool needs at least one worker and no negative queue")
        self.pool_workers = workers
        self._slots = threading.BoundedSemaphore(workers + waiting)
        self._pool = ThreadPoolExecutor(workers, thread_name_prefix="sandbox-http")

    def process_request(self, request: socket.socket, client_address: tuple[str, int]) -> None:
        server = self._as_server()
        if not self._slots.acquire(blocking=False):
            self._refuse(request)
            return
        try:
            self._pool.submit(self._serve, request, client_address)
        except RuntimeError:  # the pool is shut down: the server is closing
            self._slots.release()
            server.shutdown_request(request)

    def _serve(self, request: socket.socket, client_address: tuple[str, int]) -> None:
        server = self._as_server()
        try:
            server.finish_request(request, client_address)
        except Exception:
            server.handle_error(request, client_address)
        finally:
            server.shutdown_request(request)
            self._slots.release()

    def _refuse(self, request: socket.socket) -> None:
        try:
            request.settimeout(1.0)
            request.sendall(BUSY_RESPONSE)
        except OSError:
            pass
        self._as_server().shutdown_request(request)

    def close_pool(self) -> None:
        self._pool.shutdown(wait=False, cancel_futures=True)

    def _as_server(self) -> BaseServer:
        assert isinstance(self, BaseServer)
        return self
