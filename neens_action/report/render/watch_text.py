"""Terminal output of ``neens eval watch`` (docs/cli.md).

Pure: every function returns the lines to print (the flow writes them to stderr through
``World.log``). Untrusted text (item inputs, ids, errors, file names) goes through
:func:`~neens_action.report.build.watch_diff.one_line`, so it can neither break a line nor carry
terminal escape sequences.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from neens_action.report.build.watch_diff import PASS, ItemChange, ItemDiff, ItemState, one_line

JsonDict = dict[str, Any]
MAX_ITEM_LINES = 25  # per group; the rest is counted


def banner(
    *,
    file_count: int,
    roots: Sequence[str],
    dataset: str,
    label: str,
    max_iterations: int | None,
    once: bool,
    capped: bool = False,
) -> list[str]:
    where = ", ".join(one_line(r, 80) for r in roots)
    lines = [
        f"neens eval watch: watching {file_count} file(s) under {where}",
        f"  dataset {one_line(dataset, 80)} · label {one_line(label, 80)}",
    ]
    if capped:
        lines.append(
            f"  WARNING: stopped scanning at {file_count} files; narrow the tree with --path, "
            "--include or --exclude"
        )
    elif file_count > 5_000:
        lines.append(
            f"  WARNING: {file_count} files are scanned every 0.5 s; narrow the tree with "
            "--path, --include or --exclude"
        )
    if max_iterations is not None and not once:
        lines.append(f"  at most {max_iterations} iteration(s)")
    lines.append(
        "  note: every iteration is a new pre-prod run, scored by your judges on your LLM "
        "connection (it costs judge tokens)"
    )
    if not once:
        lines.append("Press Ctrl-C to stop.")
    return lines


def iteration_header(number: int, label: str) -> str:
    return f"── iteration {number} · {label} " + "─" * max(0, 40 - len(label))


def changed_line(paths: Sequence[str]) -> str | None:
    if not paths:
        return None
    shown = ", ".join(one_line(p, 120) for p in paths[:3])
    more = f" (+{len(paths) - 3} more)" if len(paths) > 3 else ""
    return f"  changed: {shown}{more}"


def _signed(value: float, fmt: str) -> str:
    if "f" not in fmt:
        return format(int(value), fmt)
    text = format(value, fmt)
    if text.lstrip("+-").strip("0.") == "":  # never "-0.0"
        text = format(0.0, fmt)
    return text


def metrics_line(metrics: JsonDict | None, deltas: JsonDict | None) -> str:
    metrics = metrics or {}
    deltas = deltas or {}

    def part(name: str, key: str, value_fmt: str, delta_fmt: str, scale: float, unit: str) -> str:
        value = metrics.get(key)
        if value is None:
            return f"{name} n/a"
        if key in ("passRate", "avgScore"):
            text = f"{format(value * scale, value_fmt)}{'%' if key == 'passRate' else ''}"
        else:
            text = str(int(value))
        delta = deltas.get(key)
        if delta is not None:
            text += f" ({_signed(delta * scale, delta_fmt)}{unit})"
        return f"{name} {text}"

    parts = [
        part("pass rate", "passRate", ".1f", "+.1f", 100.0, " pts"),
        part("avg score", "avgScore", ".3f", "+.3f", 1.0, ""),
        part("passed", "passed", "d", "+d", 1, ""),
        part("failed", "failed", "d", "+d", 1, ""),
        part("errored", "errored", "d", "+d", 1, ""),
        part("regressions", "regressions", "d", "+d", 1, ""),
    ]
    return "  " + " · ".join(parts)


def gate_line(
    status: str, exit_code: int, previous: tuple[str, int] | None = None
) -> str:
    """``status`` is PASSED | FAILED | ERROR; ``previous`` (status, iteration) when it differs."""
    was = f" (was {previous[0]} at #{previous[1]})" if previous else ""
    return f"  gate: {status}{was} · exit {exit_code}"


def _item_line(mark: str, change: ItemChange) -> str:
    line = f'        {mark} {one_line(change.item_id, 80)}  {change.before} → {change.after}'
    line += f'  "{change.label}"'
    if change.error:
        line += f" — {one_line(change.error, 80)}"
    return line


def _capped(lines: list[str], total: int) -> list[str]:
    if total > MAX_ITEM_LINES:
        return [*lines[:MAX_ITEM_LINES], f"        … and {total - MAX_ITEM_LINES} more"]
    return lines


def first_scored_lines(states: dict[str, ItemState]) -> list[str]:
    failing = [s for s in states.values() if s.state != PASS]
    lines = [f"  {len(states)} item(s), {len(failing)} not passing — baseline for the next diff"]
    rows = []
    for s in failing:
        row = f'    ✗ {one_line(s.item_id, 80)}  {s.state}  "{one_line(s.input, 60)}"'
        if s.error:
            row += f" — {one_line(s.error, 80)}"
        rows.append(row)
    return lines + _capped(rows, len(rows))


def diff_lines(diff: ItemDiff, compared_to: int) -> list[str]:
    lines = [f"  vs iteration #{compared_to}:"]
    lines.append(f"    ▼ newly failing: {len(diff.newly_failing)}")
    lines += _capped([_item_line("▼", c) for c in diff.newly_failing], len(diff.newly_failing))
    lines.append(f"    ▲ newly passing: {len(diff.newly_passing)}")
    lines += _capped([_item_line("▲", c) for c in diff.newly_passing], len(diff.newly_passing))
    lines.append(f"    ✗ still failing: {len(diff.still_failing)}")
    lines.append(f"    = unchanged passing: {len(diff.unchanged_passing)}")
    if diff.only_in_current:
        lines.append(
            f"    + only in this run (not in the previous one): {len(diff.only_in_current)}"
        )
    if diff.only_in_previous:
        lines.append(
            f"    - missing from this run (present in the previous one): "
            f"{len(diff.only_in_previous)}"
        )
    return lines


def error_lines(number: int, error: str, *, continuing: bool) -> list[str]:
    lines = [f"  ✗ iteration {number} errored: {one_line(error, 300)}"]
    if continuing:
        lines.append("    (the watcher keeps going — save a file to retry)")
    return lines


@dataclass
class IterationView:
    """What the result block of one iteration shows."""

    number: int
    exit_code: int
    status: str  # PASSED | FAILED | ERROR
    error: str | None = None
    metrics: JsonDict | None = None
    deltas: JsonDict | None = None
    previous: tuple[str, int] | None = None  # previous iteration's status, when different
    states: dict[str, ItemState] | None = None  # None: errored, not diffed
    diff: ItemDiff | None = None  # None: first scored iteration
    compared_to: int | None = None
    continuing: bool = True


def result_lines(view: IterationView) -> list[str]:
    lines = [gate_line(view.status, view.exit_code, view.previous)]
    if view.metrics is not None:
        lines.append(metrics_line(view.metrics, view.deltas))
    if view.error is not None:
        return lines + error_lines(view.number, view.error, continuing=view.continuing)
    if view.diff is not None and view.compared_to is not None:
        lines += diff_lines(view.diff, view.compared_to)
    elif view.states is not None:
        lines += first_scored_lines(view.states)
    return lines
