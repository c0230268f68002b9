"""The Markdown blocks of a report: header line, alerts, failing items with their evidence,
agent failures, tables, policy rules and charts. ``markdown.py`` arranges them per surface.

Every untrusted string goes through :mod:`neens_action.text`: inline text is escaped (no
HTML, links, mentions, bare-URL autolinks or bidi controls), multi-line agent output goes
into a fence nothing inside can close. Only links we build (the ``ui-url`` template, the CI
job) are links.
"""

from __future__ import annotations

import heapq
import re
from collections.abc import Callable

from neens_action.report.fmt import readable_reason
from neens_action.report.fmt import score as fmt_score
from neens_action.report.model import AgentFailure, Chart, ItemVerdict, PolicyLine, Report, Table
from neens_action.report.render.mermaid import chart_to_mermaid
from neens_action.text import (
    md_cell,
    md_code,
    md_fence,
    md_html,
    md_link,
    md_message,
    md_text,
)

STATE_LABEL = {
    "regressed": "🔻 regressed",
    "failing": "failing as before",
    "new": "failing (no baseline)",
    "fail": "failing",
    "agent_failed": "💥 agent failed",
    "unscored": "unscored",
}
KIND_LABEL = {"crashed": "crashed", "timed_out": "timed out", "no_trace": "no trace captured",
              "launch_failed": "did not start", "not_run": "not run"}


def hint(text: str) -> str:
    """A "How to fix" bullet: our sentence with its `code` spans kept as code (a command or
    an input name), everything else escaped like any text."""
    out = []
    for i, part in enumerate(re.split(r"`([^`\n]+)`", text)):
        if i % 2:
            out.append(md_code(part))
        elif part.strip():
            lead, trail = part[:len(part) - len(part.lstrip())], part[len(part.rstrip()):]
            out.append(lead + md_text(part, line_start=i == 0) + trail)
        else:
            out.append(part)
    return "".join(out)


def details(summary: str, body: list[str]) -> list[str]:
    """A collapsed block; ``summary`` is already escaped HTML text."""
    return ["<details>", f"<summary>{summary}</summary>", "", *body, "", "</details>"]


def column(title: str) -> str:
    """``PASS RATE`` -> ``Pass rate`` (console headers are upper case, Markdown's are not)."""
    return title.capitalize() if title.isupper() else title


def header_line(report: Report) -> list[str]:
    parts = [f"**{md_text(label.capitalize())}** {md_text(value)}"
             for label, value in report.header]
    base = report.links.get("baseline")
    if base:
        parts = [p + f" ({md_link('open', base)})" if p.startswith("**Baseline**") else p
                 for p in parts]
    return [" · ".join(parts)] if parts else []


def alerts(report: Report) -> list[str]:
    out: list[str] = []
    if report.error:
        out += ["> [!CAUTION]", f"> {md_message(report.error)}"]
        if report.hints:
            out += [">", "> **How to fix**"]
            out += [f"> - {hint(h)}" for h in report.hints]
        out.append("")
    notes = [*report.caveats, *report.warnings]
    for note in dict.fromkeys(notes):
        out += ["> [!WARNING]", f"> {md_text(note, line_start=True)}", ""]
    return out[:-1] if out else out


def reasons(report: Report) -> list[str]:
    if not report.reasons:
        return []
    title = "**Verdict notes**" if report.kind == "sweep" else "**Gate reasons**"
    return [title, "", *(f"- {md_text(readable_reason(r), line_start=True)}"
                         for r in report.reasons)]


def table(t: Table, *, collapse_over: int = 10) -> list[str]:
    if not t.columns:
        return []
    width = len(t.columns)
    body = ["| " + " | ".join(md_cell(column(c)) for c in t.columns) + " |",
            "|" + "|".join(":--" for _ in t.columns) + "|"]
    for row in t.rows:
        cells = [*row[:width], *([""] * (width - len(row)))]
        body.append("| " + " | ".join(md_cell(c, 240) for c in cells) + " |")
    if t.footer:
        body += ["", f"_{md_text(t.footer)}_"]
    title = md_text(t.title[:1].upper() + t.title[1:]) if t.title else ""
    if len(t.rows) > collapse_over:
        return details(f"{md_html(t.title or 'Table')} ({len(t.rows)} rows)", body)
    return ([f"#### {title}", ""] if title else []) + body


def _policy_rows(lines: list[PolicyLine]) -> list[str]:
    out = ["| Rule | Severity | Status | Observed | Threshold | Reason |",
           "|:--|:--|:--|:--|:--|:--|"]
    for p in lines:
        out.append("| " + " | ".join(md_cell(c, 240) for c in (
            p.label, p.severity, p.status, p.observed, p.threshold, p.reason)) + " |")
    return out


def policy(lines: list[PolicyLine], *, compact: bool = False) -> list[str]:
    """Failing and warning rules first, in the open; passing/skipped rows in ``<details>``."""
    if not lines:
        return []
    rank = {"fail": 0, "warn": 1, "skipped": 2, "pass": 3}
    ordered = sorted(lines, key=lambda p: rank.get(p.status, 2))
    loud = [p for p in ordered if p.status in ("fail", "warn")]
    quiet = [p for p in ordered if p.status not in ("fail", "warn")]
    out = ["#### Policy rules", ""]
    if loud:
        out += _policy_rows(loud)
    if quiet and not compact:
        out += ["", *details(f"{len(quiet)} other rule(s) passed or were skipped",
                             _policy_rows(quiet))]
    elif quiet:
        out += ["", f"_{len(quiet)} other rule(s) passed or were skipped._"]
    return out


def _judges(item: ItemVerdict) -> str:
    if not item.judges:
        return "—"
    return "<br>".join(f"{'✓' if j.passed else ('✗' if j.passed is False else '·')} "
                       f"{md_cell(j.name, 40)} {fmt_score(j.score)}" for j in item.judges)


def _score(item: ItemVerdict) -> str:
    now = fmt_score(item.score) if item.score is not None else "—"
    if item.baseline_score is not None:
        return f"{fmt_score(item.baseline_score)} → {now}"
    if item.baseline:
        return f"{md_text(item.baseline)} → {now}"
    return now


def _item_cell(item: ItemVerdict) -> str:
    return md_link(item.item_id, item.link) if item.link else md_cell(item.item_id, 60)


def items(report: Report, max_rows: int, *, chars: int, more_url: str = "",
          state: Callable[[ItemVerdict], str] | None = None) -> list[str]:
    """Failing items first (regressions, then agent failures, then the rest), one row each
    with the evidence: state (``state`` says it, else the item's status), baseline -> score,
    judges, expected, the agent's answer."""
    failed, count = report.failed_items, report.not_passing_count
    if not failed:
        return []
    order = {"regressed": 0, "agent_failed": 1, "new": 2, "fail": 2, "failing": 3,
             "unscored": 4}
    # the first max_rows of the stable sort, holding no more (a spilled run's failing items
    # are read from disk)
    shown = heapq.nsmallest(max_rows, failed, key=lambda i: order.get(i.status, 4))
    with_suite = any(i.suite for i in failed)
    cols = ["Item", *(["Suite"] if with_suite else []), "State", "Baseline → score", "Judges",
            "Input", "Expected", "Answer / reason"]
    out = [f"#### Failing items ({count} of {report.item_count})", "",
           "| " + " | ".join(cols) + " |", "|" + "|".join(":--" for _ in cols) + "|"]
    for item in shown:
        answer = item.answer if item.answer and item.status != "agent_failed" else ""
        evidence = md_cell(answer, chars) if answer else md_cell(item.reason, chars)
        if answer and item.reason:
            evidence += f"<br>_{md_cell(item.reason, chars)}_"
        cells = [_item_cell(item), *([md_cell(item.suite or "dataset", 60)] if with_suite
                                     else []),
                 state(item) if state else STATE_LABEL.get(item.status, md_cell(item.state)),
                 _score(item), _judges(item),
                 md_cell(item.input, chars), md_cell(item.expected, chars), evidence]
        out.append("| " + " | ".join(cells) + " |")
    hidden = count - min(len(failed), max_rows)
    if hidden > 0:
        where = md_link("the full job summary", more_url) if more_url else "the job summary"
        out += ["", f"_…and {hidden} more failing item(s): see {where}._"]
    return out


def _tail(f: AgentFailure) -> list[str]:
    what = f"{md_html(f.item_id)}: {md_html(KIND_LABEL.get(f.kind, f.kind))}"
    if f.kind != "no_trace":
        what += f" ({md_html(f.detail)})"
    return details(f"Agent output of {what}, last lines", md_fence(f.stderr_tail))


def agent_failures(report: Report, *, tails: int) -> list[str]:
    fails = report.agent_failures
    if not fails:
        return []
    total = f" of {report.agent_total}" if report.agent_total else ""
    out = [f"#### Agent failures ({len(fails)}{total})", ""]
    shown = [f for f in fails if f.stderr_tail.strip()][:tails]
    if not report.error:
        out += [f"- {hint(h)}" for h in report.hints]
    elif shown:  # a run error shows its hints in its own block, once; a tail opens with a gap
        out.pop()
    for f in shown:
        out += ["", *_tail(f)]
    return out


def chart_notes(c: Chart) -> str:
    dropped = [label for i, label in enumerate(c.labels)
               if all(i >= len(s) or s[i] is None for s in c.series.values())]
    notes = []
    if c.bar is not None:
        notes.append(f"The line is the bar ({c.bar:g}{' %' if c.unit == '%' else ''}).")
    if dropped:
        notes.append("Not drawn (no value, never shown as 0): " + ", ".join(dropped) + ".")
    return " ".join(notes)


def chart(c: Chart) -> list[str]:
    if not c.labels or not c.series:
        return []
    body = ["```mermaid", chart_to_mermaid(c).rstrip("\n"), "```"]
    notes = chart_notes(c)
    if notes:
        body += ["", f"_{md_text(notes)}_"]
    return details(f"Chart: {md_html(c.title)}", body)
