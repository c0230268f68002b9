"""Untrusted text for a terminal: one line, no control characters (so it can neither break
the layout nor smuggle escape sequences), optionally shortened."""

from __future__ import annotations

import re

_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")


def clean(text: object, limit: int | None = None) -> str:
    """One line, no control characters, at most ``limit`` characters (with an ellipsis)."""
    s = _CONTROL.sub(" ", str(text)).strip()
    if limit is not None and len(s) > limit:
        s = s[: max(0, limit - 1)] + "…"
    return s
