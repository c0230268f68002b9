"""Fixtures shared by the integration tests."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture
def tree(tmp_path) -> Path:
    """A small project tree for `eval watch`: sources, the agent's mode file, a .git dir."""
    root = tmp_path / "project"
    root.mkdir()
    (root / "app.py").write_text("VERSION = 1\n")
    (root / "mode.txt").write_text("good\n")
    (root / ".git").mkdir()
    (root / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    return root
