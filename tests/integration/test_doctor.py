"""`neens doctor` against the real sandbox: every check, its fix line, and the exit code."""

from __future__ import annotations

from tests.helpers import Sandbox, run_cli


def _doctor(env: dict[str, str]):
    return run_cli(["doctor"], env=env, timeout=60)


def test_all_checks_pass_with_a_complete_setup(sandbox: Sandbox) -> None:
    res = _doctor(sandbox.agent_env())
    assert res.returncode == 0, res.stderr
    assert "6/6 checks passed" in res.stderr
    assert res.stderr.count("  ok   ") == 6
    assert sandbox.api_key not in res.stderr + res.stdout


def test_wrong_key_fails_the_key_and_otlp_checks_with_fixes(sandbox: Sandbox) -> None:
    env = sandbox.agent_env(NEENS_API_KEY="nk_live_wrong",
                            OTEL_EXPORTER_OTLP_HEADERS="Authorization=Bearer nk_live_wrong")
    res = _doctor(env)
    assert res.returncode == 2
    assert "FAIL API key accepted: HTTP 401" in res.stderr
    assert "FAIL OTLP endpoint reachable and accepts the key" in res.stderr
    assert "fix: --api-key / NEENS_API_KEY is not a valid project key" in res.stderr
    assert "ok   base URL answers" in res.stderr and "(HTTP 401)" not in res.stderr
    assert "nk_live_wrong" not in res.stderr


def test_missing_otlp_settings_are_named(sandbox: Sandbox) -> None:
    env = sandbox.agent_env()
    del env["OTEL_EXPORTER_OTLP_ENDPOINT"]
    del env["OTEL_EXPORTER_OTLP_HEADERS"]
    res = _doctor(env)
    assert res.returncode == 2
    assert "FAIL OTLP endpoint set" in res.stderr
    assert "export OTEL_EXPORTER_OTLP_ENDPOINT" in res.stderr
    assert "FAIL exporter headers carry the key: no Authorization header" in res.stderr
    assert "  ok   API key accepted" in res.stderr


def test_unreachable_base_url_stops_the_api_checks(sandbox: Sandbox) -> None:
    env = sandbox.agent_env(NEENS_BASE_URL="http://127.0.0.1:9")
    res = _doctor(env)
    assert res.returncode == 2
    assert "FAIL base URL answers" in res.stderr
    assert "skipped: the base URL did not answer" in res.stderr
    assert "Traceback" not in res.stderr
