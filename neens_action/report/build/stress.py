"""The stress-test report: the eval report plus what the scenario suite attacked and how it fared.

``build_stress_report(outcome)`` starts from ``report.build.build_eval_report(outcome)`` (a
launched suite is an ordinary pre-prod run) and adds:

* facts naming the suite and the failure modes that were attacked;
* a table of pass rates per source failure mode and one per strategy;
* each item annotated with its failure mode (``ItemVerdict.suite``) and ``strategy``;
* a warning per strategy the server skipped (e.g. no LLM connection).

Pure: reads only the outcome (``outcome.suite`` is the suite object, ``outcome.run`` the
terminal run). Unscored scenarios count as not passed, like the server's pass rate.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from neens_action.api.answers import Run
from neens_action.api.suites import Scenario, Suite
from neens_action.api.values import real
from neens_action.outcome import Outcome
from neens_action.report.model import ItemVerdict, Report, Table

STRATEGY_ORDER = ("replay", "paraphrase", "escalate", "boundary")


def _scenarios(suite: Suite | None) -> tuple[Scenario, ...]:
    return suite.scenarios if suite is not None else ()


def mode_label(scenario: Scenario) -> str:
    return scenario.mode_label


def attacked_modes(suite: Suite | None) -> list[str]:
    """Failure modes the suite attacked, in first-seen order (labels ``name (id)``)."""
    seen: list[str] = []
    for sc in _scenarios(suite):
        label = mode_label(sc)
        if label not in seen:
            seen.append(label)
    if not seen and suite is not None:
        for fid in suite.failure_mode_ids:
            if fid not in seen:
                seen.append(fid)
    return seen


def match_scenarios(
    items: Iterable[ItemVerdict], suite: Suite | None
) -> list[tuple[ItemVerdict, Scenario | None]]:
    """Pair each run item with its scenario: by id first, then by identical input text."""
    scenarios = _scenarios(suite)
    by_id = {s.id: s for s in scenarios if s.id is not None}
    unused = list(scenarios)
    pairs: list[tuple[ItemVerdict, Scenario | None]] = []
    for item in items:
        sc = by_id.get(item.item_id)
        if sc is None:
            sc = next((s for s in unused if s.input == item.input), None)
        if sc is not None and sc in unused:
            unused.remove(sc)
        pairs.append((item, sc))
    return pairs


def annotate(items: list[ItemVerdict], suite: Suite | None) -> None:
    """Stamp each item with its source failure mode and strategy (in place)."""
    for item, sc in match_scenarios(items, suite):
        if sc is not None:
            item.suite = mode_label(sc)
            item.strategy = sc.strategy


def _rate(passed: int, total: int) -> str:
    if total == 0:
        return "no data"
    return f"{passed / total:.0%} ({passed}/{total})"


def _tally(
    pairs: list[tuple[ItemVerdict, Scenario | None]], key: Any
) -> dict[str, list[int]]:
    """label -> [total, passed, failed, unscored], in first-seen order."""
    out: dict[str, list[int]] = {}
    for item, sc in pairs:
        label = key(item, sc)
        row = out.setdefault(label, [0, 0, 0, 0])
        row[0] += 1
        row[{"pass": 1, "fail": 2}.get(item.state, 3)] += 1
    return out


def _table(title: str, first: str, tally: dict[str, list[int]]) -> Table:
    rows = [
        [label, str(t), str(p), str(f), str(u), _rate(p, t)]
        for label, (t, p, f, u) in tally.items()
    ]
    return Table(title=title,
                 columns=[first, "Scenarios", "Passed", "Failed", "Unscored", "Pass rate"],
                 rows=rows)


def stress_tables(items: list[ItemVerdict], suite: Suite | None) -> list[Table]:
    """Pass rate per source failure mode and per strategy (unscored = not passed)."""
    pairs = match_scenarios(items, suite)
    by_mode = _tally(pairs, lambda i, s: mode_label(s) if s else (i.suite or "unmatched"))
    # modes the suite targeted but that produced no scored item still get a row
    for label in attacked_modes(suite):
        by_mode.setdefault(label, [0, 0, 0, 0])
    by_strategy = _tally(
        pairs, lambda i, s: (s.strategy if s else "") or i.strategy or "unknown"
    )
    ordered = {k: by_strategy[k] for k in STRATEGY_ORDER if k in by_strategy}
    ordered.update({k: v for k, v in by_strategy.items() if k not in ordered})
    return [
        _table("Pass rate per failure mode", "Failure mode", by_mode),
        _table("Pass rate per strategy", "Strategy", ordered),
    ]


def items_from_run(run: Run | None) -> list[ItemVerdict]:
    """Item verdicts straight from ``run.items`` (used when the eval report has none)."""
    out = []
    for row in (run.items if run is not None else None) or ():
        state = "pass" if row.passed is True else "fail" if row.passed is False else "unscored"
        out.append(ItemVerdict(item_id=row.item_id, input=row.input, state=state,
                               score=real(row.score), reason=row.error))
    return out


def suite_facts(suite: Suite | None) -> list[tuple[str, str]]:
    if suite is None or not suite.raw:
        return []
    facts = [("suite", f"{suite.name} ({suite.id or '?'})".strip())]
    modes = attacked_modes(suite)
    if modes:
        facts.append(("attacked", ", ".join(modes)))
    scenarios = _scenarios(suite)
    if scenarios:
        counts: dict[str, int] = {}
        for sc in scenarios:
            counts[sc.strategy or "unknown"] = counts.get(sc.strategy or "unknown", 0) + 1
        order = [k for k in STRATEGY_ORDER if k in counts] + sorted(
            k for k in counts if k not in STRATEGY_ORDER)
        facts.append(("scenarios", f"{len(scenarios)} ("
                      + ", ".join(f"{k} {counts[k]}" for k in order) + ")"))
    if suite.dataset_version_id:
        facts.append(("golden set", suite.dataset_version_id))
    return facts


def skipped_warnings(suite: Suite | None) -> list[str]:
    return [row.line() for row in suite.skipped] if suite is not None else []


def build_stress_report(outcome: Outcome) -> Report:
    from neens_action.report.build.eval import build_eval_report

    # a scenario suite is graded on its own: no baseline is expected, so none is a caveat
    report = build_eval_report(outcome, graded_alone=True)
    report.kind = "stress"
    suite = outcome.suite
    if suite is not None and suite.id:
        report.title = f"Stress test {suite.name or suite.id}"
        if report.run_id:
            report.title += f" (run {report.run_id})"
    if not report.items and outcome.run:
        report.items = items_from_run(outcome.run)
    report.items = list(report.items)  # annotated in place below (a spilled list is not)
    annotate(report.items, suite)
    facts = suite_facts(suite)
    if facts:
        report.facts = facts + [f for f in report.facts if f[0] not in dict(facts)]
    for warning in skipped_warnings(suite):
        if warning not in report.warnings:
            report.warnings.append(warning)
    if report.items and suite is not None and suite.raw:
        report.tables = stress_tables(report.items, suite) + report.tables
    if suite is not None and suite.id:
        report.outputs.setdefault("suite-id", suite.id)
    return report


def scenario_table(suite: Suite | None, *, limit: int = 60) -> Table:
    """``neens stress get``: one row per scenario (input and expectation excerpts)."""
    def cut(text: Any, n: int) -> str:
        s = " ".join(str(text or "").split())
        return s if len(s) <= n else s[: n - 1] + "…"

    rows = [[sc.strategy, mode_label(sc), cut(sc.input, limit), cut(sc.expected_output, limit)]
            for sc in _scenarios(suite)]
    return Table(title="Scenarios",
                 columns=["STRATEGY", "FAILURE MODE", "INPUT", "EXPECTED BEHAVIOUR"], rows=rows)


def _tally_json(table: Table) -> list[dict[str, Any]]:
    out = []
    for label, total, passed, failed, unscored, _ in table.rows:
        t, p = int(total), int(passed)
        out.append({"label": label, "scenarios": t, "passed": p, "failed": int(failed),
                    "unscored": int(unscored), "passRate": round(p / t, 4) if t else None})
    return out


def stress_document(outcome: Outcome, report: Report) -> dict[str, Any]:
    """The ``--json`` document: the eval document plus ``suite``, ``stress`` and ``items``."""
    from neens_action.report.render.json import eval_document

    doc = eval_document(outcome, report)
    suite = outcome.suite
    raw = suite.raw if suite is not None else {}  # the server's values, passed through
    doc["suite"] = {
        "id": raw.get("id"), "name": raw.get("name"), "status": raw.get("status"),
        "error": raw.get("error"), "datasetVersionId": raw.get("datasetVersionId"),
        "failureModes": attacked_modes(suite),
        "scenarioCount": len(_scenarios(suite)),
        "skippedStrategies": list(raw.get("skippedStrategies") or []),
    } if raw else None
    tables = {t.title: t for t in report.tables}
    doc["stress"] = {
        "byFailureMode": _tally_json(tables["Pass rate per failure mode"])
        if "Pass rate per failure mode" in tables else [],
        "byStrategy": _tally_json(tables["Pass rate per strategy"])
        if "Pass rate per strategy" in tables else [],
    }
    invs = {inv.item_id: inv for inv in outcome.invocations}
    doc["items"] = [{
        "itemId": it.item_id, "state": it.state, "score": it.score,
        "failureMode": it.suite or None, "strategy": it.strategy or None,
        "returncode": invs[it.item_id].returncode if it.item_id in invs else None,
        "error": invs[it.item_id].error if it.item_id in invs else None,
    } for it in report.items]
    return doc
