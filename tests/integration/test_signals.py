"""SIGTERM (how CI runners cancel a job) during the items, during polling and during the
ci-result report: no agent process survives (found by scanning /proc for a marker in their
environment), the run this process created is cancelled, and the CLI exits 130 promptly.
Real sandbox, real example agent, real CLI; the ci-result case puts a small forwarding proxy
in front of the sandbox that holds the report request."""

from __future__ import annotations

import contextlib
import signal
import subprocess
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
import requests

from tests.helpers import start_sandbox
from tests.integration.scale_support import (
    KEY,
    marked_processes,
    marker,
    recorded,
    recorded_agent,
    start_cli,
    wait_for,
    wait_for_text,
    write_seed,
)

CREATE = ["eval", "run", "--create", "--dataset", "ds_scale", "--concurrency", "2",
          "--poll-interval", "1"]
EXIT_WITHIN = 30.0  # seconds from SIGTERM to exit (decision 15 clean-up is bounded)


def sandbox_with(tmp_path, *extra: str):
    return start_sandbox(tmp_path, seed=write_seed(tmp_path / "seed.yaml", 4), api_key=KEY,
                         extra=list(extra))


def created_run(log) -> str:
    for line in log.read_text().splitlines():
        if line.startswith("Created run "):
            return line.split()[2]
    raise AssertionError(log.read_text())


def terminate(proc, log, sig: int = signal.SIGTERM) -> str:
    proc.send_signal(sig)
    try:
        out, _ = proc.communicate(timeout=EXIT_WITHIN)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate(timeout=10)
        raise AssertionError(
            f"no exit within {EXIT_WITHIN}s of SIGTERM:\n{log.read_text()}") from None
    err = log.read_text()
    assert proc.returncode == 130, err
    assert "Traceback" not in err and KEY not in err + out
    return err


def assert_no_agent_left(mark: tuple[str, str]) -> None:
    assert wait_for(lambda: not marked_processes(*mark), 15), marked_processes(*mark)


@pytest.mark.parametrize(("launcher", "sig"), [
    ("", signal.SIGTERM),
    ("portable", signal.SIGTERM),  # the Windows/macOS path (threads), forced here
    ("portable", signal.SIGINT),
], ids=["fast-SIGTERM", "portable-SIGTERM", "portable-SIGINT"])
def test_sigterm_during_items(tmp_path, launcher: str, sig: int):
    sb = sandbox_with(tmp_path)
    mark, record, log = marker(), tmp_path / "rec", tmp_path / "cli.log"
    # each agent leaves a grandchild in its process group: both must die
    agent = recorded_agent("sh", "-c", 'sleep 300 & exec "$0" "$@"')
    env = sb.agent_env(AGENT_MODE="hang", RECORD_FILE=str(record), NEENS_LAUNCHER=launcher,
                       **dict([mark]))
    proc = start_cli([*CREATE, "--version-label", "sig-items", "--", *agent], env, log)
    try:
        assert wait_for(lambda: len(recorded(record)) >= 2 and len(marked_processes(*mark)) >= 4,
                        120), log.read_text()
        err = terminate(proc, log, sig)
        assert_no_agent_left(mark)
        run_id = created_run(log)
        assert f"cancelled run {run_id}" in err
        run = sb.get(f"/preprod-evals/{run_id}").json()
        assert run["status"] == "cancelled"
        assert run["ciResult"]["verdict"] == "errored"
    finally:
        if proc.poll() is None:
            proc.kill()
        sb.stop()


def test_sigterm_during_polling(tmp_path):
    sb = sandbox_with(tmp_path, "--score-delay", "300")
    mark, record, log = marker(), tmp_path / "rec", tmp_path / "cli.log"
    env = sb.agent_env(RECORD_FILE=str(record), **dict([mark]))
    proc = start_cli([*CREATE, "--version-label", "sig-poll", "--", *recorded_agent()], env,
                     log)
    try:
        assert wait_for_text(log, "run status: running", proc, 180)
        run_id = created_run(log)
        err = terminate(proc, log)
        assert_no_agent_left(mark)
        assert f"cancelled run {run_id}" in err
        run = sb.get(f"/preprod-evals/{run_id}").json()
        assert run["status"] == "cancelled" and run["ciResult"]["verdict"] == "errored"
        assert sorted(recorded(record)) == [f"s_{i:03d}" for i in range(1, 5)]
    finally:
        if proc.poll() is None:
            proc.kill()
        sb.stop()


class HoldingProxy:
    """Forwards every request to ``target``, except that ``/ci-result`` is held (not
    forwarded) until :meth:`release`; records (method, path, status) of what it forwarded."""

    def __init__(self, target: str) -> None:
        self.target = target
        self.seen: list[tuple[str, str, int]] = []
        self.holding = threading.Event()
        self.released = threading.Event()
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                return

            def _serve(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else None
                if self.path.endswith("/ci-result"):
                    owner.holding.set()
                    owner.released.wait(120)
                headers = {k: v for k, v in self.headers.items()
                           if k.lower() not in ("host", "content-length", "connection")}
                resp = requests.request(self.command, owner.target + self.path, data=body,
                                        headers=headers, timeout=60)
                owner.seen.append((self.command, self.path, resp.status_code))
                with contextlib.suppress(OSError):  # the CLI may be gone already
                    self.send_response(resp.status_code)
                    self.send_header("Content-Type", resp.headers.get("Content-Type", ""))
                    self.send_header("Content-Length", str(len(resp.content)))
                    self.end_headers()
                    self.wfile.write(resp.content)

            do_GET = do_POST = _serve

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}"

    def release(self) -> None:
        self.released.set()

    def close(self) -> None:
        self.release()
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.mark.timeout(300)
def test_sigterm_during_the_ci_result(tmp_path):
    sb = sandbox_with(tmp_path)
    proxy = HoldingProxy(sb.url)
    mark, log = marker(), tmp_path / "cli.log"
    env = sb.agent_env(NEENS_BASE_URL=proxy.url, **dict([mark]))  # OTLP goes to the sandbox
    proc = start_cli([*CREATE, "--version-label", "sig-report", "--", *recorded_agent()],
                     {**env, "RECORD_FILE": str(tmp_path / "rec")}, log)
    try:
        assert wait_for(proxy.holding.is_set, 180), log.read_text()
        run_id = created_run(log)
        terminate(proc, log)
        assert_no_agent_left(mark)
        run = sb.get(f"/preprod-evals/{run_id}").json()
        # scoring had finished: the cancel finds the run terminal (409), nothing is left open
        assert run["status"] in ("completed", "completed_with_regressions", "cancelled")
        cancels = [s for m, p, s in proxy.seen if p.endswith(f"{run_id}/cancel")]
        assert cancels and cancels[0] in (200, 409), proxy.seen
    finally:
        if proc.poll() is None:
            proc.kill()
        with contextlib.suppress(Exception):
            proxy.close()
        sb.stop()
