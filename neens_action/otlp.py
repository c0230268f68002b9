"""The OpenTelemetry exporter variables as an SDK reads them, and the one rule about the key.

The Neens key may go only to Neens: it is put in (and :mod:`neens_action.doctor` sends) the
exporter headers only when the traces endpoint has the same origin (scheme, host, port) as
``base-url``, and only in the traces-only variable ``OTEL_EXPORTER_OTLP_TRACES_HEADERS``, so
metric and log exporters (which read ``OTEL_EXPORTER_OTLP_HEADERS``) never send it.
"""

from __future__ import annotations

from collections.abc import Mapping
from urllib.parse import unquote, urlsplit

TRACES_PATH = "/v1/traces"


def origin(url: str) -> tuple[str, str, int | None]:
    """(scheme, host, port) of a URL, default ports filled in, for same-origin checks."""
    parts = urlsplit((url or "").strip())
    scheme = parts.scheme.lower()
    try:
        port = parts.port or {"http": 80, "https": 443}.get(scheme)
    except ValueError:
        port = None
    return scheme, (parts.hostname or "").lower(), port


def same_origin(url: str, base_url: str) -> bool:
    return bool(base_url) and origin(url) == origin(base_url)


def origin_text(url: str) -> str:
    scheme, host, port = origin(url)
    return f"{scheme}://{host}:{port}" if port else f"{scheme}://{host}"


def traces_endpoint(env: Mapping[str, str]) -> str | None:
    """The URL an OTel SDK exports traces to, from the standard variables."""
    explicit = (env.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") or "").strip()
    if explicit:
        return explicit
    base = (env.get("OTEL_EXPORTER_OTLP_ENDPOINT") or "").strip()
    return base.rstrip("/") + TRACES_PATH if base else None


def parse_headers(value: str) -> dict[str, str]:
    """``k=v,k2=v2`` (percent-encoded) as the SDK reads an exporter headers variable."""
    headers: dict[str, str] = {}
    for part in (value or "").split(","):
        if "=" not in part:
            continue
        key, val = part.split("=", 1)
        if key.strip():
            headers[unquote(key.strip())] = unquote(val.strip())
    return headers


def exporter_headers(env: Mapping[str, str]) -> dict[str, str]:
    """The headers the traces exporter sends: ``..._TRACES_HEADERS`` when set (the SDK then
    ignores the general variable), else ``OTEL_EXPORTER_OTLP_HEADERS``."""
    traces = env.get("OTEL_EXPORTER_OTLP_TRACES_HEADERS") or ""
    if traces.strip():
        return parse_headers(traces)
    return parse_headers(env.get("OTEL_EXPORTER_OTLP_HEADERS") or "")


def with_key(env: Mapping[str, str], api_key: str) -> str | None:
    """The ``OTEL_EXPORTER_OTLP_TRACES_HEADERS`` value carrying the key (the job's general
    headers kept), or None when the job already chose the traces exporter's credentials."""
    if (env.get("OTEL_EXPORTER_OTLP_TRACES_HEADERS") or "").strip():
        return None
    general = env.get("OTEL_EXPORTER_OTLP_HEADERS") or ""
    if any(k.lower() == "authorization" for k in parse_headers(general)):
        return None
    kept = [part.strip() for part in general.split(",") if "=" in part]
    return ",".join([*kept, f"Authorization=Bearer {api_key}"])
