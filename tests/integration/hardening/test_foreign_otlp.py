"""Issue 17: a foreign OTLP endpoint never receives the Neens key, end to end. The job points
its exporters at its own collector (127.0.0.1 on another port: another origin than base-url);
`neens doctor` and the front door with `doctor: true` run real OpenTelemetry SDK agents that
export traces, metrics and logs there. The collector gets spans, never the key."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.fakes.otlp_collector import Collector, Export
from tests.helpers import PY, ROOT, Sandbox, run_cli

NOSY = Path(__file__).with_name("nosy_agent.py")


def _assert_never_the_key(exports: list[Export], key: str) -> None:
    assert exports
    for export in exports:
        for name, value in export.headers.items():
            assert key not in value, (export.path, name)
            assert not value.lower().startswith("bearer"), (export.path, name)


def test_doctor_never_sends_the_key_to_a_foreign_collector(sandbox: Sandbox) -> None:
    with Collector() as collector:
        # The job's exporter headers even carry the key (copied from the docs): doctor still
        # leaves it out when the endpoint is not Neens's origin.
        env = sandbox.agent_env(OTEL_EXPORTER_OTLP_ENDPOINT=collector.url,
                                OTEL_EXPORTER_OTLP_HEADERS=f"Authorization=Bearer "
                                f"{sandbox.api_key},x-tenant=acme")
        res = run_cli(["doctor"], env=env, timeout=60)
        exports = collector.exports
    assert res.returncode == 0, res.stderr
    assert "  ok   OTLP endpoint reachable and accepts the key" in res.stderr
    assert f"not checked: traces go to {collector.url}" in res.stderr
    assert [e.path for e in exports] == ["/v1/traces"]
    assert exports[0].headers["x-tenant"] == "acme"  # the job's other headers are kept
    _assert_never_the_key(exports, sandbox.api_key)
    assert sandbox.api_key not in res.stderr + res.stdout


def test_the_front_door_with_doctor_keeps_the_key_from_the_jobs_collector(
        sandbox: Sandbox, tmp_path: Path) -> None:
    nosy = tmp_path / "nosy"
    nosy.mkdir()
    for name in ("output.txt", "summary.md"):
        (tmp_path / name).write_text("")
    with Collector() as collector:
        env = sandbox.agent_env()
        for var in ("NEENS_BASE_URL", "NEENS_API_KEY", "OTEL_EXPORTER_OTLP_HEADERS"):
            env.pop(var)
        env.update({
            "GITHUB_ACTIONS": "true", "GITHUB_WORKSPACE": str(tmp_path),
            "GITHUB_OUTPUT": str(tmp_path / "output.txt"),
            "GITHUB_STEP_SUMMARY": str(tmp_path / "summary.md"),
            "OTEL_EXPORTER_OTLP_ENDPOINT": collector.url,  # the job's own collector
            "NOSY_OUT": str(nosy),
            "INPUT_BASE-URL": sandbox.url, "INPUT_API-KEY": sandbox.api_key,
            "INPUT_DOCTOR": "true", "INPUT_CREATE": "true", "INPUT_DATASET": "ds_refunds",
            "INPUT_VERSION-LABEL": "foreign-otlp", "INPUT_COMMENT": "off",
            "INPUT_COMMAND": f"{sys.executable} {NOSY}", "INPUT_CONCURRENCY": "3",
            "INPUT_POLL-INTERVAL": "0.5", "INPUT_POLL-TIMEOUT": "60",
        })
        proc = subprocess.run([PY, str(ROOT / "entrypoint.py")], env=env, cwd=tmp_path,
                              capture_output=True, text=True, timeout=240)
        exports = collector.exports
    log = proc.stdout + proc.stderr
    assert "Traceback" not in log, log[-3000:]
    assert "neens doctor: " in log and "  FAIL " not in log, log[-3000:]
    assert "  ok   OTLP endpoint reachable and accepts the key" in log
    assert log.count("not added to their exporter headers") == 1, log[-3000:]
    dumps = [json.loads(p.read_text()) for p in nosy.glob("*.json")]
    assert dumps, log[-3000:]  # the agents ran
    # The collector got the agents' spans, metrics and logs, and doctor's probe...
    traces = [e for e in exports if e.path == "/v1/traces" and e.size > 0]
    assert len(traces) >= len(dumps), [e.path for e in exports]
    assert {"/v1/metrics", "/v1/logs"} <= collector.paths()
    # ...and never the key, in any header of any request.
    _assert_never_the_key(exports, sandbox.api_key)
    # The agents' environment holds no key at all (traces do not go to Neens) and keeps the
    # job's endpoint as it was.
    for dump in dumps:
        own = dump["own"]
        assert not [k for k, v in own.items() if sandbox.api_key in v], sorted(own)
        assert own["OTEL_EXPORTER_OTLP_ENDPOINT"] == collector.url
        assert "OTEL_EXPORTER_OTLP_TRACES_HEADERS" not in own
    # The runner masks the key: ::add-mask:: is the one line that names it.
    assert [line for line in log.splitlines() if sandbox.api_key in line] == [
        f"::add-mask::{sandbox.api_key}"]
