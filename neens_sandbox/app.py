"""The sandbox HTTP server: router, authentication, JSON errors and chaos.

Routes come from the modules listed in ``neens_sandbox.routes.ROUTE_MODULES``; each
declares ``ROUTES`` (and may define ``on_start(ctx)``, called once the database is open, e.g.
to resume background work after a restart). For every request, in order:

1. the route is looked up (no side effects);
2. chaos (``--chaos P``), never on routes declared with ``chaos=False`` (``/v1/traces``): a
   500, a 429 with ``Retry-After: 1`` or a dropped connection is answered BEFORE the handler
   runs, so a faulted request has no side effects; a stall sleeps ``stall_s`` (2 s) and then
   handles the request normally;
3. ``Authorization: Bearer <key>`` is checked on every route BEFORE the body is read: a 401
   ``{"detail"}`` is answered without reading it, and the connection is closed;
4. the body is read (chunked and gzip/deflate encodings accepted, 32 MiB cap);
5. unknown path => 404, wrong method => 405, then the handler. ``ApiError`` => its status
   with ``{"detail": ...}``; any other exception => 500 (logged); the server keeps serving.

Connections are served by a bounded pool of threads (``neens_sandbox.pool``): excess
connections wait for a worker, and beyond the queue they are answered 503.
"""

from __future__ import annotations

import hmac
import importlib
import random
import socket
import struct
import threading
import time
import traceback
import zlib
from http.server import BaseHTTPRequestHandler, HTTPServer
from typing import Any
from urllib.parse import parse_qsl, unquote, urlsplit

from neens_sandbox.context import Context
from neens_sandbox.http import ApiError, Request, Response, Route
from neens_sandbox.pool import BoundedPoolMixIn

MAX_BODY = 32 * 1024 * 1024


def load_routes() -> tuple[list[Route], list[Any]]:
    """Import every route module (which registers its tables); return routes and modules."""
    from neens_sandbox.routes import ROUTE_MODULES

    routes: list[Route] = []
    modules = []
    for name in ROUTE_MODULES:
        module = importlib.import_module(name)
        modules.append(module)
        routes.extend(getattr(module, "ROUTES", []))
    return routes, modules


class Chaos:
    """Seeded fault picker shared by all request threads."""

    def __init__(self, rate: float, seed: int | None, kinds: tuple[str, ...]) -> None:
        self.rate = rate
        self.kinds = kinds
        self.rng = random.Random(seed)
        self.lock = threading.Lock()

    def pick(self) -> str | None:
        if self.rate <= 0 or not self.kinds:
            return None
        with self.lock:
            if self.rng.random() >= self.rate:
                return None
            return self.rng.choice(self.kinds)


class SandboxServer(BoundedPoolMixIn, HTTPServer):
    allow_reuse_address = True
    request_queue_size = 256

    def __init__(self, addr: tuple[str, int], ctx: Context, routes: list[Route]) -> None:
        self.ctx = ctx
        self.routes = routes
        opts = ctx.options
        self.chaos = Chaos(opts.chaos, opts.chaos_seed, opts.chaos_kinds)
        self.init_pool()
        super().__init__(addr, SandboxHandler)

    def server_close(self) -> None:
        super().server_close()
        self.close_pool()


class SandboxHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # Keep-alive clients would otherwise wait ~40 ms per request on delayed ACKs (Nagle).
    disable_nagle_algorithm = True
    server_version = "neens-sandbox/1"
    timeout = 120  # a silent client cannot hold a thread forever (headers, body)
    # ...and a connection that sends no request line (a new one, or the next request on a
    # kept-alive one) within this many seconds is dropped: idle sockets cannot hold the pool
    request_line_timeout = 10.0
    server: SandboxServer

    def handle_one_request(self) -> None:
        self.connection.settimeout(self.request_line_timeout)
        super().handle_one_request()

    def parse_request(self) -> bool:
        self.connection.settimeout(self.timeout)  # the request line is in
        return super().parse_request()

    def log_message(self, format: str, *args: Any) -> None:
        return  # one line per request is written by _handle instead

    def do_GET(self) -> None:
        self._handle()

    def do_POST(self) -> None:
        self._handle()

    def do_PUT(self) -> None:
        self._handle()

    def do_PATCH(self) -> None:
        self._handle()

    def do_DELETE(self) -> None:
        self._handle()

    # -- plumbing -----------------------------------------------------------------------
    def _handle(self) -> None:
        started = time.monotonic()
        ctx = self.server.ctx
        split = urlsplit(self.path)
        path = split.path.rstrip("/") or "/"
        method = self.command.upper()
        route, params, allowed = self._lookup(method, path)
        fault = None
        if path != "/v1/traces" and (route is None or route.chaos):
            fault = self.server.chaos.pick()
        if fault == "drop":
            ctx.log(f"{method} {path} -> chaos: dropped connection")
            self._drop()
            return
        if fault == "stall":
            time.sleep(ctx.options.stall_s)
        headers = {k.lower(): v for k, v in self.headers.items()}
        try:
            self._authenticate(headers)
        except ApiError as exc:
            # The body (up to 32 MiB) is never read for an unauthenticated client: the
            # connection cannot be reused with it unread, so it is closed after the answer.
            self.close_connection = True
            self._send(Response(exc.status, {"detail": exc.detail}), method, path, started)
            self._discard_small_body()
            return
        try:
            body = self._read_body()
        except ApiError as exc:
            self.close_connection = True
            self._send(Response(exc.status, {"detail": exc.detail}), method, path, started)
            return
        if fault == "500":
            resp = Response(500, {"detail": "chaos: injected server error (nothing was done)"})
            self._send(resp, method, path, started, note="chaos")
            return
        if fault == "429":
            resp = Response(429, {"detail": "chaos: injected rate limit (nothing was done)"},
                            headers={"Retry-After": "1"})
            self._send(resp, method, path, started, note="chaos")
            return
        try:
            if route is None:
                if allowed:
                    raise ApiError(405, f"method {method} not allowed on {path}")
                raise ApiError(404, f"no such route: {method} {path}")
            req = Request(
                method=method, path=path, query=dict(parse_qsl(split.query)),
                headers=headers, body=body, ctx=ctx,
                params={k: unquote(v) for k, v in (params or {}).items()},
            )
            result = route.handler(req)
            resp = result if isinstance(result, Response) else Response(200, result)
        except ApiError as exc:
            resp = Response(exc.status, {"detail": exc.detail}, headers=dict(exc.headers))
        except Exception as exc:
            ctx.log(f"{method} {path} crashed: {type(exc).__name__}: {exc}")
            ctx.log(traceback.format_exc().rstrip())
            resp = Response(500, {"detail": f"internal sandbox error ({type(exc).__name__})"})
        self._send(resp, method, path, started)

    def _lookup(self, method: str, path: str) -> tuple[Route | None, dict | None, bool]:
        allowed = False
        for route in self.server.routes:
            params = route.match(path)
            if params is None:
                continue
            if route.method == method:
                return route, params, True
            allowed = True
        return None, None, allowed

    def _authenticate(self, headers: dict[str, str]) -> None:
        auth = headers.get("authorization", "")
        scheme, _, token = auth.strip().partition(" ")
        if not auth:
            raise ApiError(401, "missing API key: send 'Authorization: Bearer <nk_live_ key>'")
        if scheme.lower() != "bearer" or not token.strip():
            raise ApiError(401, "malformed Authorization header: expected 'Bearer <key>'")
        token = token.strip()
        keys = self.server.ctx.api_keys
        if not any(hmac.compare_digest(token.encode(), k.encode()) for k in keys):
            raise ApiError(401, "invalid API key")

    def _discard_small_body(self) -> None:
        """After an early answer: swallow a small declared body (up to 64 KiB), so closing
        the socket with it unread does not reset the connection before the client reads the
        answer. A larger or chunked body is never read."""
        try:
            length = int(self.headers.get("Content-Length") or 0)
        except ValueError:
            return
        if 0 < length <= 65536 and "Transfer-Encoding" not in self.headers:
            try:
                self.connection.settimeout(1.0)
                self.rfile.read(length)
            except OSError:
                pass

    def _read_body(self) -> bytes:
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            chunks, total = [], 0
            while True:
                line = self.rfile.readline(65537)
                try:
                    size = int(line.split(b";")[0].strip() or b"0", 16)
                except ValueError:
                    raise ApiError(400, "malformed chunked body") from None
                if size == 0:
                    while self.rfile.readline(65537) not in (b"\r\n", b"\n", b""):
                        pass
                    break
                total += size
                if total > MAX_BODY:
                    raise ApiError(413, "request body too large")
                chunks.append(self.rfile.read(size))
                self.rfile.readline(3)
            raw = b"".join(chunks)
        else:
            try:
                length = int(self.headers.get("Content-Length") or 0)
            except ValueError:
                raise ApiError(400, "invalid Content-Length") from None
            if length < 0 or length > MAX_BODY:
                raise ApiError(413, "request body too large")
            raw = self.rfile.read(length) if length else b""
        encoding = self.headers.get("Content-Encoding", "").lower().strip()
        if encoding in ("gzip", "deflate"):
            try:
                wbits = 47 if encoding == "gzip" else 15
                dec = zlib.decompressobj(wbits)
                raw = dec.decompress(raw, MAX_BODY)
                if dec.unconsumed_tail:
                    raise ApiError(413, "request body too large once decompressed")
            except zlib.error:
                raise ApiError(400, f"malformed {encoding} body") from None
        elif encoding not in ("", "identity"):
            raise ApiError(415, f"unsupported Content-Encoding {encoding}")
        return raw

    def _send(self, resp: Response, method: str, path: str, started: float,
              note: str = "") -> None:
        try:
            payload = resp.encode()
        except (TypeError, ValueError) as exc:
            resp = Response(500, {"detail": f"internal sandbox error (encode: {exc})"})
            payload = resp.encode()
        try:
            self.send_response(resp.status)
            self.send_header("Content-Type", resp.content_type)
            self.send_header("Content-Length", str(len(payload)))
            for key, value in resp.headers.items():
                self.send_header(key, value)
            if self.close_connection:
                self.send_header("Connection", "close")
            self.end_headers()
            self.wfile.write(payload)
            self.wfile.flush()
        except OSError:
            self.close_connection = True
        ms = (time.monotonic() - started) * 1000
        extra = f" ({note})" if note else ""
        self.server.ctx.log(f"{method} {path} -> {resp.status} {ms:.0f}ms{extra}")

    def _drop(self) -> None:
        self.close_connection = True
        try:
            self.connection.setsockopt(
                socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0)
            )
            self.connection.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass


def build_server(ctx: Context, host: str, port: int) -> SandboxServer:
    """Import the route modules, create their tables, run ``on_start`` hooks, bind."""
    routes, modules = load_routes()
    ctx.db.ensure_schema()
    server = SandboxServer((host, port), ctx, routes)
    for module in modules:
        hook = getattr(module, "on_start", None)
        if hook is not None:
            hook(ctx)
    return server

