from __future__ import annotations

import re

import pytest

from neens_action.publish.github import marker as gh_marker
from neens_action.publish.gitlab import marker as gl_marker
from neens_action.report.model import Table
from neens_action.report.render import markdown
from neens_action.text import ZWSP
from tests.unit.report import samples
from tests.unit.report.golden_util import check_golden

MARK = gh_marker(workflow="CI", job="eval", mode="run", leg="0")


@pytest.mark.parametrize("name", ["passed", "failed", "errored", "no_baseline"])
def test_summary_golden(name: str) -> None:
    report = getattr(samples, name)()
    check_golden(f"summary_{name}.md", markdown.render_summary(report))


def test_summary_hostile_golden() -> None:
    check_golden("summary_hostile.md", markdown.render_summary(samples.hostile(n_items=3)))


def test_comment_golden() -> None:
    text = markdown.render_comment(
        samples.failed(), marker=MARK, details_url="https://github.com/o/r/actions/runs/9"
    )
    check_golden("comment_failed.md", text)
    assert text.startswith(MARK + "\n")


def test_mr_note_golden() -> None:
    mark = gl_marker(job="neens-eval", mode="run")
    text = markdown.render_comment(
        samples.failed(), marker=mark, details_url="https://gitlab.example.com/g/p/-/jobs/77"
    )
    check_golden("mr_note_failed.md", text)


def test_headline_verdicts() -> None:
    assert markdown.headline(samples.passed()).startswith("### ✅ Passed: ")
    assert markdown.headline(samples.failed()).startswith("### ❌ Blocked: ")
    assert markdown.headline(samples.errored()).startswith("### 💥 Errored: ")
    assert markdown.headline(samples.no_baseline()).startswith("### ⚠️ Passed with warnings: ")


def test_summary_shows_gate_facts_items_and_link() -> None:
    text = markdown.render_summary(samples.failed())
    assert "[ppr\\_124](https://app.example/runs/ppr_124)" in text
    assert "| **Regressions** | 1 |" in text
    assert "| **Baseline** | run ppr\\_100 — branch:main |" in text
    assert "#### Failing items (2 of 3)" in text
    assert ("| it\\_2<br>fail<br>0.25/1<br><details><summary>input</summary>Refund for order 7 "
            "(\\$\u20607.50)?</details> | — | — | correctness: expected '\\$\u20607.50' in the "
            "output |") in text
    assert ("| it\\_3<br>unscored<br><details><summary>input</summary>Cancel my subscription"
            "</details> | — | — | no trace captured |") in text
    assert "- regressions 1 (max 0)" in text  # the server's reason in the report's units
    assert "#### Policy rules" in text


def test_error_outcome_has_caution_and_no_run_link() -> None:
    text = markdown.render_summary(samples.errored())
    assert "> [!CAUTION]" in text
    assert "> scoring did not finish" in text
    assert "| **Run** | ppr\\_125 |" in text  # no base URL known: plain text, no link


def test_hostile_text_is_inert() -> None:
    text = markdown.render_summary(samples.hostile(n_items=5))
    assert "<script>" not in text and "<img" not in text and "<b>" not in text
    assert "<!-- -->" not in text
    assert "@octocat" not in text and "@team" not in text
    assert f"@{ZWSP}octocat" in text
    assert "javascript:" not in text.replace("javascript:alert", "")  # label only, never a link
    assert "](javascript" not in text
    assert "[x](https" not in text
    # every table row keeps its shape: unescaped pipes would add cells
    for line in text.splitlines():
        if line.startswith("| it"):
            cells = re.split(r"(?<!\\)\|", line)
            assert len(cells) == 2 + 4, line  # Item (state, score, suite, input) Judges Exp. Answer
    # the item text never spans lines, so '::' commands cannot start a line
    assert not any(line.startswith("::") for line in text.splitlines())


def test_failed_item_rows_are_capped_with_a_note() -> None:
    report = samples.hostile(n_items=60)
    comment = markdown.render_comment(report, marker=MARK)
    assert "…and 50 more failing item(s)" in comment
    summary = markdown.render_summary(report)
    assert "more failing item" not in summary


def _huge(rows: int) -> object:
    report = samples.failed()
    cell = "€uro ñ " + "x" * 300 + " 𝔘 "
    report.tables.append(Table("Big", ["A", "B"], [[cell, cell] for _ in range(rows)]))
    return report


def test_summary_truncated_within_one_mib() -> None:
    text = markdown.render_summary(_huge(3000))
    data = text.encode("utf-8")
    assert len(data) <= markdown.SUMMARY_LIMIT_BYTES
    assert len(data) > markdown.SUMMARY_LIMIT_BYTES - 2000  # used the room, not far below
    assert text.endswith(markdown.SUMMARY_TRUNCATED)
    assert text.startswith("### ❌ Blocked")
    body = text[: -len(markdown.SUMMARY_TRUNCATED)]
    assert body.endswith("\n")  # cut on a line boundary, never mid-row


def test_summary_custom_limit_never_splits_a_character() -> None:
    report = samples.failed()
    report.headline = "€" * 5000  # one long line of 3-byte characters
    for limit in range(600, 700):
        text = markdown.render_summary(report, limit=limit)
        assert len(text.encode("utf-8")) <= limit
        assert text.endswith(markdown.SUMMARY_TRUNCATED)


def test_comment_truncated_at_65536_chars() -> None:
    report = _huge(400)
    report.kind = "stress"  # eval comments leave the tables to the summary
    report.tables[-1].rows = [[c[0] * 3, c[1]] for c in report.tables[-1].rows]
    text = markdown.render_comment(report, marker=MARK)
    assert len(text) <= markdown.COMMENT_LIMIT_CHARS
    assert len(text) > markdown.COMMENT_LIMIT_CHARS - 1000
    assert text.startswith(MARK)
    assert text.endswith(markdown.COMMENT_TRUNCATED)


def test_small_report_is_not_truncated() -> None:
    text = markdown.render_comment(samples.passed(), marker=MARK)
    assert markdown.COMMENT_TRUNCATED not in text
    assert "Failed items" not in text


def test_chart_is_rendered_as_mermaid() -> None:
    text = markdown.render_summary(samples.hostile(n_items=1))
    block = text.split("```mermaid\n", 1)[1].split("```", 1)[0]
    assert block.startswith("xychart-beta")
    assert "`" not in block and "<" not in block
    assert "Not drawn (no value, never shown as 0)" in text


def test_sweep_report_names_the_sweep_and_its_verdict_notes() -> None:
    report = samples.passed()
    report.kind, report.run_id, report.reasons = "sweep", "msw-1", ["tied with the winner: big"]
    text = markdown.render_summary(report)
    assert "| **Sweep** | " in text and "| **Run** |" not in text
    assert "**Verdict notes**" in text and "**Gate reasons**" not in text


@pytest.mark.parametrize(("verdict", "label"), [("created", "Run created (not gated yet)"),
                                                ("replayed", "Shard replayed (not gated yet)")])
def test_sharding_steps_have_their_own_headline(verdict: str, label: str) -> None:
    report = samples.passed()
    report.verdict = verdict
    head = markdown.headline(report)
    assert label in head and "Passed" not in head
