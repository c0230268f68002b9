"""Markdown for humans on the CI platform: the job summary and the sticky PR/MR comment.

Both come from one :class:`~neens_action.report.model.Report`; every untrusted string goes
through :mod:`neens_action.text`. The summary must fit GitHub's 1 MiB step-summary
limit (bytes), the comment GitHub's 65,536-character body limit; both are cut on a line (and
never inside a character) with a visible note when they do not fit.
"""

from __future__ import annotations

from collections.abc import Callable

from neens_action import __version__
from neens_action.report.model import ItemVerdict, Report
from neens_action.report.render import md_items, noise_md
from neens_action.report.render import md_parts as parts
from neens_action.text import md_cell, md_link, md_text, truncate_bytes, truncate_chars

SUMMARY_LIMIT_BYTES = 1024 * 1024  # GitHub: $GITHUB_STEP_SUMMARY, per step
COMMENT_LIMIT_CHARS = 65_536  # GitHub: issue comment body
SUMMARY_ITEM_ROWS = 500  # failed items listed in the job summary
COMMENT_ITEM_ROWS = 10  # ... and in the PR/MR comment (a glance, not the log)
GROUPED_ITEM_ROWS = 5  # ... fewer when the groups already tell how the rest failed
GROUP_EXAMPLE_ROWS = 2  # ... and at most this many rows of items that failed the same way
SUMMARY_OPEN_ROWS = 10  # more failing items than this: the summary folds their table
SUMMARY_CHARS = 600  # an answer in the job summary (expected and reason: half of it)
COMMENT_CHARS = 280  # ... in the comment

VERDICT_LABEL = {
    "passed": ("✅", "Passed"),
    "warned": ("⚠️", "Passed with warnings"),
    "blocked": ("❌", "Blocked"),
    "errored": ("💥", "Errored"),
    # sharding steps measure nothing: they are never shown as a pass
    "created": ("🆕", "Run created (not gated yet)"),
    "replayed": ("🔁", "Shard replayed (not gated yet)"),
}

SUMMARY_TRUNCATED = (
    "\n\n> [!NOTE]\n> This summary was truncated to stay within the 1 MiB job-summary limit."
    " The full result is in the JSON result file.\n"
)
COMMENT_TRUNCATED = (
    "\n\n> [!NOTE]\n> This comment was truncated to stay within the 65,536-character comment"
    " limit. The job summary and the JSON result have the full details.\n"
)


def headline(report: Report) -> str:
    """``### ❌ Blocked: Pre-prod eval ppr_123`` (the verdict first, then the title).

    A pass with caveats (a rule that could not be evaluated, a ``no-gate`` waiver) shows ⚠️,
    never ✅.
    """
    icon, label = VERDICT_LABEL.get(report.verdict, ("❔", report.verdict.capitalize()))
    if report.verdict == "passed" and report.caveats:
        icon, label = "⚠️", "Passed, with caveats"
    title = md_text(report.title) if report.title else "Neens eval"
    return f"### {icon} {label}: {title}"


def _facts(report: Report) -> list[str]:
    """Reports without a header line (sweeps, stress suites, shard steps): a fact table."""
    rows: list[tuple[str, str]] = []
    if report.run_id:
        label = "Sweep" if report.kind == "sweep" else "Run"
        rows.append((label, md_link(report.run_id, report.run_url)))
    rows.extend(
        (md_cell(label[:1].upper() + label[1:]), md_cell(value))
        for label, value in report.facts
        if not (label.upper() == "WARNING" and value in report.warnings)  # shown as an alert
    )
    if not rows:
        return []
    lines = ["| Fact | Value |", "|:--|:--|"]
    lines.extend(f"| **{label}** | {value} |" for label, value in rows)
    return lines


def _top(report: Report) -> list[list[str]]:
    # the headline is our sentence: its `code` spans (a setting's name) stay code
    intro = [headline(report), "", f"**{parts.hint(report.headline)}**" if report.headline
             else ""]
    if report.header:
        run = (f"Run {md_link(report.run_id, report.run_url)} · " if report.run_id else "")
        line = parts.header_line(report)
        return [intro, [run + line[0]] if line else []]
    return [intro, _facts(report)]


def more_url(report: Report) -> str:
    return report.links.get("summary") or report.context.get("job_url", "")


def _state(report: Report) -> Callable[[ItemVerdict], str] | None:
    """With noise, a failing item's state says what the noise verdict made of it."""
    if report.noise is None:
        return None
    return lambda item: noise_md.item_state(report, item)


def _sections(report: Report, *, max_rows: int) -> list[list[str]]:
    sections = [
        *_top(report),
        noise_md.verdict(report),
        parts.alerts(report),
        parts.agent_failures(report, tails=3),
        noise_md.held(report, max_rows),
        md_items.judges(report),
        md_items.groups(report),
        md_items.items(report, max_rows, chars=SUMMARY_CHARS, state=_state(report),
                       fold_over=SUMMARY_OPEN_ROWS),
        noise_md.flaky(report, max_rows),
        parts.reasons(report),
        parts.policy(report.policy),
        noise_md.rules(report),
        *(parts.table(t) for t in report.tables),
        noise_md.trend(report),
        noise_md.reps(report),
        *(parts.chart(c) for c in report.charts),
    ]
    return [s for s in sections if any(line for line in s)]


def _comment_rows(report: Report) -> int:
    return GROUPED_ITEM_ROWS if md_items.folds(report) else COMMENT_ITEM_ROWS


def _comment_sections(report: Report, url: str) -> list[list[str]]:
    """The compact comment: verdict, header line, alerts, the top failing items, failing
    policy rules, and a link to the full summary for the rest."""
    sections = [
        *_top(report),
        noise_md.verdict(report),
        parts.alerts(report),
        parts.agent_failures(report, tails=1),
        noise_md.held(report, COMMENT_ITEM_ROWS),
        md_items.judges(report),
        md_items.groups(report),
        md_items.items(report, _comment_rows(report), chars=COMMENT_CHARS, more_url=url,
                       state=_state(report), per_group=GROUP_EXAMPLE_ROWS),
        noise_md.flaky(report, COMMENT_ITEM_ROWS),
        parts.policy(report.policy, compact=True),
        noise_md.trend(report),
        noise_md.reps(report),
        *(parts.table(t) for t in report.tables if report.kind != "eval"),
        *(parts.chart(c) for c in report.charts),
    ]
    return [s for s in sections if any(line for line in s)]


def _join(sections: list[list[str]]) -> str:
    return "\n\n".join("\n".join(s).strip("\n") for s in sections) + "\n"


def _footer(report: Report, details_url: str | None) -> list[str]:
    bits = [f"neens-action {__version__}", f"exit code {report.exit_code}"]
    if details_url:
        bits.append(md_link("full summary in the CI job", details_url))
    return [f"<sub>{' · '.join(bits)}</sub>"]


def render_summary(report: Report, *, limit: int = SUMMARY_LIMIT_BYTES) -> str:
    """The job summary (GitHub ``$GITHUB_STEP_SUMMARY``, GitLab/Jenkins Markdown artifact):
    complete; long tables, passing policy rows, agent output and charts in ``<details>``."""
    body = _join([*_sections(report, max_rows=SUMMARY_ITEM_ROWS), _footer(report, None)])
    return truncate_bytes(body, limit, SUMMARY_TRUNCATED)


def render_comment(
    report: Report,
    *,
    marker: str,
    details_url: str | None = None,
    limit: int = COMMENT_LIMIT_CHARS,
) -> str:
    """The sticky PR/MR comment: the hidden ``marker`` line first, then the compact view.

    ``marker`` is written verbatim (the caller builds it from safe characters only);
    ``details_url`` links to the CI job for everything the comment leaves out.
    """
    url = report.links.get("summary") or details_url or more_url(report)
    sections = [[marker], *_comment_sections(report, url), _footer(report, url or None)]
    return truncate_chars(_join(sections), limit, COMMENT_TRUNCATED)
