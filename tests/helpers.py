"""Test helpers shared by every tier: start the real sandbox server, run the real CLI."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import requests

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"
SEED = EXAMPLES / "sandbox.yaml"
AGENT = EXAMPLES / "agent" / "agent.py"
HTTP_AGENT = EXAMPLES / "http_agent" / "server.py"
TEST_KEY = "nk_live_test_0123456789abcdef"
PY = sys.executable


@dataclass
class Sandbox:
    url: str
    api_key: str
    db: Path
    proc: subprocess.Popen
    log: Path
    args: list[str] = field(default_factory=list)

    @property
    def headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.api_key}"}

    def get(self, path: str, **kw) -> requests.Response:
        return requests.get(self.url + path, headers=self.headers, timeout=10, **kw)

    def post(self, path: str, json: object | None = None, **kw) -> requests.Response:
        return requests.post(self.url + path, headers=self.headers, json=json, timeout=10, **kw)

    def agent_env(self, **extra: str) -> dict[str, str]:
        """Environment for a process that exports traces to this sandbox (protobuf)."""
        env = dict(os.environ)
        for k in list(env):
            if k.startswith(("OTEL_", "NEENS_", "GITHUB_", "GITLAB_", "CI_")) or k in {
                "CI", "JENKINS_URL", "BUILD_NUMBER", "GIT_COMMIT", "BRANCH_NAME", "CHANGE_ID",
            }:
                del env[k]
        env.update(
            NEENS_BASE_URL=self.url,
            NEENS_API_KEY=self.api_key,
            OTEL_EXPORTER_OTLP_ENDPOINT=self.url,
            OTEL_EXPORTER_OTLP_HEADERS=f"Authorization=Bearer {self.api_key}",
            OTEL_BSP_SCHEDULE_DELAY="50",
            PYTHONUNBUFFERED="1",
        )
        env.update(extra)
        return env

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)


def start_sandbox(
    tmp: Path,
    *,
    seed: Path = SEED,
    db: Path | None = None,
    api_key: str = TEST_KEY,
    extra: list[str] | None = None,
    port: int = 0,
) -> Sandbox:
    """Start ``python -m neens_sandbox serve`` on 127.0.0.1 and wait for its line."""
    db = db or tmp / "sandbox.db"
    log = tmp / f"sandbox-{int(time.time() * 1000)}.log"
    args = [
        PY, "-m", "neens_sandbox", "serve", "--host", "127.0.0.1", "--port", str(port),
        "--db", str(db), "--seed", str(seed), "--api-key", api_key, "--grace", "1",
        *(extra or []),
    ]
    errf = log.open("w")
    proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=errf, text=True, cwd=ROOT)
    assert proc.stdout is not None
    deadline = time.monotonic() + 30
    line = ""
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        if line.startswith("sandbox listening on "):
            break
        if proc.poll() is not None:
            raise RuntimeError(f"sandbox exited early: {log.read_text()[-2000:]}")
    else:
        proc.kill()
        raise RuntimeError(f"sandbox did not start: {log.read_text()[-2000:]}")
    url = line.split("listening on ", 1)[1].split()[0]
    return Sandbox(url=url, api_key=api_key, db=db, proc=proc, log=log, args=args)


def items_of(sb: Sandbox, run_id: str) -> list[dict[str, Any]]:
    resp = sb.get(f"/preprod-evals/{run_id}/items")
    assert resp.status_code == 200, resp.text
    return resp.json()["items"]


def db_count(sb: Sandbox, table: str) -> int:
    con = sqlite3.connect(f"file:{sb.db}?mode=ro", uri=True, timeout=30)
    try:
        return con.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0]
    finally:
        con.close()


def start_http_agent(*args: str) -> tuple[subprocess.Popen, int]:
    proc = subprocess.Popen([PY, str(HTTP_AGENT), "--port", "0", *args],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    line = proc.stdout.readline()
    assert line.startswith("http agent listening on "), proc.stderr.read() if proc.stderr else ""
    return proc, int(line.rsplit(":", 1)[1])


def run_cli(args: list[str], env: dict[str, str], timeout: float = 120, **kw):
    """Run ``python -m neens_action`` as a real process; returns CompletedProcess (text)."""
    return subprocess.run(
        [PY, "-m", "neens_action", *args], env=env, capture_output=True, text=True,
        timeout=timeout, cwd=kw.pop("cwd", ROOT), **kw,
    )


def alive(pid: int) -> bool:
    """True when ``pid`` exists and is not a zombie (reads /proc: no psutil needed)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def wait_for(predicate, timeout: float = 60.0, interval: float = 0.1) -> bool:
    """Poll ``predicate`` until it is true or ``timeout`` seconds pass; its last value."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(interval)
    return predicate()
