"""The policy file's declared eval gates: the ``gates`` block (docs/policy.md).

Validated and normalised into the ``gates_policy`` object sent on the run create: bare ids become
``{"id": ...}``, ``name`` entries are dropped, defaults (``mode: exact``, ``severity: block``,
guardrail ``severity: block``) are filled in.
"""

from __future__ import annotations

import re
from typing import Any

from neens_action.settings.policy_file import SEVERITIES, Checker, describe

GATES_KEYS = ("mode", "severity", "enforce")
MODES = ("exact", "include")
ENTRY_KEYS = ("id", "name", "min_pass_rate", "guardrails")
GUARDRAIL_KEYS = ("kpi", "tolerance", "severity")
MAX_GATES = 50
MAX_GUARDRAILS = 10
MAX_TOLERANCE = 1_000_000
ID_PATTERN = re.compile(r"[A-Za-z0-9_.:-]{1,128}")
ID_RULE = "1-128 letters, digits, '_', '.', ':' or '-'"


def parse_gates(value: Any, chk: Checker) -> dict[str, Any] | None:
    """The normalised ``gates_policy`` object, or None when the block is absent / null."""
    if value is None:
        return None
    block = chk.obj("gates", value, "an object with mode, severity and enforce")
    chk.known_keys("gates", block, GATES_KEYS)
    mode = chk.choice("gates.mode", block.get("mode", "exact"), MODES)
    severity = chk.choice("gates.severity", block.get("severity", "block"), SEVERITIES)
    if "enforce" not in block:
        chk.fail("gates.enforce", "missing (expected a list of gate ids or gate objects)")
    enforce = block["enforce"]
    if not isinstance(enforce, list):
        got = describe(enforce)
        chk.fail("gates.enforce", f"expected a list of gate ids or objects, got {got}")
    if len(enforce) > MAX_GATES:
        chk.fail("gates.enforce", f"lists {len(enforce)} gates (at most {MAX_GATES} per run)")
    if not enforce and mode == "exact":
        chk.fail("gates.enforce", "is empty in exact mode (list at least one gate id, or use "
                 "mode: include to enforce every active gate)")
    seen: set[str] = set()
    entries = [_parse_entry(f"gates.enforce[{i}]", e, seen, chk) for i, e in enumerate(enforce)]
    return {"mode": mode, "severity": severity, "enforce": entries}


def _check_id(path: str, value: Any, what: str, chk: Checker) -> str:
    if not isinstance(value, str):
        chk.fail(path, f"expected a {what} (string), got {describe(value)}")
    if not ID_PATTERN.fullmatch(value):
        chk.fail(path, f"{describe(value)} is not a valid {what} (expected {ID_RULE})")
    return value


def _parse_entry(path: str, entry: Any, seen: set[str], chk: Checker) -> dict[str, Any]:
    if isinstance(entry, str):
        entry = {"id": entry}
        id_path = path
    elif isinstance(entry, dict):
        chk.obj(path, entry, "a gate id or an object")
        chk.known_keys(path, entry, ENTRY_KEYS)
        if "id" not in entry:
            chk.fail(path, "missing 'id' (expected the eval gate's id, e.g. gate-refund)")
        id_path = f"{path}.id"
    else:
        chk.fail(path, f"expected a gate id (string) or an object, got {describe(entry)}")
    gate_id = _check_id(id_path, entry["id"], "gate id", chk)
    if gate_id.lower() == "active":
        chk.fail(id_path, "'active' is not a gate id (use mode: include to add every active gate)")
    if gate_id in seen:
        chk.fail(id_path, f"duplicate gate id {gate_id!r}")
    seen.add(gate_id)
    out: dict[str, Any] = {"id": gate_id}
    if entry.get("min_pass_rate") is not None:
        out["min_pass_rate"] = chk.number(
            f"{path}.min_pass_rate", entry["min_pass_rate"], lo=0, hi=1,
            what="a number between 0 and 1",
        )
    if "guardrails" in entry and entry["guardrails"] is not None:
        out["guardrails"] = _parse_guardrails(f"{path}.guardrails", entry["guardrails"], chk)
    return out


def _parse_guardrails(path: str, value: Any, chk: Checker) -> list[dict[str, Any]]:
    if not isinstance(value, list):
        chk.fail(path, f"expected a list of guardrail objects, got {describe(value)}")
    if len(value) > MAX_GUARDRAILS:
        chk.fail(path, f"lists {len(value)} guardrails (at most {MAX_GUARDRAILS} per gate)")
    seen: set[str] = set()
    out = []
    for i, item in enumerate(value):
        where = f"{path}[{i}]"
        rail = chk.obj(where, item, "a guardrail object {kpi, tolerance, severity?}")
        chk.known_keys(where, rail, GUARDRAIL_KEYS)
        if "kpi" not in rail:
            chk.fail(where, "missing 'kpi' (expected a business KPI id)")
        kpi = _check_id(f"{where}.kpi", rail["kpi"], "KPI id", chk)
        if kpi in seen:
            chk.fail(f"{where}.kpi", f"duplicate KPI {kpi!r} for this gate")
        seen.add(kpi)
        if "tolerance" not in rail:
            chk.fail(where, "missing 'tolerance' (expected a number >= 0)")
        tolerance = chk.number(
            f"{where}.tolerance", rail["tolerance"], lo=0, hi=MAX_TOLERANCE,
            what=f"a number between 0 and {MAX_TOLERANCE:,}".replace(",", " "),
        )
        severity = chk.choice(f"{where}.severity", rail.get("severity", "block"), SEVERITIES)
        out.append({"kpi": kpi, "tolerance": tolerance, "severity": severity})
    return out
