"""Sweep outcomes built from answers written as the server sends them (JSON objects), decoded
as the client decodes them, so a test reads like the wire and checks what a flow would hold."""

from __future__ import annotations

from typing import Any

from neens_action.api.sweep_comparison import SweepComparison
from neens_action.api.sweeps import Estimate, Sweep
from neens_action.outcome import FailedStart, SweepOutcome


def sweep_outcome(**kw: Any) -> SweepOutcome:
    """A :class:`SweepOutcome`; ``sweep``, ``comparison`` and ``estimate`` may be given as
    the server's JSON objects, ``failed_starts`` as the ``--json`` entries."""
    decoders = {"sweep": Sweep.decode, "comparison": SweepComparison.decode,
                "estimate": Estimate.decode}
    for key, decode in decoders.items():
        if isinstance(kw.get(key), dict):
            kw[key] = decode(kw[key])
    kw["failed_starts"] = [FailedStart(f["runId"], f["arm"], f["rep"], f["error"])
                           if isinstance(f, dict) else f for f in kw.get("failed_starts", [])]
    return SweepOutcome(**kw)
