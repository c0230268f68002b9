"""Markdown for humans on the CI platform: the job summary and the sticky PR/MR comment.

Both come from one :class:`~neens_action.report.model.Report`; every untrusted string goes
through :mod:`neens_action.text`. The summary must fit GitHub's 1 MiB step-summary
limit (bytes), the comment GitHub's 65,536-character body limit; both are cut on a line (and
never inside a character) with a visible note when they do not fit.
"""

from __future__ import annotations

from neens_action import __version__
from neens_action.report.model import Chart, ItemVerdict, PolicyLine, Report, Table
from neens_action.report.render.mermaid import chart_to_mermaid
from neens_action.text import (
    md_cell,
    md_link,
    md_text,
    truncate_bytes,
    truncate_chars,
)

SUMMARY_LIMIT_BYTES = 1024 * 1024  # GitHub: $GITHUB_STEP_SUMMARY, per step
COMMENT_LIMIT_CHARS = 65_536  # GitHub: issue comment body
SUMMARY_ITEM_ROWS = 500  # failed items listed in the job summary
COMMENT_ITEM_ROWS = 25  # ... and in the PR/MR comment (a glance, not the log)
INPUT_CHARS = 120
REASON_CHARS = 240

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
    """``### ❌ Blocked: Pre-prod eval ppr_123`` (the verdict first, then the title)."""
    icon, label = VERDICT_LABEL.get(report.verdict, ("❔", report.verdict.capitalize()))
    title = md_text(report.title) if report.title else "Neens eval"
    return f"### {icon} {label}: {title}"


def _facts(report: Report) -> list[str]:
    rows: list[tuple[str, str]] = []
    if report.run_id:
        label = "sweep" if report.kind == "sweep" else "run"
        rows.append((label, md_link(report.run_id, report.run_url)))
    rows.extend(
        (md_cell(label), md_cell(value))
        for label, value in report.facts
        if not (label.upper() == "WARNING" and value in report.warnings)  # shown as an alert
    )
    if not rows:
        return []
    lines = ["| | |", "|:--|:--|"]
    lines.extend(f"| **{label}** | {value} |" for label, value in rows)
    return lines


def _reasons(report: Report) -> list[str]:
    if not report.reasons:
        return []
    title = "**Verdict notes**" if report.kind == "sweep" else "**Gate reasons**"
    return [title, "", *(f"- {md_text(r, line_start=True)}" for r in report.reasons)]


def _alerts(report: Report) -> list[str]:
    out: list[str] = []
    if report.error:
        out += ["> [!CAUTION]", f"> **Run error:** {md_text(report.error)}", ""]
    for warning in report.warnings:
        out += ["> [!WARNING]", f"> {md_text(warning, line_start=True)}", ""]
    return out[:-1] if out else out


def _table(table: Table) -> list[str]:
    if not table.columns:
        return []
    out = [f"#### {md_text(table.title)}", ""] if table.title else []
    out.append("| " + " | ".join(md_cell(c) for c in table.columns) + " |")
    out.append("|" + "|".join(":--" for _ in table.columns) + "|")
    width = len(table.columns)
    for row in table.rows:
        cells = [*row[:width], *([""] * (width - len(row)))]
        out.append("| " + " | ".join(md_cell(c, REASON_CHARS) for c in cells) + " |")
    if table.footer:
        out += ["", f"_{md_text(table.footer)}_"]
    return out


def _policy(lines: list[PolicyLine]) -> list[str]:
    if not lines:
        return []
    return _table(
        Table(
            title="Policy rules",
            columns=["Rule", "Severity", "Status", "Observed", "Threshold", "Reason"],
            rows=[
                [p.label, p.severity.upper(), p.status.upper(), p.observed, p.threshold, p.reason]
                for p in lines
            ],
        )
    )


def _score(item: ItemVerdict) -> str:
    return "—" if item.score is None else f"{item.score:.2f}"


def _items(report: Report, max_rows: int) -> list[str]:
    failed, count = report.failed_items, report.not_passing_count
    if not failed:
        return []
    total = report.item_count
    with_suite = any(i.suite for i in failed)
    with_strategy = any(i.strategy for i in failed)
    cols = ["Item", *(["Suite"] if with_suite else []), *(["Strategy"] if with_strategy else [])]
    cols += ["State", "Score", "Input", "Reason"]
    out = [f"#### Failed items ({count} of {total})", ""]
    out.append("| " + " | ".join(cols) + " |")
    out.append("|" + "|".join(":--" for _ in cols) + "|")
    for item in failed[:max_rows]:
        cells = [md_cell(item.item_id, 60)]
        if with_suite:
            cells.append(md_cell(item.suite or "dataset", 60))
        if with_strategy:
            cells.append(md_cell(item.strategy, 30))
        cells += [
            md_cell(item.state),
            _score(item),
            md_cell(item.input, INPUT_CHARS),
            md_cell(item.reason, REASON_CHARS),
        ]
        out.append("| " + " | ".join(cells) + " |")
    hidden = count - min(len(failed), max_rows)
    if hidden > 0:
        out += ["", f"_…and {hidden} more failed item(s): see the JSON result or JUnit report._"]
    return out


def _chart(chart: Chart) -> list[str]:
    if not chart.labels or not chart.series:
        return []
    out = [f"#### {md_text(chart.title)}", "", "```mermaid", chart_to_mermaid(chart).rstrip("\n")]
    out.append("```")
    series = ", ".join(md_text(name) for name in chart.series)
    missing = any(v is None for values in chart.series.values() for v in values)
    note = f"Series: {series}." + (" Missing values are drawn as 0." if missing else "")
    return [*out, "", f"_{note}_"]


def _sections(report: Report, *, max_rows: int) -> list[list[str]]:
    sections = [
        [headline(report), "", f"**{md_text(report.headline)}**" if report.headline else ""],
        _facts(report),
        _reasons(report),
        _alerts(report),
        *(_table(t) for t in report.tables),
        _policy(report.policy),
        _items(report, max_rows),
        *(_chart(c) for c in report.charts),
    ]
    return [s for s in sections if any(line for line in s)]


def _join(sections: list[list[str]]) -> str:
    return "\n\n".join("\n".join(s).strip("\n") for s in sections) + "\n"


def _footer(report: Report, details_url: str | None) -> list[str]:
    bits = [f"neens-action {__version__}", f"exit code {report.exit_code}"]
    if details_url:
        bits.append(md_link("CI job", details_url))
    return [f"<sub>{' · '.join(bits)}</sub>"]


def render_summary(report: Report, *, limit: int = SUMMARY_LIMIT_BYTES) -> str:
    """The job summary (GitHub ``$GITHUB_STEP_SUMMARY``, GitLab/Jenkins Markdown artifact)."""
    body = _join([*_sections(report, max_rows=SUMMARY_ITEM_ROWS), _footer(report, None)])
    return truncate_bytes(body, limit, SUMMARY_TRUNCATED)


def render_comment(
    report: Report,
    *,
    marker: str,
    details_url: str | None = None,
    limit: int = COMMENT_LIMIT_CHARS,
) -> str:
    """The sticky PR/MR comment: the hidden ``marker`` line first, then a short summary.

    ``marker`` is written verbatim (the caller builds it from safe characters only);
    ``details_url`` links to the CI job for everything the comment leaves out.
    """
    sections = [[marker], *_sections(report, max_rows=COMMENT_ITEM_ROWS)]
    sections.append(_footer(report, details_url))
    return truncate_chars(_join(sections), limit, COMMENT_TRUNCATED)
