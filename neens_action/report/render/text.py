"""The terminal summary (stderr) of an eval report: summary, eval gates, failed items.

Untrusted text (prompts, reasons, gate names) is made single-line and stripped of control
characters, so it can neither break the layout nor smuggle terminal escape sequences.
"""

from __future__ import annotations

from neens_action.items import SHOWN_ITEMS
from neens_action.report.model import Report, Table
from neens_action.report.render import noise_text
from neens_action.report.render.plain import clean

RULE = "=" * 60
LABEL_WIDTH = 13
MAX_FAILED = SHOWN_ITEMS  # the digest of a console-only run keeps that many
__all__ = ["clean", "render", "render_table"]


def render_table(table: Table, indent: str = "    ") -> list[str]:
    """Left-aligned columns two spaces apart, widths = longest cell, trailing spaces trimmed."""
    rows = [[clean(c) for c in table.columns]] + [[clean(c) for c in r] for r in table.rows]
    widths = [max(len(r[i]) if i < len(r) else 0 for r in rows) for i in range(len(table.columns))]
    lines = []
    for r in rows:
        cells = [(r[i] if i < len(r) else "").ljust(widths[i]) for i in range(len(widths))]
        lines.append((indent + "  ".join(cells)).rstrip())
    return lines


def _fact(label: str, value: str) -> str:
    if label in ("WARNING",):
        return f"  WARNING: {clean(value)}"
    return f"  {(label + ':').ljust(LABEL_WIDTH)}{clean(value)}"


STATUS = {"regressed": "regressed", "failing": "failing as before",
          "new": "failing (no baseline)", "fail": "failing",
          "agent_failed": "agent failed", "unscored": "unscored"}
STDERR_TAIL = 10


def _items(report: Report) -> list[str]:
    failed, count = report.failed_items, report.not_passing_count
    if not failed:
        return []
    lines = [f"  items not passing ({count} of {report.item_count}):"]
    for it in failed[:MAX_FAILED]:
        score = f"  score {it.score:.2f}" if it.score is not None else ""
        state = STATUS.get(it.status, it.state)
        reason = f" — {clean(it.reason, 120)}" if it.reason else ""
        state = noise_text.state(report, it.item_id, it.status, state)
        lines.append(f"    ✗ {clean(it.item_id, 40)}  {state}{score}  "
                     f"\"{clean(it.input, 60)}\"{reason}")
        if it.expected and it.status != "agent_failed":
            lines.append(f"        expected: {clean(it.expected, 100)}")
        if it.answer and it.status != "agent_failed":
            lines.append(f"        answer:   {clean(it.answer, 100)}")
    shown = min(len(failed), MAX_FAILED)
    if count > shown:
        lines.append(f"    … and {count - shown} more (see --json)")
    return lines


def _agent_failures(report: Report) -> list[str]:
    """The stderr tail of the first failing agents, then how to fix it."""
    shown = [f for f in report.agent_failures if f.stderr_tail.strip()][:3]
    lines = []
    for f in shown:
        lines.append(f"  agent output of {clean(f.item_id, 40)} ({clean(f.detail, 60)}), "
                     "last lines:")
        tail = f.stderr_tail.splitlines()[-STDERR_TAIL:]
        lines += [f"    | {clean(line, 200)}" for line in tail]
    if report.agent_failures and report.hints:
        lines.append("  how to fix:")
        lines += [f"    - {clean(h)}" for h in report.hints]
    return lines


def verdict_words(report: Report) -> str:
    """``passed``, ``passed, with caveats`` (never a plain pass), ``blocked``..."""
    if report.verdict == "passed" and report.caveats:
        return "passed, with caveats"
    return report.verdict


def render(report: Report) -> str:
    """The summary block; just the error line when nothing was gated (no facts)."""
    lines: list[str] = []
    if report.facts:
        lines += ["", RULE, clean(report.title)]
        lines += [_fact(label, value) for label, value in report.facts]
        lines += [f"  CAVEAT: {clean(c)}" for c in report.caveats]
        lines += [f"    - {clean(r)}" for r in report.reasons]
        for table in report.tables:
            lines.append(f"  {clean(table.title)}:")
            lines += render_table(table)
            if table.footer:
                lines.append(_fact(table.title, table.footer))
        if report.policy:
            lines.append("  policy rules:")
            for p in report.policy:
                tier = "BLOCK" if p.severity == "block" else "WARN"
                lines.append(f"    [{tier}] {clean(p.label)} (obs={clean(p.observed)} vs "
                             f"{clean(p.threshold)}) — {clean(p.status)}"
                             + (f": {clean(p.reason, 160)}" if p.reason else ""))
            fails = sum(1 for p in report.policy if p.status == "fail")
            warns = sum(1 for p in report.policy if p.status == "warn")
            lines.append(_fact("policy", f"{fails} blocking failure(s), {warns} warning(s)"))
        lines += noise_text.lines(report)
        lines += _items(report)
        lines += _agent_failures(report)
        lines.append(_fact("verdict", f"{verdict_words(report)} (exit {report.exit_code})"))
        lines.append(RULE)
    if report.error:
        lines.append(f"neens: error: {clean(report.error)}")
    return "\n".join(lines)
