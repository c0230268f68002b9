#!/usr/bin/env python3
"""A tiny HTTP agent for Neens push mode (decision 11 of the API notes).

    python examples/http_agent/server.py --port 9000 [--mode good|bad|leaky] [--text]

Neens POSTs ``{"input", "item_id", "run_id", "version_label", "model"?}`` to ``/answer``; the
agent replies ``{"output", "model", "usage": {"input_tokens", "output_tokens"}}`` (or the
bare answer as text/plain with ``--text``). Same deterministic answers as examples/agent.
Prints ``http agent listening on http://HOST:PORT`` once ready; stops on SIGINT/SIGTERM.
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "agent"))

from answers import answer, usage

DEFAULT_MODEL = "gpt-4o-mini"


def make_handler(mode: str, text_reply: bool) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        timeout = 30

        def log_message(self, format: str, *args: object) -> None:
            return

        def _reply(self, status: int, body: bytes, ctype: str) -> None:
            self.send_response(status)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length)
            if self.path.rstrip("/") != "/answer":
                self._reply(404, b'{"detail": "not found"}', "application/json")
                return
            try:
                req = json.loads(raw)
                prompt = req["input"]
                if not isinstance(prompt, str):
                    raise TypeError("input must be text")
            except (ValueError, KeyError, TypeError) as exc:
                body = json.dumps({"detail": f"bad request: {exc}"}).encode()
                self._reply(400, body, "application/json")
                return
            output = answer(prompt, mode)
            if text_reply:
                self._reply(200, output.encode(), "text/plain; charset=utf-8")
                return
            in_tok, out_tok = usage(prompt, output)
            body = json.dumps({
                "output": output, "model": req.get("model") or DEFAULT_MODEL,
                "usage": {"input_tokens": in_tok, "output_tokens": out_tok},
            }).encode()
            self._reply(200, body, "application/json")

    return Handler


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=9000)
    parser.add_argument("--mode", default="good", choices=["good", "bad", "leaky"])
    parser.add_argument("--text", action="store_true", help="reply text/plain")
    args = parser.parse_args()
    server = ThreadingHTTPServer((args.host, args.port), make_handler(args.mode, args.text))
    server.daemon_threads = True
    host, port = server.server_address[:2]
    print(f"http agent listening on http://{host}:{port}", flush=True)
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    stop.wait()
    server.shutdown()
    server.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
