"""The sandbox's HTTP layer as a real server: the key is checked before the body is read, and
connections are served by a bounded pool of threads."""

from __future__ import annotations

import socket
import time
from pathlib import Path
from urllib.parse import urlsplit

import requests

from neens_sandbox.pool import DEFAULT_WAITING, DEFAULT_WORKERS
from tests.helpers import Sandbox

HUGE = 32 * 1024 * 1024


def _addr(sb: Sandbox) -> tuple[str, int]:
    split = urlsplit(sb.url)
    assert split.hostname == "127.0.0.1" and split.port
    return split.hostname, split.port


def _answer(sock: socket.socket) -> bytes:
    data = b""
    while True:
        chunk = sock.recv(65536)
        if not chunk:
            return data
        data += chunk


def _post_headers_only(sb: Sandbox, auth: str | None) -> tuple[bytes, float]:
    """Send a POST's headers announcing a 32 MiB body, and no body at all."""
    sock = socket.create_connection(_addr(sb), timeout=10)
    lines = ["POST /preprod-evals HTTP/1.1", "Host: 127.0.0.1",
             "Content-Type: application/json", f"Content-Length: {HUGE}"]
    if auth is not None:
        lines.append(f"Authorization: {auth}")
    started = time.monotonic()
    sock.sendall(("\r\n".join(lines) + "\r\n\r\n").encode())
    try:
        return _answer(sock), time.monotonic() - started
    finally:
        sock.close()


def test_a_request_without_a_valid_key_is_refused_before_its_body(sandbox: Sandbox):
    # The body never comes: a server reading it first would wait (the 10 s socket timeout
    # here, 120 s on its side). The 401 comes at once and the connection is closed.
    for auth in (None, "Bearer nk_live_wrong", "Basic abc"):
        answer, seconds = _post_headers_only(sandbox, auth)
        head = answer.split(b"\r\n", 1)[0]
        assert head == b"HTTP/1.1 401 Unauthorized", answer[:300]
        assert b"Connection: close" in answer
        assert seconds < 5, seconds
    # With the right key the server does wait for the body (the request stays unanswered).
    sock = socket.create_connection(_addr(sandbox), timeout=1.5)
    sock.sendall((f"POST /preprod-evals HTTP/1.1\r\nHost: x\r\nContent-Length: {HUGE}\r\n"
                  f"Authorization: Bearer {sandbox.api_key}\r\n\r\n").encode())
    try:
        sock.recv(100)
        raise AssertionError("an authenticated request was answered before its body")
    except TimeoutError:
        pass
    finally:
        sock.close()


def test_small_bodies_with_a_bad_key_still_get_their_401(sandbox: Sandbox):
    # A client that already sent its (small) body reads the 401, not a connection reset.
    for _ in range(5):
        resp = requests.post(sandbox.url + "/preprod-evals", json={"dataset": "x" * 20000},
                             headers={"Authorization": "Bearer nk_live_wrong"}, timeout=10)
        assert resp.status_code == 401, resp.text
        assert resp.json()["detail"] == "invalid API key"
    # And the good key still works on the same server.
    assert sandbox.get("/flywheel/gates/ci").status_code == 200


def _threads(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("Threads:"):
            return int(line.split()[1])
    raise AssertionError("no Threads line")


def test_connections_beyond_the_pool_wait_or_get_503(sandbox: Sandbox):
    before = _threads(sandbox.proc.pid)
    held = []
    try:
        for _ in range(DEFAULT_WORKERS + DEFAULT_WAITING):
            held.append(socket.create_connection(_addr(sandbox), timeout=30))
        time.sleep(0.5)
        extra = [socket.create_connection(_addr(sandbox), timeout=30) for _ in range(20)]
        for sock in extra:
            answer = _answer(sock)
            assert answer.startswith(b"HTTP/1.1 503 Service Unavailable"), answer[:200]
            assert b"Retry-After: 1" in answer
            sock.close()
        threads = _threads(sandbox.proc.pid)
        # One thread per worker at most, whatever the number of connections (plus a few
        # service threads a run's scoring timers may start meanwhile: never one per socket).
        assert threads <= before + DEFAULT_WORKERS + 3, (before, threads)
    finally:
        for sock in held:
            sock.close()
    # Once the idle connections are gone the workers serve again.
    deadline = time.monotonic() + 30
    while True:
        try:
            if sandbox.get("/flywheel/gates/ci").status_code == 200:
                break
        except requests.ConnectionError:
            pass
        assert time.monotonic() < deadline, "the sandbox did not recover"
        time.sleep(0.2)


def test_idle_connections_are_dropped_after_10_s_and_the_pool_serves_again(sandbox: Sandbox):
    """200 connections that never send a request line: each is closed within ~10 s, so the
    pool serves a real request well before the 120 s a slow body may take."""
    held = [socket.create_connection(_addr(sandbox), timeout=30) for _ in range(200)]
    started = time.monotonic()
    try:
        assert _answer(held[0]) == b""  # the first worker's connection, closed unanswered
        dropped = time.monotonic() - started
        assert 8 < dropped < 15, dropped
        # 64 workers and 128 queued idle sockets: three rounds of 10 s at most (120 s each
        # before: six minutes)
        deadline = started + 45
        while True:
            try:
                if sandbox.get("/flywheel/gates/ci").status_code == 200:
                    break
            except requests.RequestException:
                pass
            assert time.monotonic() < deadline, "the sandbox stayed locked out"
            time.sleep(0.2)
    finally:
        for sock in held:
            sock.close()
