"""The doctor's pure parts: endpoint and header parsing, the header check, preflight."""

from __future__ import annotations

from neens_action import doctor


def test_traces_endpoint_prefers_the_traces_variable() -> None:
    env = {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://a/", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://b/v1/traces"}
    assert doctor.traces_endpoint(env) == "http://b/v1/traces"
    assert doctor.traces_endpoint({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://a/"}) == "http://a/v1/traces"
    assert doctor.traces_endpoint({}) is None


def test_exporter_headers_are_percent_decoded_and_traces_headers_win() -> None:
    env = {"OTEL_EXPORTER_OTLP_HEADERS": "Authorization=Bearer%20k1,x=1",
           "OTEL_EXPORTER_OTLP_TRACES_HEADERS": "Authorization=Bearer k2, bad"}
    # like the SDK: the traces variable replaces the general one (no merge)
    assert doctor.exporter_headers(env) == {"Authorization": "Bearer k2"}
    del env["OTEL_EXPORTER_OTLP_TRACES_HEADERS"]
    assert doctor.exporter_headers(env) == {"Authorization": "Bearer k1", "x": "1"}


def test_header_check_never_shows_the_key() -> None:
    ok = doctor.check_headers_carry_key(
        {"OTEL_EXPORTER_OTLP_HEADERS": "authorization=Bearer nk_live_s"}, "nk_live_s")
    assert ok.ok
    bad = doctor.check_headers_carry_key(
        {"OTEL_EXPORTER_OTLP_HEADERS": "Authorization=Bearer other"}, "nk_live_s")
    assert not bad.ok and "nk_live_s" not in bad.line() and "fix:" in bad.line()


def test_preflight_without_agent_traces_runs_only_the_api_checks() -> None:
    lines: list[str] = []
    why = doctor.preflight(None, "", None, {}, lines.append, agent_traces=False)
    assert why is not None and why.startswith("neens doctor: 2 check(s) failed")
    assert len([x for x in lines if x.startswith("  ")]) == 2
    lines.clear()
    why = doctor.preflight(None, "", None, {}, lines.append)
    assert why is not None and "5 check(s) failed" in why


class _FakePost:
    """Records what the OTLP check would send (no network)."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, dict[str, str]]] = []

    def __call__(self, url: str, *, data: bytes, headers: dict[str, str], timeout: object):
        self.calls.append((url, dict(headers)))

        class _Resp:
            status_code = 200

            def close(self) -> None:
                return

        return _Resp()


KEY = "nk_live_doctor_5ecret"
BASE = "https://neens.example"


def test_the_otlp_check_never_sends_the_key_to_another_origin() -> None:
    foreign = ["http://127.0.0.1:4318", "https://neens.example:8443",
               "https://neens.example.evil.test", "https://neens.example@evil.test",
               "http://neens.example"]
    for endpoint in foreign:
        for env in (
            {"OTEL_EXPORTER_OTLP_ENDPOINT": endpoint,
             "OTEL_EXPORTER_OTLP_HEADERS": f"Authorization=Bearer%20{KEY},x-tenant=acme"},
            {"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": endpoint + "/v1/traces",
             "OTEL_EXPORTER_OTLP_TRACES_HEADERS": f"x-api-key={KEY},x-tenant=acme"},
        ):
            post = _FakePost()
            check = doctor.check_otlp_accepts(env, post, base_url=BASE, api_key=KEY)
            assert check.ok, (endpoint, check.line())
            [(url, headers)] = post.calls
            assert url.startswith(endpoint), url
            assert not [v for v in headers.values() if KEY in v], (endpoint, headers)
            assert headers["x-tenant"] == "acme"  # the job's own headers still go
            header = doctor.check_headers_carry_key(env, KEY, BASE)
            assert header.ok and "not checked" in header.detail and KEY not in header.line()


def test_the_otlp_check_sends_the_key_to_neens_itself() -> None:
    for endpoint in (BASE, "https://NEENS.example:443/"):
        post = _FakePost()
        env = {"OTEL_EXPORTER_OTLP_ENDPOINT": endpoint,
               "OTEL_EXPORTER_OTLP_HEADERS": f"Authorization=Bearer {KEY}"}
        assert doctor.check_otlp_accepts(env, post, base_url=BASE, api_key=KEY).ok
        [(_, headers)] = post.calls
        assert headers["Authorization"] == f"Bearer {KEY}"


def test_the_protocol_check_fails_grpc_and_http_json_with_the_fix() -> None:
    from neens_action.doctor import check_protocol

    assert check_protocol({}).ok and "the runner sets it" in check_protocol({}).detail
    assert check_protocol({"OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf"}).ok
    for var in ("OTEL_EXPORTER_OTLP_PROTOCOL", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"):
        for protocol in ("grpc", "http/json"):
            check = check_protocol({var: protocol})
            assert not check.ok
            assert check.detail.startswith(f"{var}={protocol}: ")
            assert check.fix.startswith(f"export {var}=http/protobuf")
