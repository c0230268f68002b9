"""Golden-file comparison: ``NEENS_UPDATE_GOLDEN=1`` rewrites the files instead of comparing."""

from __future__ import annotations

import os
from pathlib import Path

from neens_action import __version__

GOLDEN = Path(__file__).resolve().parent / "golden"


def normalise(text: str) -> str:
    """Keep golden files stable across version bumps."""
    return text.replace(f"neens-action {__version__}", "neens-action VERSION")


def check_golden(name: str, text: str) -> None:
    path = GOLDEN / name
    text = normalise(text)
    if os.environ.get("NEENS_UPDATE_GOLDEN") == "1":
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    assert path.exists(), f"missing golden file {path}: run with NEENS_UPDATE_GOLDEN=1"
    expected = path.read_text(encoding="utf-8")
    assert text == expected, f"{name} differs from its golden file (NEENS_UPDATE_GOLDEN=1)"
