"""The one reading of a JSON number, shared by the decoders, the policy, the verdict and the
report builders.

A server answer (or a result file) may carry a number as ``1``, ``0.5``, ``true``, ``"3"``,
``NaN`` or nothing at all. Only a finite ``int`` or ``float`` that is not a ``bool`` counts
as a measurement; anything else reads as None ("not known"), never as zero.
"""

from __future__ import annotations

import math
from typing import Any


def number(value: Any) -> int | float | None:
    """A finite number (its own type kept), else None: booleans and NaN are not numbers."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return value if math.isfinite(value) else None


def real(value: Any) -> float | None:
    """:func:`number` as a float."""
    n = number(value)
    return None if n is None else float(n)


def whole(value: Any) -> int | None:
    """An ``int`` that is not a ``bool``, else None (a count as the server sent it)."""
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def json_safe(value: Any) -> Any:
    """A JSON-safe copy: non-finite floats become None, recursively (mappings, sequences)."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_safe(v) for v in value]
    return value
