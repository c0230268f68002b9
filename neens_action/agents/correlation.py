"""The per-invocation environment of an agent and the OTel attribute merge.

Neens links a trace to its pre-prod item by three resource attributes that reach the agent's
OpenTelemetry SDK through ``OTEL_RESOURCE_ATTRIBUTES``: ``neens.eval_run_id``,
``neens.dataset_item_id`` and ``neens.version_label`` (plus ``neens.sweep_id``,
``neens.sweep_arm``, ``neens.sweep_rep`` under ``sweep run``). The user's own attributes are
kept in order; every value is percent-encoded (RFC 3986 unreserved characters only), so the
merge is stable when applied twice.
"""

from __future__ import annotations

import os
import secrets
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote, unquote

RUN_KEYS = ("neens.eval_run_id", "neens.dataset_item_id", "neens.version_label")
SWEEP_KEYS = ("neens.sweep_id", "neens.sweep_arm", "neens.sweep_rep")
OTLP_VARS = ("OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
PROTOCOL_VARS = ("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_EXPORTER_OTLP_PROTOCOL")
# Neens receives OTLP over HTTP only; some SDKs (the OpenTelemetry distro) default to gRPC
HTTP_PROTOBUF = "http/protobuf"
# Linux refuses a single environment string longer than 128 KiB (E2BIG): a prompt that big
# still reaches the agent on stdin, but not through NEENS_ITEM_INPUT.
MAX_ENV_VALUE = 120 * 1024


@dataclass(frozen=True)
class SweepTag:
    """The arm an invocation belongs to under ``neens sweep run``."""

    sweep_id: str
    arm: str
    rep: int
    model: str | None = None


def encode_value(value: str) -> str:
    return quote(str(value), safe="")


def parse_resource_attributes(value: str | None) -> list[tuple[str, str]]:
    """``k=v,k2=v2`` -> pairs: segments trimmed, empty / ``=``-less / key-less segments
    dropped, split at the first ``=``, values percent-decoded."""
    pairs: list[tuple[str, str]] = []
    for segment in (value or "").split(","):
        segment = segment.strip()
        if not segment or "=" not in segment:
            continue
        key, val = segment.split("=", 1)
        key = key.strip()
        if not key:
            continue
        pairs.append((key, unquote(val.strip())))
    return pairs


def merge_resource_attributes(
    existing: str | None, injected: Mapping[str, str] | Iterable[tuple[str, str]]
) -> str:
    """Merge ``injected`` into an ``OTEL_RESOURCE_ATTRIBUTES`` value.

    Existing pairs keep their order; an existing occurrence of an injected key is replaced in
    place; new keys are appended in ``injected`` order. Every value is percent-encoded.
    """
    items = list(injected.items()) if isinstance(injected, Mapping) else list(injected)
    inject = dict(items)
    out: list[tuple[str, str]] = []
    seen: set[str] = set()
    for key, val in parse_resource_attributes(existing):
        if key in inject:
            if key in seen:
                continue  # a duplicate of an injected key: keep only the first position
            out.append((key, inject[key]))
            seen.add(key)
        else:
            out.append((key, val))
    for key, val in items:
        if key not in seen:
            out.append((key, val))
            seen.add(key)
    return ",".join(f"{k}={encode_value(v)}" for k, v in out)


def _sweep_fields(sweep: SweepTag | Mapping[str, Any]) -> tuple[str, str, str, str | None]:
    if isinstance(sweep, SweepTag):
        return sweep.sweep_id, sweep.arm, str(sweep.rep), sweep.model
    get = sweep.get
    sid = get("sweep_id") or get("sweepId") or get("id") or ""
    arm = get("arm") or get("label") or ""
    rep = get("rep") or 1
    return str(sid), str(arm), str(rep), get("model")


class ItemEnv:
    """The whole environment of each invocation of one run: ``base`` (default
    ``os.environ``) plus the NEENS_* variables and the merged ``OTEL_RESOURCE_ATTRIBUTES``,
    and ``OTEL_EXPORTER_OTLP_TRACES_PROTOCOL=http/protobuf`` when neither it nor
    ``OTEL_EXPORTER_OTLP_PROTOCOL`` is set, and ``PYTHONUNBUFFERED=1`` unless set (so an
    agent killed at the timeout leaves its output tail).

    Called as ``env(item_id, item_input)``. What every item shares (the run's variables and
    the attribute merge around the item id) is worked out once, not once per item.
    ``sweep`` is a :class:`SweepTag` or a mapping with ``sweep_id``/``arm``/``rep``/``model``
    (``sweepId`` and ``label`` accepted too).
    """

    def __init__(self, *, run_id: str, version_label: str,
                 sweep: SweepTag | Mapping[str, Any] | None = None,
                 base: Mapping[str, str] | None = None) -> None:
        env = dict(os.environ if base is None else base)
        env.pop("NEENS_ITEM_INPUT", None)
        if not any(env.get(v, "").strip() for v in PROTOCOL_VARS):
            env["OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"] = HTTP_PROTOBUF
        # a Python agent writes its output as it goes: one killed at the timeout keeps its
        # last lines (block-buffered stdout would die with it), shown like a crash's
        env.setdefault("PYTHONUNBUFFERED", "1")
        env["NEENS_EVAL_RUN_ID"] = str(run_id)
        env["NEENS_VERSION_LABEL"] = str(version_label or "")
        self.attrs: list[tuple[str, str]] = [
            ("neens.eval_run_id", str(run_id)),
            ("neens.dataset_item_id", ""),  # the item's id goes here
            ("neens.version_label", str(version_label or "")),
        ]
        if sweep is not None:
            sid, arm, rep, model = _sweep_fields(sweep)
            env.update(NEENS_SWEEP_ID=sid, NEENS_SWEEP_ARM=arm, NEENS_SWEEP_REP=rep,
                       NEENS_EVAL_MODEL=model or "")
            self.attrs += [("neens.sweep_id", sid), ("neens.sweep_arm", arm),
                           ("neens.sweep_rep", rep)]
        self.existing = env.get("OTEL_RESOURCE_ATTRIBUTES")
        self.base = env
        # The merge with a marker for the item id (letters and digits: encoded as is),
        # split around it; None when the user's own attributes happen to contain it.
        marker = "neensitem" + secrets.token_hex(8)
        parts = self._merge(marker).split(marker)
        self.around = (parts[0], parts[1]) if len(parts) == 2 else None

    def _merge(self, item_id: str) -> str:
        attrs = list(self.attrs)
        attrs[1] = ("neens.dataset_item_id", item_id)
        return merge_resource_attributes(self.existing, attrs)

    def __call__(self, item_id: str, item_input: str | None) -> dict[str, str]:
        env = dict(self.base)
        env["NEENS_DATASET_ITEM_ID"] = str(item_id)
        env_text = ("" if item_input is None else str(item_input)).replace("\x00", "")
        if len(env_text.encode("utf-8", errors="replace")) <= MAX_ENV_VALUE:
            env["NEENS_ITEM_INPUT"] = env_text
        if self.around is None:
            env["OTEL_RESOURCE_ATTRIBUTES"] = self._merge(str(item_id))
        else:
            head, tail = self.around
            env["OTEL_RESOURCE_ATTRIBUTES"] = head + encode_value(item_id) + tail
        return env


def item_env(
    *,
    run_id: str,
    item_id: str,
    version_label: str,
    item_input: str | None,
    sweep: SweepTag | Mapping[str, Any] | None = None,
    base: Mapping[str, str] | None = None,
) -> dict[str, str]:
    """The environment of one invocation (see :class:`ItemEnv`, for many items of a run)."""
    return ItemEnv(run_id=run_id, version_label=version_label, sweep=sweep,
                   base=base)(item_id, item_input)


def sweep_context(environ: Mapping[str, str] | None = None) -> dict[str, Any] | None:
    """For agents: ``{"sweepId", "arm", "rep", "model"}`` under ``sweep run``, else None."""
    env = os.environ if environ is None else environ
    sweep_id = env.get("NEENS_SWEEP_ID", "")
    if not sweep_id:
        return None
    rep_raw = env.get("NEENS_SWEEP_REP", "")
    rep: int | str | None = int(rep_raw) if rep_raw.isdigit() else (rep_raw or None)
    return {
        "sweepId": sweep_id,
        "arm": env.get("NEENS_SWEEP_ARM") or None,
        "rep": rep,
        "model": env.get("NEENS_EVAL_MODEL") or None,
    }


def otlp_protocol(environ: Mapping[str, str]) -> str:
    """The OTLP protocol the agent's trace exporter uses (``http/protobuf`` when unset, as
    the runner sets it)."""
    for var in PROTOCOL_VARS:
        value = environ.get(var, "").strip()
        if value:
            return value
    return HTTP_PROTOBUF


def otlp_configured(environ: Mapping[str, str]) -> bool:
    return any(environ.get(v, "").strip() for v in OTLP_VARS)


def otlp_warning(environ: Mapping[str, str], base_url: str) -> str | None:
    """The warning printed before the first item when no OTLP endpoint is configured."""
    if otlp_configured(environ):
        return None
    base = base_url.rstrip("/")
    return (
        "no OTLP endpoint is set in the environment your agent inherits, so its traces may "
        f"never reach Neens: set OTEL_EXPORTER_OTLP_ENDPOINT={base} (or "
        f"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT={base}/v1/traces) and "
        'OTEL_EXPORTER_OTLP_HEADERS="Authorization=Bearer $NEENS_API_KEY"'
    )
