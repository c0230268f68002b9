"""Comments and docstrings cite only what a reader of this repository can open.

No comment or docstring in ``neens_action`` or ``neens_sandbox`` names an endpoint number
(``E12``), a decision or issue number, a spec section or a document that is not in the
repository: it says the fact itself (``POST /model-sweeps``) or names a page of ``docs/``.
Comments are read as Python tokens, docstrings with ``ast`` (module, class and function);
other string literals are user-facing text and are not checked.
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("neens_action", "neens_sandbox")
CITATION = re.compile(
    r"\bE[0-9]{1,2}\b"  # an endpoint number: E1, E12-E16
    r"|\b[Dd]ecision [0-9]+"
    r"|\b[Ii]ssue #?[0-9]+"
    r"|§"
    r"|\bspec\b[ ,]*(?:``?neens-api\.md``?[ ,]*)?(?:section )?[0-9]+(?:\.[0-9]+)*"
    r"|\b(?:neens-api|neens-eval-runner|stress-tests|DESIGN)\.md\b"  # not in this repository
)


def comments_and_docstrings(source: str) -> list[tuple[int, str]]:
    """``(line, text)`` for every comment and every line of every docstring in ``source``."""
    found = [(tok.start[0], tok.string)
             for tok in tokenize.generate_tokens(io.StringIO(source).readline)
             if tok.type == tokenize.COMMENT]
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef,
                                 ast.AsyncFunctionDef)):
            continue
        body = node.body
        if (body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant)
                and isinstance(body[0].value.value, str)):
            first = body[0].value.lineno
            found.extend((first + i, line)
                         for i, line in enumerate(body[0].value.value.splitlines()))
    return found


def offenders(source: str, name: str) -> list[str]:
    return [f"{name}:{line}: {text.strip()}"
            for line, text in comments_and_docstrings(source) if CITATION.search(text)]


def test_the_check_finds_citations_in_comments_and_docstrings_only() -> None:
    source = '''"""Module (spec 4.12, decision 12)."""
x = "E12 in user-facing text is not a comment"  # E13 is
def f():
    """Calls ``POST /model-sweeps`` (issue 10)."""
class C:
    """See docs/sweep.md; `spec §3`; ``spec neens-api.md 10.8``."""
# the GitHub reference ``#12`` and ``E2E`` tests are fine; so is the comparison spec
'''
    assert offenders(source, "m.py") == [
        "m.py:2: # E13 is",
        'm.py:1: Module (spec 4.12, decision 12).',
        "m.py:4: Calls ``POST /model-sweeps`` (issue 10).",
        "m.py:6: See docs/sweep.md; `spec §3`; ``spec neens-api.md 10.8``.",
    ]


def test_no_comment_cites_what_the_repository_does_not_hold() -> None:
    found: list[str] = []
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            name = path.relative_to(ROOT).as_posix()
            found += offenders(path.read_text(encoding="utf-8"), name)
    files = sorted({line.split(":", 1)[0] for line in found})
    assert not found, (
        f"{len(found)} comment/docstring lines in {len(files)} files cite an endpoint number, "
        "a decision or issue number, a spec section or a document outside the repository; "
        "say the fact or name a page of docs/:\n" + "\n".join(found))
