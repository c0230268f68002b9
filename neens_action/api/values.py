"""How one JSON value is read: the one reading of a number (shared by the decoders, the
policy, the verdict and the report builders) and the tolerant readers the decoders of
:mod:`neens_action.api.answers` are made of.

A server answer (or a result file) may carry a number as ``1``, ``0.5``, ``true``, ``"3"``,
``NaN`` or nothing at all. Only a finite ``int`` or ``float`` that is not a ``bool`` counts
as a measurement; anything else reads as None ("not known"), never as zero.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from types import MappingProxyType
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


Json = Mapping[str, Any]
EMPTY: Json = MappingProxyType({})  # read-only: safe as a shared default


def obj(value: Any) -> Json:
    """The value when it is a JSON object, else an empty one."""
    return value if isinstance(value, Mapping) else EMPTY


def objs(value: Any) -> tuple[Json, ...]:
    """The JSON objects of a list (other entries dropped); () when it is not a list."""
    return tuple(v for v in value if isinstance(v, Mapping)) if isinstance(value, list) else ()


def text(value: Any) -> str:
    """A truthy value as text, else ""."""
    return str(value) if value else ""


def only_text(value: Any) -> str:
    """A string as is; "" for anything else."""
    return value if isinstance(value, str) else ""


def flag(value: Any) -> bool | None:
    """A JSON boolean; None for anything else."""
    return value if isinstance(value, bool) else None
