"""``docs/internals.md`` names only repository paths that exist.

A path is a backticked token that looks like one (``neens_action/ci/main.py``, ``docs/``,
``tests/helpers.py``): a folder ending with ``/``, or a name with a slash whose last part has
a file extension or whose first part is an entry of the repository root. Paths are written
from the repository root; API paths (``/preprod-evals``), URL templates, absolute paths of
the image and content types are not repository paths. Markdown links are checked too,
relative to ``docs/``.
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "internals.md"
EXTENSIONS = frozenset({"py", "md", "yml", "yaml", "toml", "txt", "json", "cfg", "ini", "sh"})
_CODE = re.compile(r"`([^`\n]+)`")
_LINK = re.compile(r"\]\(([^)\s#]+)(?:#[^)]*)?\)")
_PATHLIKE = re.compile(r"^\.?[A-Za-z0-9_][A-Za-z0-9_.-]*(?:/[A-Za-z0-9_.-]+)*/?$")


def repo_paths(text: str, top_level: set[str]) -> list[str]:
    """Every repository path ``text`` names in backticks, in order (``:attr`` suffixes cut)."""
    found: list[str] = []
    for token in _CODE.findall(text):
        token = token.strip().split(":", 1)[0]
        if "/" not in token or not _PATHLIKE.match(token):
            continue
        parts = token.rstrip("/").split("/")
        extension = parts[-1].rpartition(".")[2] if "." in parts[-1] else ""
        if token.endswith("/") or extension in EXTENSIONS or parts[0] in top_level:
            found.append(token)
    return found


def link_targets(text: str) -> list[str]:
    """Relative Markdown link targets (``[text](sandbox.md)``), outside code."""
    return [t for t in _LINK.findall(_CODE.sub("", text)) if "://" not in t]


def _top_level() -> set[str]:
    return {p.name for p in ROOT.iterdir()}


def test_extraction_finds_paths_and_skips_what_is_not_one() -> None:
    text = ("`neens_action/ci/main.py`, `docs/`, `tests/helpers.py:start_sandbox`, "
            "`sandbox/suites_store.py`, `/preprod-evals/{id}`, `application/json`, "
            "`I/N`, `/opt/neens/venv`, `neens-result.json`, `run/push/finish`, "
            "`https://app.example/runs/{run_id}`, `.github/workflows/`")
    assert repo_paths(text, {"neens_action", "docs", "tests", ".github"}) == [
        "neens_action/ci/main.py", "docs/", "tests/helpers.py", "sandbox/suites_store.py",
        ".github/workflows/",
    ]
    assert link_targets("see [s](sandbox.md) and [x](https://e.x/a.md) `[c](no.md)`") == [
        "sandbox.md"]


def test_every_path_in_internals_exists() -> None:
    text = DOC.read_text(encoding="utf-8")
    paths = repo_paths(text, _top_level())
    assert len(paths) > 60, "the path extraction found almost nothing: is it broken?"
    missing = sorted({p for p in paths if not (ROOT / p).exists()})
    assert not missing, (
        "docs/internals.md names paths that do not exist (write them from the repository "
        f"root): {missing}")


def test_every_link_in_internals_resolves() -> None:
    text = DOC.read_text(encoding="utf-8")
    missing = [t for t in link_targets(text) if not (DOC.parent / t).exists()]
    assert not missing, f"docs/internals.md links to missing files: {missing}"
