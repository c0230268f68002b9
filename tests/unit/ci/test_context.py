"""The agents' environment (issue 17): no CI token, no runner file path, no userinfo, and the
Neens key only in the traces exporter's header variable, only for Neens's own origin."""

from __future__ import annotations

from neens_action.ci.context import agent_environment
from neens_action.ci.inputs import parse_inputs

KEY = "nk_live_context_5ecret_0123"
BASE = "https://n.example"
JOB = {
    "INPUT_API-KEY": KEY, "INPUT_BASE-URL": BASE, "NEENS_INPUT_COMMAND": "x",
    "INPUT_GITHUB-TOKEN": "ghs_input", "NEENS_GITLAB_TOKEN": "glpat-x", "NEENS_API_KEY": KEY,
    "GITHUB_TOKEN": "ghs_env", "GH_TOKEN": "gho_x", "ACTIONS_RUNTIME_TOKEN": "rt",
    "ACTIONS_ID_TOKEN_REQUEST_TOKEN": "idt", "GITHUB_OUTPUT": "/r/out", "GITHUB_ENV": "/r/env",
    "GITHUB_STEP_SUMMARY": "/r/sum", "GITHUB_PATH": "/r/path", "GITHUB_STATE": "/r/state",
    "CI_JOB_TOKEN": "cjt", "CI_REGISTRY_PASSWORD": "crp", "CI_JOB_JWT_V2": "jwt",
    "CI_REPOSITORY_URL": "https://gitlab-ci-token:cjt@gitlab.example/g/p.git",
    "PIP_INDEX_URL": "https://user:pw@pypi.example/simple", "PATH": "/bin",
    "GITHUB_REPOSITORY": "acme/agent",
}
SECRETS = ("ghs_input", "glpat-x", "ghs_env", "gho_x", "rt", "idt", "cjt", "crp", "jwt", "pw")


def _env(extra: dict[str, str] | None = None) -> tuple[dict[str, str], list[str]]:
    job = {**JOB, **(extra or {})}
    warnings: list[str] = []
    return agent_environment(job, parse_inputs(job), warn=warnings.append), warnings


def test_no_ci_token_no_runner_file_and_no_userinfo_reach_the_agent() -> None:
    env, _ = _env()
    for secret in SECRETS:
        assert not [k for k, v in env.items() if secret in v.split("/")
                    or v == secret or f":{secret}@" in v], secret
    for var in ("GITHUB_TOKEN", "GH_TOKEN", "ACTIONS_RUNTIME_TOKEN", "CI_JOB_TOKEN",
                "CI_REGISTRY_PASSWORD", "CI_JOB_JWT_V2", "NEENS_GITLAB_TOKEN", "NEENS_API_KEY",
                "GITHUB_OUTPUT", "GITHUB_ENV", "GITHUB_STEP_SUMMARY", "GITHUB_PATH",
                "GITHUB_STATE", "ACTIONS_ID_TOKEN_REQUEST_TOKEN"):
        assert var not in env, var
    assert not any(k.startswith(("INPUT_", "NEENS_INPUT_")) for k in env)
    assert env["CI_REPOSITORY_URL"] == "https://gitlab.example/g/p.git"
    assert env["PIP_INDEX_URL"] == "https://pypi.example/simple"
    assert env["PATH"] == "/bin" and env["GITHUB_REPOSITORY"] == "acme/agent"


def test_traces_go_to_neens_with_the_key_in_the_traces_only_variables() -> None:
    env, warnings = _env()
    assert env["NEENS_BASE_URL"] == BASE
    assert env["OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"] == BASE + "/v1/traces"
    assert env["OTEL_EXPORTER_OTLP_TRACES_HEADERS"] == f"Authorization=Bearer {KEY}"
    # metric and log exporters read the general variables: they never get the key
    assert "OTEL_EXPORTER_OTLP_ENDPOINT" not in env and "OTEL_EXPORTER_OTLP_HEADERS" not in env
    assert [k for k, v in env.items() if KEY in v] == ["OTEL_EXPORTER_OTLP_TRACES_HEADERS"]
    assert warnings == []


def test_same_origin_endpoint_set_by_the_job_gets_the_key_and_keeps_its_headers() -> None:
    env, warnings = _env({"OTEL_EXPORTER_OTLP_ENDPOINT": "https://N.example:443/",
                          "OTEL_EXPORTER_OTLP_HEADERS": "x-team=ai"})
    assert env["OTEL_EXPORTER_OTLP_TRACES_HEADERS"] == f"x-team=ai,Authorization=Bearer {KEY}"
    assert env["OTEL_EXPORTER_OTLP_HEADERS"] == "x-team=ai" and warnings == []


def test_a_foreign_endpoint_never_gets_the_key_and_is_warned_about_once() -> None:
    for extra in ({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector.corp:4318"},
                  {"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "https://n.example:8443/v1/traces",
                   "OTEL_EXPORTER_OTLP_HEADERS": "api-key=vendor"},
                  {"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://n.example/v1/traces"}):
        env, warnings = _env(extra)
        assert not [k for k, v in env.items() if KEY in v], extra
        assert "OTEL_EXPORTER_OTLP_TRACES_HEADERS" not in env
        assert {k: env[k] for k in extra} == extra  # the job's variables are left alone
        assert len(warnings) == 1 and "not to base-url" in warnings[0]
        assert KEY not in warnings[0]


def test_the_jobs_own_traces_credentials_are_respected() -> None:
    env, _ = _env({"OTEL_EXPORTER_OTLP_TRACES_HEADERS": "Authorization=Bearer other"})
    assert env["OTEL_EXPORTER_OTLP_TRACES_HEADERS"] == "Authorization=Bearer other"
    env, _ = _env({"OTEL_EXPORTER_OTLP_HEADERS": "Authorization=Bearer mine"})
    assert "OTEL_EXPORTER_OTLP_TRACES_HEADERS" not in env
