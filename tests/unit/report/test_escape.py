from __future__ import annotations

import pytest

from neens_action import text as escape
from neens_action.text import ZWSP


def test_md_text_neutralises_markdown_html_and_mentions() -> None:
    out = escape.md_text("a|b <i>x</i> & @bob #7 `c` *e* _u_ [l](u) ~s~ \\")
    assert out == (
        f"a\\|b &lt;i&gt;x&lt;/i&gt; &amp; @{ZWSP}bob #{ZWSP}7 \\`c\\` \\*e\\* \\_u\\_ "
        f"\\[l\\](u) \\~{ZWSP}s\\~ \\\\"  # ~s is a GitLab label reference
    )


def test_md_text_flattens_lines_and_drops_controls() -> None:
    assert escape.md_text("one\ntwo\r\n\tthree\x1b[31m") == "one two three\\[31m"


@pytest.mark.parametrize("text", ["# h", "- item", "+ x", "= x", "1. item", "2) item"])
def test_md_text_line_start(text: str) -> None:
    out = escape.md_text(text, line_start=True)
    assert "\\" in out[:3]
    assert escape.md_text(text) == text  # not at a line start: untouched


def test_email_and_bare_at_are_left_alone() -> None:
    assert escape.md_text("a @ b") == "a @ b"
    assert escape.md_text("me@example.com") == f"me@{ZWSP}example.com"


def test_md_cell_cuts_before_escaping_and_never_empty() -> None:
    assert escape.md_cell("") == "—"
    out = escape.md_cell("<<<<<<<<<<", 4)
    assert out == "&lt;&lt;&lt;…"


def test_md_link_only_http() -> None:
    assert escape.md_link("r_1", "https://x.example/r/1") == "[r\\_1](https://x.example/r/1)"
    assert escape.md_link("r", "javascript:alert(1)") == "r"
    assert escape.md_link("r", "https://x.example/a)b") == "r"


def test_md_code_survives_backticks_and_pipes() -> None:
    assert escape.md_code("a `b` c") == "``a `b` c``"
    assert escape.md_code("`x`") == "`` `x` ``"
    assert escape.md_code("a|b", in_table=True) == "`a\\|b`"


def test_excerpt() -> None:
    assert escape.excerpt("a  b\nc", 10) == "a b c"
    assert escape.excerpt("abcdefghij", 5) == "abcd…"
    assert escape.excerpt("x", 0) == ""


def test_truncate_chars_keeps_note_and_limit() -> None:
    text = "line one\n" * 100
    out = escape.truncate_chars(text, 100, "[cut]")
    assert len(out) <= 100 and out.endswith("[cut]") and out.startswith("line one\n")
    assert out[: -len("[cut]")].endswith("\n")
    assert escape.truncate_chars("short", 100, "[cut]") == "short"


def test_truncate_chars_never_leaves_half_entity() -> None:
    text = "x" * 10 + "&lt;" * 50
    for limit in range(12, 40):
        out = escape.truncate_chars(text, limit, "!")
        body = out[:-1]
        assert not body.endswith(("&", "&l", "&lt")), body
        assert len(out) <= limit


@pytest.mark.parametrize("char", ["é", "€", "𝔘", "☕"])
def test_truncate_bytes_never_splits_a_character(char: str) -> None:
    text = char * 1000
    for limit in range(50, 90):
        out = escape.truncate_bytes(text, limit, "[cut]")
        assert len(out.encode("utf-8")) <= limit
        body = out[: -len("[cut]")]
        assert body == char * len(body)
        assert out.endswith("[cut]")


def test_truncate_bytes_fits_untouched() -> None:
    assert escape.truncate_bytes("€" * 10, 30, "!") == "€" * 10
    assert escape.truncate_bytes("€" * 11, 30, "!") != "€" * 11


def test_workflow_command_escaping() -> None:
    assert escape.gh_data("50%\r\nnext::x") == "50%25%0D%0Anext::x"
    assert escape.gh_property("a:b,c%\n") == "a%3Ab%2Cc%25%0A"


def test_xml_text_drops_illegal_characters() -> None:
    assert escape.xml_text("a\x00b\x0bc\td\ne\ufffef\U0001f600") == "abc\td\nef\U0001f600"


def test_dotenv_value_is_one_short_line() -> None:
    assert escape.dotenv_value("a\nb\x00c", 100) == "a b c"
    assert len(escape.dotenv_value("x" * 5000, 100)) == 100


def test_a_url_in_an_error_line_is_a_code_span_with_nothing_invisible_inside() -> None:
    from neens_action.report.render.markdown import render_summary
    from neens_action.text import ZWSP, md_message
    from tests.unit.report.cases import CASES

    line = md_message("could not reach Neens at http://127.0.0.1:9: connection refused "
                      "(see https://x.example/a_b?c=1). @team #12 <b>")
    assert line == ("could not reach Neens at `http://127.0.0.1:9`: connection refused "
                    f"(see `https://x.example/a_b?c=1`). @{ZWSP}team #{ZWSP}12 &lt;b&gt;")
    text = render_summary(CASES["error_unreachable"]())
    assert "`http://127.0.0.1:9`" in text and f"http{ZWSP}" not in text
