"""Every golden PR/MR comment, rendered the way GitHub renders it and laid out by headless
Chromium in GitHub's 900 px comment column: no table scrolls sideways, and the rendered text
shows no e-notation, no stray backticks and no invisible character inside a URL."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.integration.report.github_page import measure
from tests.unit.report.golden_util import GOLDEN

COMMENTS = sorted(GOLDEN.rglob("*comment*.md")) + sorted(GOLDEN.rglob("mr_note*.md"))
E_NOTATION = re.compile(r"\d(?:\.\d+)?[eE][+-]?\d")
ZERO_WIDTH = "\u200b\u200c\u200d\u2060\ufeff"
URL_WITH_ZW = re.compile(rf"(?i)(?:https?|www)[{ZERO_WIDTH}]*[:.][^\s]*")
# backticks that are the data of the hostile case, shown as the literal text they are
HOSTILE_BACKTICKS = ("`rm -rf`", "`$5`")


@pytest.fixture(scope="module")
def measured(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict]:
    comments = {str(p.relative_to(GOLDEN)): p.read_text(encoding="utf-8") for p in COMMENTS}
    work = tmp_path_factory.mktemp("chromium")
    return {m["name"]: m for m in measure(comments, Path(work))}


def test_every_golden_comment_is_measured(measured: dict[str, dict]) -> None:
    assert len(COMMENTS) >= 30 and len(measured) == len(COMMENTS)
    assert sum(len(m["tables"]) for m in measured.values()) >= 30


@pytest.mark.parametrize("name", [str(p.relative_to(GOLDEN)) for p in COMMENTS])
def test_comment_fits_githubs_column(measured: dict[str, dict], name: str) -> None:
    page = measured[name]
    for n, table in enumerate(page["tables"]):
        assert table["client"] > 0, f"{name}: table {n} was not laid out"
        assert table["scroll"] <= table["client"] <= 900, (
            f"{name}: table {n} scrolls sideways ({table['scroll']} px in a "
            f"{table['client']} px box)")
    for url in URL_WITH_ZW.findall(page["text"]) + page["links"]:
        assert not any(c in url for c in ZERO_WIDTH), f"{name}: invisible character in {url!r}"
    text = "".join(c for c in page["text"] if c not in ZERO_WIDTH)
    for fragment in HOSTILE_BACKTICKS:
        text = text.replace(fragment, "")
    assert not E_NOTATION.search(text + " ".join(page["code"])), f"{name}: e-notation"
    assert "`" not in text, f"{name}: a literal backtick shows: {text[text.find('`') - 40:][:80]!r}"


def test_a_table_too_wide_is_caught(tmp_path: Path) -> None:
    """The measure is real: an unbreakable cell wider than the column scrolls."""
    wide = "| a | b |\n|--|--|\n| " + "x" * 200 + " | y |\n"
    fits = "| a | b |\n|--|--|\n| " + "word " * 200 + " | y |\n"
    got = {m["name"]: m["tables"][0] for m in measure({"wide": wide, "fits": fits}, tmp_path)}
    assert got["wide"]["scroll"] > got["wide"]["client"]
    assert got["fits"]["scroll"] <= got["fits"]["client"]
