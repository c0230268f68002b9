"""A tiny scripted http.server on 127.0.0.1 for the client tests (a fake at the edge).

``Fake`` (the ``fake`` fixture of tests/unit/conftest.py) answers each request with the next
``fake.script`` entry ``(status, headers, body)``; a ``Cut`` body breaks off."""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from neens_action.api.client import (
    NeensClient,
)

KEY = "nk_live_secret_client_test_key"


class Cut(bytes):
    """A body that breaks off: its Content-Length promises 100 bytes more than are sent."""


class Fake:
    """Scripted responses: a list of (status, headers, body) popped per request."""

    def __init__(self) -> None:
        self.script: list[tuple[int, dict[str, str], bytes | str | dict | None]] = []
        self.requests: list[dict] = []
        self.delay = 0.0
        handler = self._handler()
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, args=(0.05,),
                                       daemon=True)
        self.thread.start()

    def _handler(self):
        fake = self

        class H(BaseHTTPRequestHandler):
            def log_message(self, *a):  # quiet
                pass

            def _serve(self):
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else b""
                fake.requests.append({"method": self.command, "path": self.path,
                                      "headers": dict(self.headers), "body": body})
                if fake.delay:
                    time.sleep(fake.delay)
                status, headers, payload = (fake.script.pop(0) if fake.script
                                            else (200, {}, {"ok": True}))
                if isinstance(payload, dict | list):
                    data = json.dumps(payload).encode()
                    headers = {"Content-Type": "application/json", **headers}
                elif isinstance(payload, str):
                    data = payload.encode()
                else:
                    data = payload or b""
                self.send_response(status)
                for k, v in headers.items():
                    self.send_header(k, v)
                cut = isinstance(payload, Cut)
                self.send_header("Content-Length", str(len(data) + (100 if cut else 0)))
                self.end_headers()
                try:
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):  # the client stopped reading
                    self.close_connection = True
                    return
                if cut:
                    self.wfile.flush()
                    self.close_connection = True

            do_GET = do_POST = _serve

        return H

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()




def make(fake: Fake, **kw) -> tuple[NeensClient, list[float]]:
    sleeps: list[float] = []
    kw.setdefault("timeout", 5.0)
    client = NeensClient(fake.url + "/", KEY, kw.pop("project_id", None),
                         sleep=sleeps.append, rand=lambda a, b: b, **kw)
    return client, sleeps


def posts(fake: Fake) -> list[dict]:
    return [r for r in fake.requests if r["method"] == "POST"]


def rows_body(n: int, **extra) -> dict:
    return {"id": "r", "status": "completed", **extra, "items": [
        {"datasetVersionItemId": f"b_{i}", "input": f"prompt {i}", "passed": i % 2 == 0,
         "output": "o" * 50, "error": None if i % 2 == 0 else "judge said no"}
        for i in range(n)]}
