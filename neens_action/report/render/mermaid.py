"""A :class:`Chart` as a Mermaid ``xychart-beta`` bar chart (GitHub renders it in Markdown).

``chart_to_mermaid`` returns the diagram source only, without the code fence; the Markdown
renderer wraps it in a fence opened with ``mermaid``. Labels and titles are untrusted (arm labels
come from whoever created the sweep), so they are reduced to a safe character set: no quotes,
backticks, brackets or line breaks can leave the diagram or the fence.
"""

from __future__ import annotations

import math
import re

from neens_action.report.model import Chart

_UNSAFE = re.compile(r"[^\w .,:/+()@=$^-]")
MAX_LABEL = 40


def mermaid_text(text: object, limit: int = MAX_LABEL) -> str:
    """One label safe inside a double-quoted Mermaid string."""
    cleaned = _UNSAFE.sub("_", " ".join(str(text).split()))
    if len(cleaned) > limit:
        cleaned = cleaned[: limit - 3] + "..."
    return cleaned


def _number(value: float | None) -> str:
    if value is None or not isinstance(value, (int, float)) or not math.isfinite(value):
        return "0"
    text = f"{float(value):.6f}".rstrip("0").rstrip(".")
    return text if text not in ("", "-0") else "0"


def _axis_max(values: list[float | None], unit: str) -> str:
    finite = [float(v) for v in values if isinstance(v, (int, float)) and math.isfinite(v)]
    top = max(finite, default=0.0)
    if unit == "%":
        return "100"
    if top <= 0:
        return "1"
    return _number(top * 1.1)


def chart_to_mermaid(chart: Chart) -> str:
    """``xychart-beta`` source: title, x axis of labels, y axis with unit, one bar per series.

    A missing value (no data / unpriced) is drawn as 0; the chart builder marks its label.
    """
    labels = ", ".join(f'"{mermaid_text(label)}"' for label in chart.labels)
    values = [v for series in chart.series.values() for v in series]
    y_title = "%" if chart.unit == "%" else mermaid_text(chart.unit or "value", 20)
    lines = [
        "xychart-beta",
        f'    title "{mermaid_text(chart.title, 80)}"',
        f"    x-axis [{labels}]",
        f'    y-axis "{y_title}" 0 --> {_axis_max(values, chart.unit)}',
    ]
    for series in chart.series.values():
        padded = list(series) + [None] * (len(chart.labels) - len(series))
        lines.append("    bar [" + ", ".join(_number(v) for v in padded[: len(chart.labels)]) + "]")
    return "\n".join(lines) + "\n"
