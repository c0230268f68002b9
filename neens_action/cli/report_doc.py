"""The shape of a saved result document (``neens report RESULT.json``), checked before use.

A result file may come from anywhere (an artifact of another job, a hand-edited file), so
``neens report`` validates it against the :class:`~neens_action.report.model.Report` it
claims to hold before rendering anything: every field with a value is checked against the
field's type (recursively, for tables, items, judges, charts...), the fields without a default
must be there, and the first mismatch is one sentence naming its path
(``report.items[3].judges: must be a list``). Unknown keys are ignored, as when reading.
"""

from __future__ import annotations

import collections.abc
import dataclasses
import functools
import json
import types
import typing
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from neens_action.report.model import Report

MAX_DEPTH = 64  # a report nests four levels; anything far deeper is not one of ours


class BadDocument(ValueError):
    """The document is not a saved result; the message says where and why."""


def load(text: str) -> Report:
    """The ``report`` of a result document's text, checked, then read; raises
    :class:`BadDocument`."""
    try:
        doc = json.loads(text)
    except RecursionError:
        raise BadDocument("it is nested too deeply to be a Neens result") from None
    except ValueError as exc:
        raise BadDocument(f"it is not JSON ({exc})") from None
    if not isinstance(doc, dict):
        raise BadDocument("it is not a JSON object")
    saved = doc.get("report")
    if saved is None:
        raise BadDocument("it has no `report` (written by neens-action before format 2?)")
    if _depth(saved) > MAX_DEPTH:
        raise BadDocument("it is nested too deeply to be a Neens result")
    from neens_action.report.model import Report
    from neens_action.report.serial import from_json

    check(saved, Report, "report")
    return from_json(saved)


def _depth(value: Any) -> int:
    """Nesting depth of a JSON value, without recursion."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        node, level = stack.pop()
        deepest = max(deepest, level)
        if deepest > MAX_DEPTH:
            break
        if isinstance(node, dict):
            stack.extend((v, level + 1) for v in node.values())
        elif isinstance(node, list):
            stack.extend((v, level + 1) for v in node)
    return deepest


@functools.cache
def _hints(cls: type) -> dict[str, Any]:
    return typing.get_type_hints(cls)


def check(value: Any, cls: type, where: str) -> None:
    """``value`` (JSON) can be read as the dataclass ``cls``; else :class:`BadDocument`."""
    if not isinstance(value, dict):
        raise BadDocument(f"{where}: must be an object")
    hints = _hints(cls)
    for f in dataclasses.fields(cls):
        required = (f.default is dataclasses.MISSING
                    and f.default_factory is dataclasses.MISSING)
        if f.name not in value:
            if required:
                raise BadDocument(f"{where}: `{f.name}` is missing")
            continue
        _check_type(value[f.name], hints[f.name], f"{where}.{f.name}")


def _check_type(value: Any, hint: Any, where: str) -> None:
    origin = typing.get_origin(hint)
    args = typing.get_args(hint)
    if origin in (typing.Union, types.UnionType):
        if value is None and type(None) in args:
            return
        options = [a for a in args if a is not type(None)]
        errors = []
        for option in options:
            try:
                _check_type(value, option, where)
                return
            except BadDocument as exc:
                errors.append(str(exc))
        raise BadDocument(errors[0] if len(errors) == 1 else f"{where}: has the wrong type")
    if origin in (list, collections.abc.Sequence):  # a spilled run's items read as a list
        if not isinstance(value, list):
            raise BadDocument(f"{where}: must be a list")
        for i, element in enumerate(value):
            _check_type(element, args[0], f"{where}[{i}]")
        return
    if origin is tuple:  # (label, value) pairs are saved as two-element lists
        if not isinstance(value, list) or len(value) != len(args):
            raise BadDocument(f"{where}: must be a list of {len(args)}")
        for i, (element, arg) in enumerate(zip(value, args, strict=True)):
            _check_type(element, arg, f"{where}[{i}]")
        return
    if origin is dict:
        if not isinstance(value, dict):
            raise BadDocument(f"{where}: must be an object")
        for key, element in value.items():
            _check_type(element, args[1], f"{where}.{key}")
        return
    if dataclasses.is_dataclass(hint):
        check(value, hint, where)  # type: ignore[arg-type]
        return
    _check_scalar(value, hint, where)


def _check_scalar(value: Any, hint: Any, where: str) -> None:
    if hint is str:
        ok = isinstance(value, str)
    elif hint is bool:
        ok = isinstance(value, bool)
    elif hint is int:
        ok = isinstance(value, int) and not isinstance(value, bool)
    elif hint is float:
        ok = isinstance(value, (int, float)) and not isinstance(value, bool)
    else:
        ok = True  # Any
    if not ok:
        name = {str: "a string", bool: "true or false", int: "a whole number",
                float: "a number"}.get(hint, str(hint))
        raise BadDocument(f"{where}: must be {name}")
