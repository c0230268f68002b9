"""Untrusted text in Markdown: GitHub and GitLab references, mentions and github.com URLs
render as plain text (no link, no mention, no cross-reference), checked with GitHub's own
renderer (cmark-gfm with its extensions)."""

from __future__ import annotations

import html
import re

import cmarkgfm
import pytest
from cmarkgfm.cmark import Options

from neens_action.text import ZWSP, md_cell, md_link, md_text

# What GitHub's and GitLab's reference filters look for in the rendered text (not in links or
# code): with a zero-width space after the sigil none of these can match.
REFERENCE = re.compile(
    r"(?i)(?<![\w/])@[a-z0-9]"  # @user, @group/team
    r"|#\d|!\d|&\d"  # issue, merge request, epic (also after owner/repo)
    r"|%[a-z0-9\"]"  # milestone
    r"|\bgh-\d"  # GH-77
    r"|github\.com/|https?://|www\."  # github.com URLs, any autolink
)

HOSTILE = [
    "see GH-77 and gh-8",
    "fixes #12, also neens/eval-action#13",
    "https://github.com/neens/eval-action/issues/12",
    "https://github.com/neens/eval-action/pull/9#issuecomment-1",
    "http://www.github.com/neens/eval-action/commit/0123abc",
    "www.github.com/neens/eval-action/discussions/3",
    "github.com/neens/eval-action/issues/4",
    "merge !123 and group/project!7",
    "milestones %v1 %12 %\"Release 2\" group/project%v2",
    "epics &45 group&46",
    "ping @user @org/team @maintainers",
    "HTTPS://GITHUB.COM/neens/eval-action/issues/1",
]


def render(markdown: str) -> str:
    return cmarkgfm.github_flavored_markdown_to_html(markdown, options=Options.CMARK_OPT_UNSAFE)


def rendered_text(markdown: str) -> str:
    return html.unescape(re.sub(r"<[^>]+>", "", render(markdown))).strip()


@pytest.mark.parametrize("text", HOSTILE)
@pytest.mark.parametrize("where", ["inline", "line start", "table cell", "link label"])
def test_references_render_as_plain_text(text: str, where: str):
    if where == "inline":
        markdown = f"Judge reason: {md_text(text)}"
        expected = f"Judge reason: {text}"
    elif where == "line start":
        markdown = f"- {md_text(text, line_start=True)}"
        expected = text
    elif where == "table cell":
        markdown = f"| item | reason |\n|---|---|\n| i1 | {md_cell(text)} |"
        expected = f"item reason i1 {text}"
    else:
        markdown = md_link(text, "https://neens.example.com/runs/1")
        expected = text
    out = render(markdown)
    # No link but our own, no mention markup, nothing pointing at github.com.
    links = re.findall(r'<a [^>]*href="([^"]*)"', out)
    assert links == (["https://neens.example.com/runs/1"] if where == "link label" else [])
    assert "github.com" not in "".join(links)
    seen = rendered_text(markdown)
    # A reader sees exactly the text (the zero-width spaces are invisible)...
    assert re.sub(r"\s+", " ", seen.replace(ZWSP, "")) == re.sub(r"\s+", " ", expected)
    # ...and no reference filter can match it.
    assert not REFERENCE.search(seen), (seen, REFERENCE.search(seen))


def test_ordinary_text_is_left_alone():
    for text in ["50% off", "a & b", "wow!", "#tag", "$x", "~ approx", "x!y", "me @ home",
                 "github.company.com", "price 3$"]:
        assert ZWSP not in md_text(text), text


def test_each_reference_gets_exactly_one_break():
    assert md_text("GH-77") == f"GH-{ZWSP}77"
    assert md_text("!1 &2 %v") == f"!{ZWSP}1 &amp;{ZWSP}2 %{ZWSP}v"
    assert md_text('%"m"') == f"%{ZWSP}&quot;m&quot;"
    assert md_text("https://github.com/o/r/issues/1") == (
        f"https:{ZWSP}//{ZWSP}github.com{ZWSP}/o/r/issues/1"
    )
