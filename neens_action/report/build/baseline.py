"""How a baseline reads in a log line or a report (spec 4.1.4, decision 8 shapes)."""

from __future__ import annotations

from typing import Any


def describe_baseline(baseline: Any, resolution: Any = None) -> str:
    """``Baseline: <this>`` (spec 4.1.4, decision 8 shapes)."""
    if not isinstance(baseline, dict) or not baseline:
        text = "server default"
    else:
        kind = baseline.get("kind")
        if kind == "preprod_run":
            text = f"run {baseline.get('runId') or baseline.get('value') or '?'}"
        elif kind == "prod_window":
            text = f"production window ({baseline.get('range') or '7d'})"
        elif kind == "branch":
            text = f"branch {baseline.get('value') or '?'}"
        else:
            text = str(kind or "server default")
    if isinstance(resolution, dict) and resolution:
        requested = resolution.get("requested")
        detail = resolution.get("detail") or ""
        resolved = resolution.get("resolvedRunId") or resolution.get("resolved")
        fell_back = (not resolved) or (resolution.get("resolved") == "prod_window" and (
            isinstance(requested, str) and not requested.startswith("prod")
        ))
        if requested:
            text += f" — {requested}{' fell back' if fell_back else ''}: {detail}".rstrip(": ")
        elif detail:
            text += f" — {detail}"
    return text
