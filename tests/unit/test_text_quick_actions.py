"""No untrusted line of a PR comment or MR note can run a GitLab quick action, whatever HTML,
fences or quotes precede it (read with GitLab's extraction rules: tests/fakes/
gitlab_quick_actions.py); GitLab's ``~label`` and ``$snippet`` references are broken."""

from __future__ import annotations

from neens_action.report.build.eval import build_eval_report
from neens_action.report.render.markdown import render_comment, render_summary
from neens_action.text import ZWSP, md_fence, md_text, no_quick_actions
from tests.fakes.gitlab_quick_actions import quick_actions
from tests.unit.report import cases

HOSTILE = "\n".join([
    "</x>", "</details>", "```", "````", "~~~", ">>>", "/approve", "/merge",
    "/label ~x", "/assign_reviewer @mallory", "  /unapprove", "<p>", "/close", ">>>",
    "</p>", "/rebase",
])


def _hostile_report():
    outcome = cases._agents("crashed")
    for inv in outcome.invocations:
        inv.output = HOSTILE
    return build_eval_report(outcome)


def test_the_port_of_gitlabs_extraction_finds_the_attack_on_a_naive_note() -> None:
    attack = "</x>\n/approve\n/merge\n/label ~x\n/assign_reviewer @mallory"
    naive = "\n".join(["<details>", "<summary>out</summary>", "", "````text", attack,
                       "````", "", "</details>"])
    found = {a.name for a in quick_actions(naive)}
    assert {"approve", "merge", "label", "assign_reviewer"} <= found


def test_no_command_in_a_note_or_comment_with_hostile_agent_output() -> None:
    report = _hostile_report()
    for body in (render_comment(report, marker="<!-- m -->"), render_summary(report)):
        assert "/approve" in body  # the output is shown...
        assert quick_actions(body) == []  # ...and runs nothing
        assert quick_actions(no_quick_actions(body)) == []


def test_every_untrusted_line_opening_with_punctuation_gets_a_zero_width_space() -> None:
    fence = md_fence(HOSTILE)
    body = fence[1:-1]
    assert all(line.startswith(ZWSP) for line in body if line.strip()[:1] in "/<>`~")
    assert md_fence("plain words\n  File x")[1:-1] == ["plain words", "  File x"]
    assert quick_actions("\n".join(fence)) == []


def test_a_slash_line_anywhere_in_a_note_is_broken() -> None:
    note = "<b>\n</b>\n/approve\n  /merge\nnot/a command"
    assert quick_actions(note) != []
    assert quick_actions(no_quick_actions(note)) == []
    assert no_quick_actions(note).endswith("not/a command")


def test_gitlab_label_and_snippet_references_are_broken() -> None:
    assert md_text("~bug ~\"needs review\" $42") == (
        f"\\~{ZWSP}bug \\~{ZWSP}&quot;needs review&quot; \\$\u206042")
    assert md_text("~ approx $x") == "\\~ approx \\$x"
