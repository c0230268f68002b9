"""The console lines of a noise-aware report: the verdict line, the items held regressed or
improved (k/K now vs n/N on main), flaky items apart, the noise-aware rules, main's trend
(oldest first) and each repetition's server numbers. Untrusted text is made single-line and
stripped of control characters (``plain.clean``)."""

from __future__ import annotations

from neens_action.report.model import NoiseItem, Report
from neens_action.report.render.noise_md import pct
from neens_action.report.render.plain import clean

SHOWN = 20  # items listed per group; the rest are counted


def _items(title: str, items: list[NoiseItem], mark: str) -> list[str]:
    if not items:
        return []
    lines = [f"  {title} ({len(items)}):"]
    for it in items[:SHOWN]:
        main = f"{it.main_passed}/{it.main_runs} on main" if it.main_runs else "new on main"
        lines.append(f"    {mark} {clean(it.item_id, 40)}  {it.now_passed}/{it.now_scored} now "
                     f"vs {main}")
    if len(items) > SHOWN:
        lines.append(f"    … and {len(items) - SHOWN} more (see --json)")
    return lines


def lines(report: Report) -> list[str]:
    view = report.noise
    if view is None:
        return []
    repeat = "auto" if view.repeat == "auto" else f"K = {clean(view.repeat)}"
    history = f"{view.history_found} of {view.history_requested} run(s) on main"
    if view.history_end:
        history += f" ({clean(view.history_end)})"
    out = [f"  noise:       {clean(view.line)}",
           f"  repeats:     {repeat}; history {history}"]
    out += _items("regressed items", view.regressed, "✗")
    out += _items("improved items", view.improved, "✓")
    out += _items("flaky items, not regressions", view.flaky, "~")
    if view.rules:
        out.append(f"  noise-aware gate: {clean(view.gate)}")
        out += [f"    {clean(r.label)}: {clean(r.observed)} vs {clean(r.threshold)} — "
                f"{clean(r.status)}" for r in view.rules]
    if view.trend:
        out.append("  main trend (oldest first): "
                   + " → ".join(pct(p.pass_rate) for p in view.trend))
    if view.trend_warning:
        out.append(f"  WARNING: {clean(view.trend_warning)}")
    if view.reps:
        out.append("  repetitions (the server's own numbers):")
    for r in view.reps:
        gate = {True: "gate passed", False: "gate failed", None: "no gate"}[r.gate_passed]
        out.append(f"    rep {r.index}: {clean(r.run_id, 40)} {clean(r.status, 30)} "
                   f"pass rate {pct(r.pass_rate)}, {gate}, {r.items_replayed} item(s)")
    return out


def state(report: Report, item_id: str, status: str, label: str) -> str:
    """A failing item's state: with noise, only the items the method holds read regressed
    (a flaky one says so), each with its history fact on main."""
    view = report.noise
    if view is None:
        return label
    if status == "regressed" and not any(i.item_id == item_id for i in view.regressed):
        label = "flaky" if any(i.item_id == item_id for i in view.flaky) else "failing"
    fact = view.facts.get(item_id)
    return label + (f" ({clean(fact)})" if fact else "")
