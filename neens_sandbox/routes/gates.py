"""Eval gates: ``GET /flywheel/gates/ci`` (active gates only). Gates are seeded
(``eval_gates`` table, core schema); their frozen items are dataset versions."""

from __future__ import annotations

from typing import Any

from neens_sandbox.db import loads
from neens_sandbox.http import Request, Route


def list_active(req: Request) -> dict[str, Any]:
    db = req.ctx.db
    out = []
    for row in db.all("SELECT * FROM eval_gates WHERE status = 'active' ORDER BY id"):
        body = loads(row["body"], {})
        count = db.one("SELECT COUNT(*) AS n FROM dataset_items WHERE version_id = ?",
                       (row["version_id"],))["n"]
        judges = loads(row["judges"], [])
        out.append({
            "gateId": row["id"], "name": row["name"],
            "failureModeName": body.get("failure_mode_name"),
            "goldenVersionId": row["version_id"], "goldenItemCount": count,
            "judgeId": judges[0] if judges else None, "passThreshold": row["threshold"],
            "problem": None if count else "the gate's golden set has no items",
        })
    return {"gates": out}


ROUTES = [Route("GET", "/flywheel/gates/ci", list_active)]
