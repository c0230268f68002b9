"""A gate policy document (the user's JSON/YAML file, decoded) checked as a whole and turned
into a typed :class:`~neens_action.settings.policy_file.Document`.

The parts are checked where their rules live: ``gate`` and ``rules`` in
:mod:`neens_action.settings.policy_file`, the ``gates`` block in
:mod:`neens_action.settings.policy_gates`; reading the file is
:mod:`neens_action.settings.policy_read`. Every error is one line,
``gate policy <file>: <key path>: <expected>``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from neens_action.settings.policy_file import (
    MISSING_BASELINE_MODES,
    TOP_KEYS,
    Checker,
    Document,
    describe,
    parse_gate,
    parse_rules,
)
from neens_action.settings.policy_gates import parse_gates


def parse_document(data: Any, chk: Checker) -> Document:
    """Validate a whole decoded policy document (any mapping is read as an object)."""
    if isinstance(data, Mapping) and not isinstance(data, dict):
        data = dict(data)
    if not isinstance(data, dict):
        chk.fail("", f"expected an object at the top level, got {describe(data)}")
    chk.obj("top level", data, "an object")
    chk.known_keys("", data, TOP_KEYS)
    omb = data.get("on_missing_baseline")
    mode = "warn" if omb is None else chk.choice("on_missing_baseline", omb, MISSING_BASELINE_MODES)
    return Document(
        gate=parse_gate(data.get("gate"), chk),
        gates=parse_gates(data.get("gates"), chk),
        rules=parse_rules(data.get("rules"), chk),
        on_missing_baseline=mode,
    )
