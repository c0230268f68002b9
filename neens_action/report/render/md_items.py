"""The comparison at a glance, in Markdown: one line per judge (its pass rate and mean score
beside the baseline's), the failing items grouped by how they failed, and the failing items
themselves in four columns that fit a 900 px comment column (item and state, judges as ✗/✓
marks, expected, answer with the judge's reason; the input folded under the item).

Untrusted text is escaped like every cell (:mod:`neens_action.text`); a URL in it is a code
span (never a link, and copied without any invisible character inside it), long URLs and
words are shortened or given break points so no cell is wider than the column.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator
from itertools import chain, islice

from neens_action.report.fmt import points, rate
from neens_action.report.fmt import score as fmt_score
from neens_action.report.model import FailureGroup, ItemVerdict, JudgeSummary, Report
from neens_action.report.render.cut import around, focus_of
from neens_action.text import ELLIPSIS, ZWSP, md_code, md_html, md_link, md_text

NBSP = "\u00a0"  # keeps a mark with its word when a narrow column wraps
STATE_LABEL = {
    "regressed": "🔻 regressed",
    "failing": "failing as before",
    "new": "failing (no baseline)",
    "fail": "failing",
    "agent_failed": "💥 agent failed",
    "unscored": "unscored",
}
ORDER = {"regressed": 0, "agent_failed": 1, "new": 2, "fail": 2, "failing": 3, "unscored": 4}
_URL = re.compile(r"(?i)\b(?:https?://|www\.)[^\s`<>]+")
URL_CHARS = 48  # a URL is shown as code, which never wraps: a longer one is shortened
WORD_CHARS = 28  # a longer word gets break points, so it wraps inside its cell
JUDGES_SHOWN = 3  # failing judges named in an item's cell
EXAMPLES = 3  # item links in a group's row


def _break(raw: str) -> str:
    """Break points (zero-width spaces) in raw words too long to wrap: after a ``_``, ``-``,
    ``/`` or ``.`` inside them, else every ``WORD_CHARS`` characters."""
    def split(m: re.Match[str]) -> str:
        parts = re.split(r"(?<=[_\-/.:=&?,;])", m.group(0))
        out = []
        for part in parts:
            out += [part[i:i + WORD_CHARS] for i in range(0, len(part), WORD_CHARS)]
        return ZWSP.join(p for p in out if p)
    return re.sub(r"\S{" + str(WORD_CHARS + 1) + ",}", split, raw)


def _words(raw: str) -> str:
    """Raw text escaped for a cell, with break points in its long words."""
    return md_text(_break(raw))


def cell(text: object, limit: int, focus: list[str] | None = None) -> str:
    """Untrusted text for a table cell: cut (:func:`around`), escaped, URLs as code."""
    flat = around(text, limit, focus)
    if not flat:
        return "—"
    out, start = [], 0
    for m in _URL.finditer(flat):
        url = m.group(0).rstrip(".,;:)?!'\"")
        url = url if len(url) <= URL_CHARS else url[:URL_CHARS - 1] + ELLIPSIS
        out += [_piece(flat[start:m.start()]), md_code(url, in_table=True)]
        start = m.start() + len(m.group(0).rstrip(".,;:)?!'\""))
    out.append(_piece(flat[start:]))
    return "".join(out).strip()


def _piece(part: str) -> str:
    if not part.strip():
        return part
    lead = " " if part[0] == " " else ""
    trail = " " if part[-1] == " " else ""
    return lead + _words(part) + trail


def _link(item_id: str, url: str) -> str:
    label = item_id if len(item_id) <= 40 else item_id[:39] + ELLIPSIS
    return md_link(_break(label), url) if url else _words(label)


# ---------------------------------------------------------------------------- judges


def _vs(j: JudgeSummary) -> str:
    if j.baseline_pass_rate is not None and j.pass_rate is not None:
        return f"{points(j.baseline_pass_rate, j.pass_rate)} (was {rate(j.baseline_pass_rate)})"
    if j.baseline_average is not None and j.average is not None:
        delta = round(j.average - j.baseline_average, 2)
        move = "±0" if delta == 0 else f"{'▲' if delta > 0 else '▼'} {abs(delta):.2f}"
        return f"{move} (was {fmt_score(j.baseline_average)})"
    return "—"


def judges(report: Report) -> list[str]:
    """One row per judge: passed, mean score, the change vs the baseline, improved and
    regressed items (only when some item did not pass or some judge moved; a column nothing
    fills is left out)."""
    lines = report.judges
    changes = [_vs(j) for j in lines]
    moved = any(c != "—" and not c.startswith("±0") for c in changes)
    if not lines or not (report.failed_items or moved):
        return []
    cols: list[tuple[str, str, Callable[[int, JudgeSummary], str]]] = [
        ("Judge", ":--", lambda _, j: _words(j.name)),
        ("Passed", "--:", lambda _, j: f"{j.passed} of {j.scored}"
         + (f" ({rate(j.pass_rate)})" if j.scored else "")),
        ("Mean score", "--:", lambda _, j: fmt_score(j.average))]
    if any(c != "—" for c in changes):
        cols.append(("vs baseline", ":--", lambda n, _: changes[n]))
    # with repeats or history the noise verdict says what regressed, not one comparison
    counted = report.noise is None
    if counted and any(j.improved is not None for j in lines):
        cols.append(("Improved", "--:", lambda _, j: "—" if j.improved is None
                     else str(j.improved)))
    if counted and any(j.regressed is not None for j in lines):
        cols.append(("Regressed", "--:", lambda _, j: "—" if j.regressed is None
                     else str(j.regressed)))
    out = ["#### Judges", "", "| " + " | ".join(c[0] for c in cols) + " |",
           "|" + "|".join(c[1] for c in cols) + "|"]
    out += ["| " + " | ".join(c[2](n, j) for c in cols) + " |" for n, j in enumerate(lines)]
    return out


# ---------------------------------------------------------------------------- groups


def _how(group: FailureGroup) -> str:
    if group.failing:
        return ", ".join(f"✗{NBSP}{_words(name)}" for name in group.failing)
    return cell(group.why, 80) if group.why else "—"


def folds(report: Report) -> bool:
    """Whether the groups say more than the items table would (some items failed the same
    way, and it is not just two items failing one way)."""
    if report.noise is not None:
        return False  # the noise verdict groups them (held regressed, flaky...)
    biggest = max((len(g.items) for g in report.groups), default=0)
    return biggest >= 3 or (biggest == 2 and len(report.groups) > 1)


def groups(report: Report, state: Callable[[str], str] | None = None) -> list[str]:
    """The failing items by how they failed, when some failed the same way."""
    found = report.groups
    if not folds(report):
        return []
    links = {i.item_id: i.link for i in report.items}
    out = ["#### Failing the same way", "",
           "| Items | State | Failed on | Examples |", "|--:|:--|:--|:--|"]
    for g in found:
        shown = ", ".join(_link(i, links.get(i, "")) for i in g.items[:EXAMPLES])
        if len(g.items) > EXAMPLES:
            shown += f" and {len(g.items) - EXAMPLES} more"
        label = state(g.status) if state else STATE_LABEL.get(g.status, md_text(g.status))
        out.append(f"| {len(g.items)} | {label} | {_how(g)} | {shown} |")
    return out


# ---------------------------------------------------------------------------- items


def _judge_marks(item: ItemVerdict) -> str:
    if not item.judges:
        return "—"
    failed = [j for j in item.judges if j.passed is False]
    lines = [f"✗{NBSP}{_words(j.name)}"
             + (f"{NBSP}{j.score:.2f}" if j.score is not None else "")
             for j in failed[:JUDGES_SHOWN]]
    if len(failed) > JUDGES_SHOWN:
        lines.append(f"✗ {len(failed) - JUDGES_SHOWN} more")
    ok = sum(1 for j in item.judges if j.passed is True)
    unknown = len(item.judges) - ok - len(failed)
    if ok:
        lines.append(f"✓{NBSP}{ok}{NBSP}passed" if failed else f"✓ all {ok} passed")
    if unknown:
        lines.append(f"· {unknown} no verdict")
    return "<br>".join(lines)


def _change(item: ItemVerdict) -> str:
    if item.score is None and item.baseline_score is None and not item.baseline:
        return ""
    now = fmt_score(item.score) if item.score is not None else "no score"
    if item.baseline_score is not None:
        return f"{fmt_score(item.baseline_score)}{NBSP}→{NBSP}{now}"
    if item.baseline:
        return f"was{NBSP}{md_text(item.baseline)}{NBSP}→{NBSP}{now}"
    return now


def _item(item: ItemVerdict, label: str, input_chars: int) -> str:
    label = label.replace("🔻 ", "🔻" + NBSP).replace("💥 ", "💥" + NBSP)
    bits = [b for b in (_link(item.item_id, item.link), label, _change(item)) if b]
    if item.suite:
        bits.append(f"_{cell(item.suite, 60)}_")
    if item.input:
        bits.append(f"<details><summary>input</summary>{cell(item.input, input_chars)}"
                    "</details>")
    return "<br>".join(bits)


def _answer(item: ItemVerdict, chars: int) -> str:
    answer = item.answer if item.answer and item.status != "agent_failed" else ""
    if not answer:
        return cell(item.reason, chars)
    text = cell(answer, chars, focus_of(item.reason, item.expected, answer))
    if item.reason:
        text += f"<br>_{cell(item.reason, chars // 2)}_"
    return text


def _by_state(failed: Iterable[ItemVerdict]) -> Iterator[ItemVerdict]:
    """Failing items, the worst state first, each state in replay order: one pass over the
    items per state, so a spilled run's items are read from disk, never held all at once."""
    for rank in sorted(set(ORDER.values()) | {4}):
        yield from (i for i in failed if ORDER.get(i.status, 4) == rank)


def ordered(report: Report, per_group: int = 0) -> Iterator[ItemVerdict]:
    """Failing items, one of each failure group first (the worst state first), then the rest
    in the same order; ``per_group``: at most that many of each group (0: all of them)."""
    failed = report.failed_items
    if not folds(report):
        yield from _by_state(failed)
        return
    first_ids = {g.items[0] for g in report.groups if g.items}
    found = {i.item_id: i for i in failed if i.item_id in first_ids}
    firsts = [found[g.items[0]] for g in report.groups if g.items and g.items[0] in found]
    seen = {i.item_id for i in firsts}
    group_of = {k: n for n, g in enumerate(report.groups) for k in g.items}
    taken: dict[int, int] = {}
    for item in chain(firsts, (i for i in _by_state(failed) if i.item_id not in seen)):
        n = group_of.get(item.item_id, -1)
        taken[n] = taken.get(n, 0) + 1
        if not per_group or n < 0 or taken[n] <= per_group:
            yield item


def items(report: Report, max_rows: int, *, chars: int, more_url: str = "",
          state: Callable[[ItemVerdict], str] | None = None, fold_over: int = 0,
          per_group: int = 0) -> list[str]:
    """Failing items, one row each: item (state, baseline -> score, folded input), judges,
    expected, the agent's answer with the judge's reason. ``fold_over``: more rows than this
    go into ``<details>`` (0: never); ``per_group``: at most that many rows of items that
    failed the same way (the groups table counts them all)."""
    shown, count = list(islice(ordered(report, per_group), max_rows)), report.not_passing_count
    if not shown:
        return []
    rows = []
    for item in shown:
        label = state(item) if state else STATE_LABEL.get(item.status, md_text(item.state))
        rows.append("| " + " | ".join((
            _item(item, label, chars), _judge_marks(item),
            cell(item.expected, max(chars // 2, 60)), _answer(item, chars))) + " |")
    body = ["| Item | Judges | Expected | Answer |", "|:--|:--|:--|:--|", *rows]
    title = f"Failing items ({count} of {report.item_count})"
    if fold_over and len(rows) > fold_over:
        out = ["<details>", f"<summary>{md_html(title)}</summary>", "", *body, "", "</details>"]
    else:
        out = [f"#### {title}", "", *body]
    hidden = count - len(shown)
    if hidden > 0:
        where = md_link("the full job summary", more_url) if more_url else "the job summary"
        out += ["", f"_…and {hidden} more failing item(s): see {where}._"]
    return out
