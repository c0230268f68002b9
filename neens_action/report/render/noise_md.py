"""The Markdown blocks of a noise-aware report (repeats and the default branch's history):
the verdict line, the items held regressed or improved with their evidence, flaky items in
their own ``<details>`` (never mixed with regressions), the noise-aware rules, main's trend
and each repetition's own server numbers. ``markdown.py`` arranges them per surface.

Item ids are untrusted: they go through :mod:`neens_action.text` like every other cell.
"""

from __future__ import annotations

from neens_action.report.model import ItemVerdict, NoiseItem, NoiseView, Report
from neens_action.report.render.md_parts import STATE_LABEL, details
from neens_action.text import md_cell, md_html, md_text

GATE_ICON = {"pass": "✅", "warn": "⚠️", "block": "❌"}
OUTCOME_LABEL = {"regressed": "Regressed", "improved": "Improved",
                 "no change": "No change", "inconclusive": "Inconclusive"}
FLAKY_LABEL = "〰️ flaky"


def pct(value: float | None) -> str:
    return "n/a" if value is None else f"{100 * value:.1f} %"


def _now(item: NoiseItem) -> str:
    return f"{item.now_passed}/{item.now_scored}"


def _main(item: NoiseItem) -> str:
    return f"{item.main_passed}/{item.main_runs}" if item.main_runs else "—"


def _history(view: NoiseView) -> str:
    found = f"{view.history_found} of {view.history_requested} run(s) on main"
    return found + (f" ({view.history_end})" if view.history_end else "")


def verdict(report: Report) -> list[str]:
    """``⚠️ **Noise verdict** inconclusive: …`` then what it was measured on."""
    view = report.noise
    if view is None:
        return []
    icon = GATE_ICON.get(view.gate, "❔")
    label, _, why = view.line.partition(": ")
    head = f"{icon} **{md_text(OUTCOME_LABEL.get(label, label))}**: {md_text(why or label)}"
    repeat = "adaptive repeats" if view.repeat == "auto" else f"K = {md_text(view.repeat)}"
    return [head, "", f"_{repeat} · history: {md_text(_history(view))}_"]


def _item_rows(items: list[NoiseItem], max_rows: int, *, fact: bool) -> list[str]:
    cols = ["Item", "Now", "Main", *(["History"] if fact else [])]
    out = ["| " + " | ".join(cols) + " |", "|" + "|".join(":--" for _ in cols) + "|"]
    for it in items[:max_rows]:
        cells = [md_cell(it.item_id, 60), _now(it), _main(it),
                 *([md_cell(it.fact)] if fact else [])]
        out.append("| " + " | ".join(cells) + " |")
    if len(items) > max_rows:
        out += ["", f"_…and {len(items) - max_rows} more._"]
    return out


def held(report: Report, max_rows: int) -> list[str]:
    """The items the method holds regressed (and improved), with k/K now vs n/N on main."""
    view = report.noise
    if view is None:
        return []
    out: list[str] = []
    for title, items in (("Regressed", view.regressed), ("Improved", view.improved)):
        if items:
            out += [f"#### {title} items ({len(items)}): now vs main", "",
                    *_item_rows(items, max_rows, fact=False), ""]
    return out[:-1] if out else out


def flaky(report: Report, max_rows: int) -> list[str]:
    """Flaky items, collapsed: noise, not regressions."""
    view = report.noise
    if view is None or not view.flaky:
        return []
    summary = (f"{len(view.flaky)} flaky item(s): mixed results on main or in this run, "
               "not counted as regressions")
    return details(md_html(summary), _item_rows(view.flaky, max_rows, fact=False))


def rules(report: Report) -> list[str]:
    view = report.noise
    if view is None or not view.rules:
        return []
    out = ["| Rule | Observed | Threshold | Outcome |", "|:--|:--|:--|:--|"]
    out += ["| " + " | ".join(md_cell(c) for c in (r.label, r.observed, r.threshold, r.status))
            + " |" for r in view.rules]
    return details(md_html(f"Noise-aware gate: {view.gate}"), out)


def trend(report: Report) -> list[str]:
    """Main's pass rate run by run, newest last."""
    view = report.noise
    rates = [p for p in (view.trend if view else []) if p.pass_rate is not None]
    if view is None or not view.trend:
        return []
    arrow = " → ".join(pct(p.pass_rate) for p in rates) if rates else "n/a"
    rows = ["| Run | Version | Pass rate |", "|:--|:--|:--|"]
    rows += [f"| {md_cell(p.run_id, 40)} | {md_cell(p.version_label, 40)} | "
             f"{pct(p.pass_rate)} |" for p in view.trend]
    mark = " ⚠️" if view.trend_warning else ""
    return details(md_html(f"Main's trend, oldest first: {arrow}") + mark, rows)


def reps(report: Report) -> list[str]:
    """Each repetition's own run, as the server scored and gated it."""
    view = report.noise
    if view is None or not view.reps:
        return []
    rows = ["| Rep | Run | Status | Pass rate | Server gate | Items replayed |",
            "|:--|:--|:--|:--|:--|:--|"]
    gate = {True: "passed", False: "failed", None: "—"}
    rows += [f"| {r.index} | {md_cell(r.run_id, 40)} | {md_cell(r.status, 40)} | "
             f"{pct(r.pass_rate)} | {gate[r.gate_passed]} | {r.items_replayed} |"
             for r in view.reps]
    return details(md_html(f"{len(view.reps)} repetition(s): the server's numbers"), rows)


def item_state(report: Report, item: ItemVerdict) -> str:
    """A failing item's state cell: with noise, only the items the method holds read
    *regressed*; a flaky one says so; each carries its history fact on main."""
    label = STATE_LABEL.get(item.status, md_cell(item.state))
    view = report.noise
    if view is None:
        return label
    if item.status == "regressed" and not any(i.item_id == item.item_id
                                              for i in view.regressed):
        flaky = any(i.item_id == item.item_id for i in view.flaky)
        label = FLAKY_LABEL if flaky else STATE_LABEL["fail"]
    fact = view.facts.get(item.item_id)
    return label + (f"<br>_{md_cell(fact)}_" if fact else "")
