"""``neens doctor``'s fixes name what is actually wrong (never one already in place)."""

from __future__ import annotations

from neens_action import doctor
from tests.unit.api.client_support import make

BASE = "https://neens.example.com"


def test_a_refusal_of_the_keyless_probe_is_ok_without_an_http_status(fake) -> None:
    fake.script = [(401, {}, {"detail": "missing key"})]
    check = doctor.check_base_url(fake.url)
    assert check.ok and check.line() == f"  ok   base URL answers: {fake.url} answers"


def test_a_base_url_with_a_path_that_404s_fails_with_use_the_origin(fake) -> None:
    fake.script = [(404, {}, {"detail": "Not Found"})]
    check = doctor.check_base_url(fake.url + "/api")
    assert not check.ok
    assert check.fix == f"--base-url has a path (/api): use the origin, e.g. {fake.url}"


def test_a_refused_key_is_fail_with_the_key_fix(fake) -> None:
    client, _ = make(fake, retries=0)
    fake.script = [(401, {}, {"detail": "invalid API key"})]
    check = doctor.check_key(client)
    assert not check.ok and check.detail == "HTTP 401: Neens refused the key"
    assert check.fix.startswith("--api-key / NEENS_API_KEY is not a valid project key")


def test_the_otlp_fix_never_suggests_the_endpoint_already_set() -> None:
    at_neens = doctor.otlp_fix(BASE + "/v1/traces", BASE, 404)
    assert "this Neens has no OTLP receiver" in at_neens and "export" not in at_neens
    wrong_path = doctor.otlp_fix(BASE + "/otlp", BASE, 404)
    assert wrong_path == ("the traces path is /otlp, not /v1/traces: export "
                          f"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT={BASE}/v1/traces")
    elsewhere = doctor.otlp_fix("http://collector:4318/v1/traces", BASE, 502)
    assert elsewhere.startswith("http://collector:4318 is not Neens")
