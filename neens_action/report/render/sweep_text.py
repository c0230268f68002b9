"""Terminal rendering of a sweep :class:`Report` (docs/sweep.md, to the character).

The report's cells are already formatted by ``report/build/sweep.py``; this module only lays them
out. Untrusted text (arm labels, models, server sentences) is made single-line so a value
cannot forge extra log lines; nothing here interprets Markdown or workflow commands.
"""

from __future__ import annotations

from neens_action.report.build.sweep import (
    AGENTS_TABLE,
    ARMS_TABLE,
    ESTIMATE_TABLE,
    VERDICT_TABLE,
    VOID_PREFIX,
)
from neens_action.report.model import Report, Table


def _one_line(text: object) -> str:
    """Control characters and line breaks become spaces: one value, one line."""
    return "".join(ch if ch.isprintable() else " " for ch in str(text))


def align(columns: list[str], rows: list[list[str]], indent: str = "  ") -> list[str]:
    """Left-aligned columns two spaces apart; no trailing spaces."""
    cells = [[_one_line(c) for c in columns]] + [[_one_line(c) for c in row] for row in rows]
    widths = [max(len(r[i]) for r in cells if i < len(r)) for i in range(len(columns))]
    lines = []
    for row in cells:
        text = "  ".join(cell.ljust(widths[i]) for i, cell in enumerate(row))
        lines.append((indent + text).rstrip())
    return lines


def _table(report: Report, title: str) -> Table | None:
    return next((t for t in report.tables if t.title == title), None)


def _fact(report: Report, key: str, default: str = "") -> str:
    return next((value for k, value in report.facts if k == key), default)


def render_estimate(report: Report) -> list[str]:
    lines = [_one_line(report.headline)]
    table = _table(report, ESTIMATE_TABLE)
    for label, model, runs, calls, cost in table.rows if table else []:
        lines.append(_one_line(f"  {label}: {model} — {runs} runs, {calls} calls, {cost}"))
    lines.extend("  " + _one_line(line) for line in report.reasons)
    return lines


def render_state(report: Report) -> list[str]:
    lines = [_one_line(report.title)]
    table = _table(report, ARMS_TABLE)
    for label, model, status, pass_k, runs, error in table.rows if table else []:
        line = f"  {label}: {model} — {status} pass^k {pass_k} ({runs} runs terminal)"
        lines.append(_one_line(line + (f" error: {error}" if error else "")))
    lines.extend("  " + _one_line(line) for line in report.reasons)
    return lines


def render_verdict(report: Report) -> list[str]:
    lines = [_one_line(report.title), "  VERDICT: " + _one_line(report.headline)]
    lines.append(_one_line(
        f"  bar {_fact(report, 'bar', '—')} | baseline: {_fact(report, 'baseline', '—')} | "
        f"{_fact(report, 'items')}"
    ))
    table = _table(report, VERDICT_TABLE)
    if table is not None:
        lines.extend(align([c.upper() for c in table.columns], table.rows))
    lines.extend("  " + _one_line(line) for line in report.reasons)
    agents = _table(report, AGENTS_TABLE)
    if agents is not None and agents.rows:
        lines.append("  Per agent:")
        for agent, count, reason in agents.rows:
            lines.append(_one_line(f"    {agent} ({count} items): {reason}"))
    return lines


def render_sweep_text(report: Report) -> str:
    """The whole terminal block for a sweep report (no trailing newline)."""
    if report.headline.startswith(VOID_PREFIX):
        lines = [_one_line(report.title), "  " + _one_line(report.headline)]
        lines.extend("  " + _one_line(line) for line in report.reasons)
    elif _table(report, ESTIMATE_TABLE) is not None:
        lines = render_estimate(report)
    elif _table(report, VERDICT_TABLE) is not None:
        lines = render_verdict(report)
    elif _table(report, ARMS_TABLE) is not None:
        lines = render_state(report)
    else:  # nothing was read (an API error): the error line says it all
        lines = []
    for warning in report.warnings:
        text = _one_line(warning)
        lines.append(f"  WARNING {text}" if text.startswith("[") else f"  WARNING: {text}")
    if report.error == "interrupted":
        lines.append("neens: interrupted")
    elif report.error:
        lines.append(f"neens: error: {_one_line(report.error)}")
    return "\n".join(lines)
