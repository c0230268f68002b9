"""Reading a policy file: bytes, UTF-8, JSON or YAML (docs/policy.md).

``.yml`` / ``.yaml`` are YAML. Any other name is JSON; when that fails and PyYAML is importable
the text is tried as YAML (a YAML mapping is accepted), otherwise the JSON error is reported.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from neens_action.errors import PolicyError

YAML_SUFFIXES = (".yml", ".yaml")


def read_policy_bytes(path: str | Path) -> bytes:
    shown = str(path)
    try:
        return Path(path).read_bytes()
    except FileNotFoundError:
        raise PolicyError(f"gate policy {shown}: file not found") from None
    except IsADirectoryError:
        raise PolicyError(f"gate policy {shown}: is a directory, not a file") from None
    except PermissionError:
        message = f"gate policy {shown}: cannot read the file (permission denied)"
        raise PolicyError(message) from None
    except OSError as exc:
        reason = exc.strerror or exc.__class__.__name__
        raise PolicyError(f"gate policy {shown}: cannot read the file ({reason})") from None


def decode_policy(raw: bytes, shown: str) -> Any:
    """Decode the raw bytes of ``shown`` (a path) into a Python value."""
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise PolicyError(
            f"gate policy {shown}: not UTF-8 text (invalid byte at offset {exc.start}); "
            "save the file as UTF-8"
        ) from None
    if not text.strip():
        message = f"gate policy {shown}: the file is empty (expected a JSON or YAML object)"
        raise PolicyError(message)
    if shown.lower().endswith(YAML_SUFFIXES):
        yaml = _import_yaml()
        if yaml is None:
            raise PolicyError(
                f"gate policy {shown}: a YAML policy needs PyYAML (pip install pyyaml), "
                "or write the policy as JSON"
            )
        try:
            return yaml.safe_load(text)
        except yaml.YAMLError as exc:
            raise PolicyError(f"gate policy {shown}: not valid YAML ({_yaml_error(exc)})") from None
        except RecursionError:
            raise PolicyError(f"gate policy {shown}: not valid YAML (nested too deeply)") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        json_error = f"line {exc.lineno} column {exc.colno}: {exc.msg}"
    except RecursionError:
        json_error = "nested too deeply"
    yaml = _import_yaml()
    if yaml is not None:
        try:
            data = yaml.safe_load(text)
        except (yaml.YAMLError, RecursionError):
            data = None
        if isinstance(data, dict):
            return data
        raise PolicyError(f"gate policy {shown}: not valid JSON ({json_error}), nor a YAML mapping")
    raise PolicyError(f"gate policy {shown}: not valid JSON ({json_error})")


def _import_yaml() -> Any:
    try:
        import yaml
    except ImportError:  # pragma: no cover - pyyaml is a dependency
        return None
    return yaml


def _yaml_error(exc: Exception) -> str:
    mark = getattr(exc, "problem_mark", None)
    problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
    if mark is not None:
        return f"line {mark.line + 1} column {mark.column + 1}: {problem}"
    return str(problem)
