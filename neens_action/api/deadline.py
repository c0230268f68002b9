"""A wall-clock budget per request, kept even by a server that drips one byte at a time.

``requests`` timeouts bound each socket read, so a server sending a byte every few seconds
never times out. :class:`Deadline` arms a timer for one call; the connections made through a
:class:`DeadlineAdapter` tell the deadline of their thread which socket they use, and when
the budget runs out the timer shuts that socket down: the blocked read returns at once and
the call fails. :attr:`Deadline.fired` tells the caller why (it then raises one clear error
and does not retry).
"""

from __future__ import annotations

import contextlib
import socket
import threading
from typing import Any

from requests.adapters import HTTPAdapter
from urllib3.connection import HTTPConnection, HTTPSConnection
from urllib3.connectionpool import HTTPConnectionPool, HTTPSConnectionPool

_ACTIVE = threading.local()


class Deadline:
    """``with Deadline(seconds):`` around one call (sending it and reading its whole body)."""

    def __init__(self, seconds: float | None) -> None:
        self.seconds = seconds
        self.fired = False
        self._lock = threading.Lock()
        self._conn: HTTPConnection | None = None
        self._timer: threading.Timer | None = None

    def __enter__(self) -> Deadline:
        self._outer = getattr(_ACTIVE, "deadline", None)
        _ACTIVE.deadline = self
        if self.seconds is not None and self.seconds > 0:
            self._timer = threading.Timer(self.seconds, self._fire)
            self._timer.daemon = True
            self._timer.start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._timer is not None:
            self._timer.cancel()
        _ACTIVE.deadline = self._outer
        with self._lock:
            self._conn = None

    def attach(self, conn: HTTPConnection) -> None:
        with self._lock:
            self._conn = conn
            fired = self.fired
        if fired:
            _shut(conn)

    def _fire(self) -> None:
        with self._lock:
            self.fired = True
            conn = self._conn
        if conn is not None:
            _shut(conn)


def _shut(conn: HTTPConnection) -> None:
    sock = getattr(conn, "sock", None)
    if sock is not None:
        # the plain socket's shutdown (an SSLSocket's own would unwrap it under the reader)
        with contextlib.suppress(OSError):
            socket.socket.shutdown(sock, socket.SHUT_RDWR)


def _attach(conn: HTTPConnection) -> None:
    deadline = getattr(_ACTIVE, "deadline", None)
    if deadline is not None:
        deadline.attach(conn)


class _HTTPConnection(HTTPConnection):
    def request(self, *args: Any, **kwargs: Any) -> None:  # type: ignore[override]
        _attach(self)
        super().request(*args, **kwargs)


class _HTTPSConnection(HTTPSConnection):
    def request(self, *args: Any, **kwargs: Any) -> None:  # type: ignore[override]
        _attach(self)
        super().request(*args, **kwargs)


class _HTTPPool(HTTPConnectionPool):
    ConnectionCls = _HTTPConnection


class _HTTPSPool(HTTPSConnectionPool):
    ConnectionCls = _HTTPSConnection


_POOLS = {"http": _HTTPPool, "https": _HTTPSPool}


class DeadlineAdapter(HTTPAdapter):
    """An ``HTTPAdapter`` whose connections report to the thread's :class:`Deadline`."""

    def init_poolmanager(self, *args: Any, **kwargs: Any) -> None:
        super().init_poolmanager(*args, **kwargs)
        self.poolmanager.pool_classes_by_scheme = _POOLS

    def proxy_manager_for(self, proxy: str, **proxy_kwargs: Any) -> Any:
        manager = super().proxy_manager_for(proxy, **proxy_kwargs)
        manager.pool_classes_by_scheme = _POOLS
        return manager
