"""Every report case as golden files (summary, comment, console), and every golden Markdown
file rendered the way GitHub renders it (cmark-gfm with GitHub's extensions)."""

from __future__ import annotations

import html
import re
from html.parser import HTMLParser

import cmarkgfm
import pytest

from neens_action.report.render import markdown
from neens_action.report.render.text import render as render_text
from tests.unit.report.cases import CASES as FIRST_CASES
from tests.unit.report.cases_honest import HONEST_CASES
from tests.unit.report.golden_util import GOLDEN, check_golden

MARK = "<!-- neens-eval-action workflow=CI job=eval mode=run leg=0 -->"
JOB = "https://github.com/o/r/actions/runs/9"
CASES = {**FIRST_CASES, **HONEST_CASES}
TRUSTED = ("https://github.com/o/r/actions/runs/9", "https://app.example/",
           "https://gitlab.example.com/g/p/-/jobs/77")


@pytest.mark.parametrize("name", sorted(CASES))
def test_case_goldens(name: str) -> None:
    report = CASES[name]()
    check_golden(f"cases/{name}.summary.md", markdown.render_summary(report))
    check_golden(f"cases/{name}.comment.md",
                 markdown.render_comment(CASES[name](), marker=MARK, details_url=JOB))
    check_golden(f"cases/{name}.console.txt", render_text(report) + "\n")


class Rendered(HTMLParser):
    """Tables (rows of cells), links and the visible text of rendered HTML."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tables: list[list[tuple[str, list[str]]]] = []
        self.links: list[str] = []
        self.text: list[str] = []
        self._row: list[str] | None = None
        self._cell: list[str] | None = None
        self._kind = ""

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "table":
            self.tables.append([])
        elif tag == "tr":
            self._row = []
        elif tag in ("td", "th"):
            self._cell, self._kind = [], tag
        elif tag == "a":
            self.links.append(dict(attrs).get("href") or "")

    def handle_endtag(self, tag: str) -> None:
        if tag in ("td", "th") and self._row is not None and self._cell is not None:
            self._row.append("".join(self._cell).strip())
            self._cell = None
        elif tag == "tr" and self._row is not None:
            self.tables[-1].append((self._kind, self._row))
            self._row = None

    def handle_data(self, data: str) -> None:
        self.text.append(data)
        if self._cell is not None:
            self._cell.append(data)


def _golden_markdown() -> list[str]:
    return sorted(str(p.relative_to(GOLDEN)) for p in GOLDEN.rglob("*.md"))


@pytest.mark.parametrize("name", _golden_markdown())
def test_golden_markdown_renders_cleanly_on_github(name: str) -> None:
    source = (GOLDEN / name).read_text(encoding="utf-8")
    out = cmarkgfm.github_flavored_markdown_to_html(source)
    page = Rendered()
    page.feed(out)
    for table in page.tables:
        kind, head = table[0]
        assert kind == "th" and any(cell for cell in head), f"{name}: a table without a header"
        assert all(len(row) == len(head) for _, row in table), f"{name}: ragged table"
    visible = html.unescape("".join(page.text))
    for artefact in ("\\|", "&amp;", "\\_", "&lt;", "\\*"):
        assert artefact not in visible, f"{name}: {artefact!r} shows in the rendered text"
    for href in page.links:
        assert href.startswith(TRUSTED), f"{name}: link {href!r} comes from untrusted text"
    assert "<script" not in out and "<img" not in out and "\u202e" not in out


def visible_lines(comment: str) -> int:
    """Lines a reader sees without opening a ``<details>`` block (blank lines excluded)."""
    outside = re.sub(r"<details>.*?</details>", "", comment, flags=re.S)
    return sum(1 for line in outside.splitlines() if line.strip() and not line.startswith("<!--"))


def test_comment_of_25_failures_stays_short() -> None:
    report = CASES["many_failures"]()
    assert report.not_passing_count == 25
    comment = markdown.render_comment(report, marker=MARK, details_url=JOB)
    assert visible_lines(comment) < 70
    # 25 regressions failing one judge the same way: one group row, two example rows
    assert comment.count("| 25 | 🔻 regressed | ✗\u00a0correctness | [it\\_1](") == 1
    assert f"…and 23 more failing item(s): see [the full job summary]({JOB})" in comment
    summary = markdown.render_summary(CASES["many_failures"]())
    rows = [line for line in summary.splitlines() if line.startswith("| [it\\_")]
    assert len(rows) == 25  # the job summary is complete (items linked)
    assert "<summary>Failing items (25 of 25)</summary>" in summary  # ...and folded
    assert comment != summary
