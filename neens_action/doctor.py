"""``neens doctor``: check, in order, everything a pull run needs before the first item.

1. the base URL answers as Neens (a refusal of the keyless call counts; a 404 or 5xx does not);
2. the API key is accepted (an authenticated read);
3. an OTLP traces endpoint is set in the environment the agents inherit;
4. that endpoint is reachable and accepts the key (an empty OTLP/JSON export);
5. the exporter headers carry the key (``OTEL_EXPORTER_OTLP[_TRACES]_HEADERS``);
6. the exporter protocol is OTLP over HTTP with protobuf (unset counts: the runner sets it);
   gRPC and ``http/json`` are refused, with the fix.

Each check is a plain function returning a :class:`Check`; the first failure of 1 or 2 stops
the API checks (nothing after them can pass). The key is never printed.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from urllib.parse import urlsplit

import requests

from neens_action.agents.correlation import HTTP_PROTOBUF, PROTOCOL_VARS, otlp_protocol
from neens_action.api.client import NeensClient
from neens_action.api.http_util import path_hint
from neens_action.errors import NeensApiError
from neens_action.otlp import (
    TRACES_PATH,
    exporter_headers,
    origin_text,
    same_origin,
    traces_endpoint,
)
from neens_action.settings.names import CONNECTION_NAMES, phrase

__all__ = ["Check", "exporter_headers", "preflight", "run_checks", "traces_endpoint"]

TIMEOUT = (5.0, 10.0)


@dataclass
class Check:
    name: str
    ok: bool
    detail: str = ""
    fix: str = ""

    def line(self) -> str:
        mark = "ok  " if self.ok else "FAIL"
        text = f"  {mark} {self.name}"
        if self.detail:
            text += f": {self.detail}"
        if not self.ok and self.fix:
            text += f"\n       fix: {self.fix}"
        return text


def check_base_url(base_url: str) -> Check:
    name = "base URL answers"
    if not base_url:
        return Check(name, False, "no base URL", phrase("base_url", CONNECTION_NAMES, "set"))
    try:
        resp = requests.get(base_url.rstrip("/") + "/flywheel/gates/ci", timeout=TIMEOUT,
                            headers={"Accept": "application/json"})
    except requests.RequestException as exc:
        return Check(name, False, f"{base_url} did not answer ({type(exc).__name__})",
                     "check the URL, DNS and any proxy; it is the Neens API origin, "
                     "e.g. https://neens.example.com")
    status = resp.status_code
    resp.close()
    if status == 404:  # no Neens route at this origin: name what is wrong, not a guess
        hint = path_hint(base_url)
        return Check(name, False, f"{base_url} has no Neens API (HTTP 404 on /flywheel/gates/ci)",
                     hint or "point it at the Neens API origin, e.g. https://neens.example.com")
    if status >= 500:
        return Check(name, False, f"{base_url} answers HTTP {status}", "Neens had a server "
                     "error: try again later, or check the status of this Neens")
    # 2xx or a refusal of this keyless call: the origin is Neens; the key is checked next
    return Check(name, True, f"{base_url} answers")


def check_key(client: NeensClient) -> Check:
    name = "API key accepted"
    if not client.has_key:
        return Check(name, False, "no API key", phrase("api_key", CONNECTION_NAMES, "set")
                     + " (a nk_live_... project key from Neens settings)")
    try:
        client.list_ci_gates()
    except NeensApiError as exc:
        if exc.status == 401:
            return Check(name, False, "HTTP 401: Neens refused the key",
                         f"{phrase('api_key', CONNECTION_NAMES, 'either')} is not a valid project "
                         "key for this Neens; copy a nk_live_... key from the project settings")
        if exc.status == 403:
            return Check(name, False, "HTTP 403: the key may not access this project",
                         "use a key of the project the dataset belongs to (or drop "
                         f"{phrase('project_id', CONNECTION_NAMES)})")
        return Check(name, False, str(exc), "see the error above")
    return Check(name, True)


def check_otlp_set(env: Mapping[str, str]) -> Check:
    url = traces_endpoint(env)
    if url:
        return Check("OTLP endpoint set", True, url)
    return Check("OTLP endpoint set", False, "neither OTEL_EXPORTER_OTLP_ENDPOINT nor "
                 "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT is set",
                 "export OTEL_EXPORTER_OTLP_ENDPOINT=<your Neens base URL> so the agent's "
                 "traces reach Neens")


def check_otlp_accepts(env: Mapping[str, str],
                       post: Callable[..., requests.Response] = requests.post, *,
                       base_url: str = "", api_key: str | None = None) -> Check:
    name = "OTLP endpoint reachable and accepts the key"
    url = traces_endpoint(env)
    if not url:
        return Check(name, False, "no endpoint", "set OTEL_EXPORTER_OTLP_ENDPOINT first")
    headers = {"Content-Type": "application/json", **exporter_headers(env)}
    if not same_origin(url, base_url) and api_key:
        # another origin (a collector) never gets the Neens key from us
        headers = {k: v for k, v in headers.items() if api_key not in v}
    try:
        resp = post(url, data=b'{"resourceSpans":[]}', headers=headers, timeout=TIMEOUT)
    except requests.RequestException as exc:
        return Check(name, False, f"{url} did not answer ({type(exc).__name__})",
                     "check the endpoint URL; agents export to it over HTTP")
    status = resp.status_code
    resp.close()
    if 200 <= status < 300:
        return Check(name, True, f"HTTP {status}")
    if status in (401, 403):
        return Check(name, False, f"HTTP {status}: the receiver refused the exporter's "
                     "credentials", 'export OTEL_EXPORTER_OTLP_HEADERS="Authorization=Bearer '
                     '$NEENS_API_KEY"')
    return Check(name, False, f"HTTP {status}", otlp_fix(url, base_url, status))


def otlp_fix(url: str, base_url: str, status: int) -> str:
    """What is wrong with a traces endpoint that answered ``status``, and the fix."""
    expected = base_url.rstrip("/") + TRACES_PATH if base_url else ""
    if expected and url.rstrip("/") == expected:  # already the receiver's address
        if status == 404:
            return (f"{expected} is where Neens receives traces, and it answered 404: this "
                    "Neens has no OTLP receiver; ask its operator to enable it")
        return (f"{expected} is where Neens receives traces, and it answered HTTP {status}: "
                "try again later, or ask the operator of this Neens")
    if expected and same_origin(url, base_url):
        return (f"the traces path is {urlsplit(url).path or '/'}, not {TRACES_PATH}: export "
                f"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT={expected}")
    if expected:
        return (f"{origin_text(url)} is not Neens; if no collector forwards the traces, "
                f"export OTEL_EXPORTER_OTLP_TRACES_ENDPOINT={expected}")
    return "is this the Neens OTLP receiver (<base URL>/v1/traces)?"


def check_headers_carry_key(env: Mapping[str, str], api_key: str | None,
                            base_url: str = "") -> Check:
    name = "exporter headers carry the key"
    url = traces_endpoint(env)
    if url and base_url and not same_origin(url, base_url):
        return Check(name, True, f"not checked: traces go to {origin_text(url)}, not to Neens "
                     "(that collector must forward them with the key)")
    auth = {k.lower(): v for k, v in exporter_headers(env).items()}.get("authorization", "")
    if api_key and auth.strip() == f"Bearer {api_key}":
        return Check(name, True)
    detail = "no Authorization header" if not auth else "Authorization is not the Neens key"
    return Check(name, False, detail, 'export OTEL_EXPORTER_OTLP_HEADERS="Authorization=Bearer '
                 '$NEENS_API_KEY"')


def check_protocol(env: Mapping[str, str]) -> Check:
    name = "OTLP exporter protocol"
    protocol = otlp_protocol(env)
    if protocol == HTTP_PROTOBUF:
        unset = not any(env.get(v, "").strip() for v in PROTOCOL_VARS)
        return Check(name, True, HTTP_PROTOBUF + (" (unset: the runner sets it)" if unset
                                                  else ""))
    var = next(v for v in PROTOCOL_VARS if env.get(v, "").strip())
    why = ("Neens receives OTLP over HTTP, not gRPC" if protocol.startswith("grpc")
           else "Neens receives OTLP/HTTP with protobuf; the Python SDK refuses http/json "
           "at start-up" if protocol == "http/json" else "not an OTLP/HTTP protocol")
    return Check(name, False, f"{var}={protocol}: {why}",
                 f"export {var}=http/protobuf (or unset it: the runner then sets "
                 "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL=http/protobuf for the agent)")


def run_checks(client: NeensClient | None, base_url: str, api_key: str | None,
               env: Mapping[str, str]) -> list[Check]:
    checks = [check_base_url(base_url)]
    if checks[0].ok and client is not None:
        checks.append(check_key(client))
    else:
        checks.append(Check("API key accepted", False, "skipped: the base URL did not answer",
                            "fix the base URL first"))
    checks.append(check_otlp_set(env))
    checks.append(check_otlp_accepts(env, base_url=base_url, api_key=api_key))
    checks.append(check_headers_carry_key(env, api_key, base_url))
    checks.append(check_protocol(env))
    return checks


def preflight(client: NeensClient | None, base_url: str, api_key: str | None,
              env: Mapping[str, str], log: Callable[[str], None], *,
              agent_traces: bool = True) -> str | None:
    """Run the checks before a CI run (``doctor: true``); None when all pass, else why not.

    ``agent_traces`` is False when Neens calls the agent itself (push): the OTLP checks
    then do not apply and are not run.
    """
    log(f"neens doctor: {base_url or '(no base URL)'}")
    checks = run_checks(client, base_url, api_key, env)
    if not agent_traces:
        checks = checks[:2]
    for check in checks:
        log(check.line())
    failed = [c.name for c in checks if not c.ok]
    if not failed:
        return None
    return f"neens doctor: {len(failed)} check(s) failed: {'; '.join(failed)} (fixes in the log)"
