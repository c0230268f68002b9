"""neens_action: run Neens pre-prod evaluations as a CI gate.

Library use (mirrors the vendor runner's library surface under our package name)::

    from neens_action import NeensEvalClient, run_eval
    client = NeensEvalClient("https://neens.example.com", api_key="nk_live_...")
    outcome = run_eval("ppr_123", ["python", "-m", "my_agent"], client=client)
    raise SystemExit(outcome.exit_code)

Names are resolved lazily so ``neens --version`` does not pay for requests and friends.
"""

from __future__ import annotations

from typing import Any

__version__ = "1.0.0"

_LAZY = {
    "NeensEvalClient": ("neens_action.api.client", "NeensEvalClient"),
    "run_eval": ("neens_action.library", "run_eval"),
    "run_push_eval": ("neens_action.library", "run_push_eval"),
    "GatePolicy": ("neens_action.policy", "GatePolicy"),
    "sweep_context": ("neens_action.agents.correlation", "sweep_context"),
    "NeensApiError": ("neens_action.errors", "NeensApiError"),
}

__all__ = ["__version__", *_LAZY]


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        module, attr = _LAZY[name]
        return getattr(importlib.import_module(module), attr)
    raise AttributeError(f"module 'neens_action' has no attribute {name!r}")
