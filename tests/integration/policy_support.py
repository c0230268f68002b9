"""Support for the policy and push integration tests: the example HTTP agent as a process,
the CLI with ``--json``, and the build verdict the sandbox stored (``ciResult``)."""

from __future__ import annotations

import hashlib
import json
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.helpers import EXAMPLES, PY, SEED, Sandbox, run_cli, start_sandbox

HTTP_AGENT = EXAMPLES / "http_agent" / "server.py"
READY = "http agent listening on "


@dataclass
class HttpAgent:
    proc: subprocess.Popen
    url: str

    @property
    def port(self) -> int:
        return int(self.url.rsplit(":", 1)[1])

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)


def start_http_agent(mode: str = "good") -> HttpAgent:
    """examples/http_agent/server.py on a free loopback port; waits for its ready line (the
    suite's pytest-timeout bounds a process that never prints it)."""
    proc = subprocess.Popen([PY, str(HTTP_AGENT), "--host", "127.0.0.1", "--port", "0",
                             "--mode", mode], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True)
    assert proc.stdout is not None
    lines = []
    for line in proc.stdout:
        lines.append(line)
        if line.startswith(READY):
            return HttpAgent(proc, line[len(READY):].split()[0])
    proc.wait(10)
    raise RuntimeError(f"http agent exited early: {''.join(lines)[-2000:]}")


def seed_with_connections(tmp: Path, connections: list[dict[str, Any]]) -> Path:
    """The example seed plus extra agent_http ``connections``."""
    seed = yaml.safe_load(SEED.read_text(encoding="utf-8"))
    seed.setdefault("connections", []).extend(connections)
    path = tmp / "seed.yaml"
    path.write_text(yaml.safe_dump(seed, sort_keys=False), encoding="utf-8")
    return path


@contextmanager
def push_world(
    tmp: Path, monkeypatch: pytest.MonkeyPatch, *, mode: str = "good",
    extra: dict[str, dict[str, str]] | None = None, sandbox_args: list[str] | None = None,
) -> Iterator[tuple[Sandbox, dict[str, HttpAgent]]]:
    """A sandbox whose ``conn_local`` calls an HTTP agent in ``mode``, plus one more agent
    per ``extra`` connection (``{conn_id: {"mode": ..., "model": ...}}``)."""
    agents: dict[str, HttpAgent] = {}
    try:
        agents["conn_local"] = start_http_agent(mode)
        connections = []
        for conn_id, spec in (extra or {}).items():
            agents[conn_id] = start_http_agent(spec.get("mode", "good"))
            connections.append({"id": conn_id, "url": agents[conn_id].url + "/answer",
                                "model": spec.get("model", "gpt-4o-mini")})
        monkeypatch.setenv("NEENS_HTTP_AGENT_PORT", str(agents["conn_local"].port))
        seed = seed_with_connections(tmp, connections)
        sb = start_sandbox(tmp, seed=seed, extra=sandbox_args)
        try:
            yield sb, agents
        finally:
            sb.stop()
    finally:
        for agent in agents.values():
            agent.stop()


def write_policy(tmp: Path, doc: dict[str, Any], name: str = "neens-gate.json") -> Path:
    path = tmp / name
    text = yaml.safe_dump(doc) if name.endswith((".yml", ".yaml")) else json.dumps(doc, indent=2)
    path.write_text(text, encoding="utf-8")
    return path


def neens_json(sb: Sandbox, args: list[str], *, timeout: float = 300,
               **env: str) -> tuple[subprocess.CompletedProcess, dict[str, Any]]:
    """Run ``neens <args> --json`` as a process; returns the process and its JSON document."""
    cut = args.index("--") if "--" in args else len(args)  # flags go before the agent command
    proc = run_cli([*args[:cut], "--json", *args[cut:]], sb.agent_env(**env), timeout=timeout)
    assert "Traceback" not in proc.stderr, proc.stderr
    assert sb.api_key not in proc.stdout + proc.stderr
    try:
        doc = json.loads(proc.stdout)
    except ValueError:
        raise AssertionError(f"no JSON on stdout (rc={proc.returncode}):\n{proc.stderr}") from None
    assert doc["exitCode"] == proc.returncode, proc.stderr
    return proc, doc


def results(doc: dict[str, Any]) -> list[dict[str, Any]]:
    return doc["policyEval"]["results"]


def statuses(doc: dict[str, Any]) -> list[tuple[str, str]]:
    return [(r["dimension"], r["status"]) for r in results(doc)]


def stored_run(sb: Sandbox, run_id: str) -> dict[str, Any]:
    resp = sb.get(f"/preprod-evals/{run_id}")
    assert resp.status_code == 200, resp.text
    return resp.json()


def assert_ci_result(sb: Sandbox, proc: subprocess.CompletedProcess, doc: dict[str, Any], *,
                     verdict: str, policy_file: Path | None = None,
                     overridden: bool = False) -> dict[str, Any]:
    """The build verdict stored on the sandbox run matches the exit code, the JSON document's
    rules, and the policy file's name and SHA-256."""
    ci = stored_run(sb, doc["runId"])["ciResult"]
    assert ci is not None, "no ci-result was reported"
    assert ci["exit_code"] == proc.returncode
    assert ci["verdict"] == verdict == doc["verdict"] == doc["buildVerdict"]["verdict"]
    assert doc["buildVerdict"]["reported"] is True
    assert ci["enforced"] is True
    assert ci["sdk"]["language"] == "python"
    expected = [{"rule": r["dimension"], "observed": r["observed"], "threshold": r["threshold"],
                 "severity": r["severity"], "outcome": r["status"], "message": r["reason"]}
                for r in (doc.get("policyEval") or {"results": []})["results"]]
    assert ci["rules"] == expected
    if policy_file is None and not overridden:
        assert ci.get("policy") is None  # null keys are omitted on the wire (spec 1.3)
    else:
        sha = hashlib.sha256(policy_file.read_bytes()).hexdigest() if policy_file else None
        name = policy_file.name if policy_file else None
        assert ci["policy"] == {"name": name, "sha256": sha, "overridden": overridden}
    return ci
