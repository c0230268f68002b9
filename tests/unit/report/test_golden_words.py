"""Every golden file reads as numbers with units and plain words: no e-notation anywhere, and
no rendered golden Markdown shows a literal backtick (a setting named `like-this` in escaped
text); only the hostile cases carry backticks on purpose (untrusted text, shown as text)."""

from __future__ import annotations

import html
import re
from html.parser import HTMLParser

import cmarkgfm
import pytest

from tests.unit.report.golden_util import GOLDEN

E_NOTATION = re.compile(r"(?<![\w.])\d+(?:\.\d+)?[eE][+-]?\d+(?![\w.])")


def _goldens(pattern: str) -> list[str]:
    return sorted(str(p.relative_to(GOLDEN)) for p in GOLDEN.rglob(pattern) if p.is_file())


@pytest.mark.parametrize("name", _goldens("*"))
def test_no_golden_contains_e_notation(name: str) -> None:
    text = (GOLDEN / name).read_text(encoding="utf-8")
    found = E_NOTATION.findall(text)
    assert not found, f"{name}: e-notation {found[:3]}"


class Prose(HTMLParser):
    """The visible text of rendered HTML outside code spans and blocks."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.text: list[str] = []
        self._code = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in ("code", "pre"):
            self._code += 1

    def handle_endtag(self, tag: str) -> None:
        if tag in ("code", "pre"):
            self._code -= 1

    def handle_data(self, data: str) -> None:
        if not self._code:
            self.text.append(data)


@pytest.mark.parametrize("name", [n for n in _goldens("*.md") if "hostile" not in n])
def test_no_rendered_golden_shows_a_literal_backtick(name: str) -> None:
    source = (GOLDEN / name).read_text(encoding="utf-8")
    page = Prose()
    page.feed(cmarkgfm.github_flavored_markdown_to_html(source))
    visible = html.unescape("".join(page.text))
    assert "`" not in visible, f"{name}: a literal backtick in {visible[:0]}" + next(
        (line for line in visible.splitlines() if "`" in line), "")


def test_the_checks_catch_what_they_look_for() -> None:
    assert E_NOTATION.findall("p = 2.8e-05, 1e-06 and 1.35e+05") == ["2.8e-05", "1e-06",
                                                                     "1.35e+05"]
    assert not E_NOTATION.findall("msw-4f2c91ab0d3e ppr_1e5x 9.1 % ×1,351")
    page = Prose()
    page.feed(cmarkgfm.github_flavored_markdown_to_html("\\`max-regressions\\` and `code`"))
    assert "".join(page.text).count("`") == 2
