"""A bounded worker pool for the sandbox's HTTP server.

``ThreadingHTTPServer`` starts one thread per connection, without a limit: a client opening
thousands of connections gets thousands of threads. Here at most ``workers`` threads (started
on demand) serve connections; up to ``waiting`` more connections queue for a free worker, and any
connection beyond that is answered ``503`` with ``Retry-After`` and closed at once, without
reading its request.
"""

from __future__ import annotations

import json
import queue
import socket
import threading
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
        self._queue: queue.SimpleQueue[tuple[socket.socket, tuple[str, int]] | None] = (
            queue.SimpleQueue())
        self._pool_lock = threading.Lock()
        self._threads: list[threading.Thread] = []
        self._idle = 0

    def process_request(self, request: socket.socket, client_address: tuple[str, int]) -> None:
        if not self._slots.acquire(blocking=False):
            self._refuse(request)
            return
        with self._pool_lock:
            # Workers start on demand, up to the cap. Daemon threads, like the standard
            # threading server's: a client holding a keep-alive connection never delays exit.
            if self._idle <= self._queue.qsize() and len(self._threads) < self.pool_workers:
                worker = threading.Thread(target=self._work, daemon=True,
                                          name=f"sandbox-http-{len(self._threads) + 1}")
                self._threads.append(worker)
                worker.start()
        self._queue.put((request, client_address))

    def _work(self) -> None:
        server = self._as_server()
        while True:
            with self._pool_lock:
                self._idle += 1
            job = self._queue.get()
            with self._pool_lock:
                self._idle -= 1
            if job is None:
                return
            request, client_address = job
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
        with self._pool_lock:
            count = len(self._threads)
        for _ in range(count):
            self._queue.put(None)

    def _as_server(self) -> BaseServer:
        assert isinstance(self, BaseServer)
        return self
