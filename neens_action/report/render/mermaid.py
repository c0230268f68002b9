"""A :class:`Chart` as a Mermaid ``xychart-beta`` bar chart (GitHub renders it in Markdown).

``chart_to_mermaid`` returns the diagram source only, without the code fence; the Markdown
renderer wraps it in a fence opened with ``mermaid``. Labels and titles are untrusted (arm labels
come from whoever created the sweep), so they are reduced to a safe character set: no quotes,
backticks, brackets or line breaks can leave the diagram or the fence.
"""

from __future__ import annotations

import math
import re
from decimal import Decimal

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
    """Plain decimal notation with four significant digits (tiny costs stay non-zero)."""
    if value is None or not isinstance(value, (int, float)) or not math.isfinite(value):
        return "0"
    if value == 0:
        return "0"
    text = format(Decimal(f"{float(value):.4g}"), "f")
    text = text.rstrip("0").rstrip(".") if "." in text else text
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

    A label without any value (no data / unpriced) is left out; ``bar`` is a line.
    """
    # a label with no value in any series (no data, unpriced) is left out, never drawn as 0
    keep = [i for i in range(len(chart.labels))
            if any(i < len(s) and s[i] is not None for s in chart.series.values())]
    names = [chart.labels[i] for i in keep]
    series = {k: [v[i] if i < len(v) else None for i in keep] for k, v in chart.series.items()}
    labels = ", ".join(f'"{mermaid_text(label)}"' for label in names)
    values = [v for s in series.values() for v in s] + (
        [chart.bar] if chart.bar is not None else [])
    horizontal = " horizontal" if any(len(str(n)) > 12 for n in names) else ""
    y_title = "%" if chart.unit == "%" else mermaid_text(chart.unit or "value", 20)
    lines = [
        "xychart-beta" + horizontal,
        f'    title "{mermaid_text(chart.title, 80)}"',
        f"    x-axis [{labels}]",
        f'    y-axis "{y_title}" 0 --> {_axis_max(values, chart.unit)}',
    ]
    for values_ in series.values():
        lines.append("    bar [" + ", ".join(_number(v) for v in values_) + "]")
    if chart.bar is not None and names:
        lines.append("    line [" + ", ".join(_number(chart.bar) for _ in names) + "]")
    return "\n".join(lines) + "\n"
