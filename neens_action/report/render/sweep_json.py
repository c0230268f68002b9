"""The ``--json`` document of every sweep subcommand (docs/sweep.md).

Server payloads are passed through as they came; agent output is never included.
"""

from __future__ import annotations

from typing import Any

from neens_action.outcome import SweepOutcome
from neens_action.report.model import Report

ARM_KEYS = ("label", "model", "status", "passed", "greens", "runsTerminal", "runsTotal", "error")


def sweep_json_document(outcome: SweepOutcome) -> dict[str, Any]:
    """The ``--json`` document of every sweep subcommand."""
    # the server's objects as they came (``raw``): --json passes them through unchanged
    sweep = outcome.sweep.raw if outcome.sweep is not None else None
    comparison = outcome.comparison.raw if outcome.comparison is not None else None
    doc: dict[str, Any] = {
        "sweepId": outcome.sweep_id or None,
        "exitCode": outcome.exit_code,
        "status": (sweep or comparison or {}).get("status"),
        "voidReason": (sweep or {}).get("voidReason") or (comparison or {}).get("voidReason"),
        "error": "interrupted" if outcome.interrupted else outcome.error,
        "arms": [{key: arm.raw.get(key) for key in ARM_KEYS}
                 for arm in (outcome.sweep.arms if outcome.sweep is not None else ())],
        "sweep": sweep,
    }
    if outcome.estimate is not None:
        doc["estimate"] = outcome.estimate.raw
        if outcome.refusals:
            doc["refusals"] = list(outcome.refusals)
    if outcome.command in ("decide", "run"):
        doc["comparison"] = comparison
        doc["verdict"] = (comparison or {}).get("verdict")
    if outcome.command == "run":
        doc["invocations"] = [
            {
                "arm": inv.arm, "model": inv.model, "rep": inv.rep, "runId": inv.run_id,
                "itemId": inv.item_id, "returncode": inv.returncode,
                "durationS": round(inv.duration_s, 3), "timedOut": inv.timed_out,
                "error": inv.error,
            }
            for inv in outcome.invocations
        ]
        if outcome.failed_starts:
            doc["failedStarts"] = [start.as_json() for start in outcome.failed_starts]
    if outcome.warnings:
        doc["warnings"] = list(outcome.warnings)
    return doc


def sweep_step_document(outcome: SweepOutcome, report: Report) -> dict[str, Any]:
    """The result file of ``mode: sweep``: the sweep document, its mode and the winner."""
    doc = sweep_json_document(outcome)
    doc["mode"] = "sweep"
    doc["winner"] = report.outputs.get("winner") or None
    return doc
