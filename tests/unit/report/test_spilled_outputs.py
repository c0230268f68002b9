"""A run whose item rows and invocations were spilled to disk (``neens_action/spill.py``, the
``--json`` / ``--junit`` / CI result path) renders every surface byte for byte as the same run
held in memory: the ``--json`` document, the CI result file, JUnit, Markdown and the console.
"""

from __future__ import annotations

import dataclasses
import io
import json
import math
import random
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from neens_action.outcome import Invocation, Outcome
from neens_action.publish.publishers import result_pieces, result_text, write_file
from neens_action.report.build.eval import build_eval_report
from neens_action.report.links import attach
from neens_action.report.model import ItemVerdict, JudgeScore, Report
from neens_action.report.render import junit, markdown
from neens_action.report.render.json import Streamed, dumps, eval_document, jsonable, write
from neens_action.report.render.text import render as render_text
from neens_action.spill import Records, RunRows, Spill
from tests.unit.report import cases

MARK = "<!-- neens-eval-action workflow=CI job=eval mode=run leg=0 -->"
OUTCOMES: dict[str, Callable[[], Outcome]] = {
    "pass": cases.passed,
    "regressions": cases.regressions,
    "agent_crashed": lambda: cases._agents("crashed"),
    "agent_timed_out": lambda: cases._agents("timed_out"),
    "agent_no_trace": lambda: cases._agents("no_trace"),
    "not_compared": cases.not_compared,
    "no_gate_waiver": cases.no_gate,
    "push": cases.push,
    "eval_gates": cases.eval_gates,
    "policy_block": lambda: cases.policy("fail"),
    "hostile": cases.hostile,
    "many_failures": cases.many_failures,
    "error": lambda: dataclasses.replace(cases.regressions(),
                                         error="run ppr_1 ended with status 'failed'"),
}


def spilled(outcome: Outcome) -> Outcome:
    """``outcome`` as the pull flow leaves it with --json: rows and invocations on disk."""
    run = outcome.run
    assert run is not None and run.items is not None
    rows = RunRows()
    for row in run.raw.get("items") or []:
        rows.add(row)
    raw = {k: ([] if k == "items" else v) for k, v in run.raw.items()}
    outcome.run = dataclasses.replace(run, items=rows, raw=raw)
    invocations = Records(Invocation, len(outcome.invocations))
    for i, inv in reversed(list(enumerate(outcome.invocations))):  # any order, as agents end
        invocations.put(i, inv)
    outcome.invocations = invocations  # type: ignore[assignment]
    return outcome


def built(outcome: Outcome) -> Report:
    return attach(build_eval_report(outcome), ui_url=cases.UI_URL, environ=cases.GITHUB_ENV,
                  baseline_run_id="ppr_100")


@pytest.mark.parametrize("name", sorted(OUTCOMES))
def test_a_spilled_run_renders_every_surface_as_one_held_in_memory(name: str) -> None:
    held_outcome, spilled_outcome = OUTCOMES[name](), spilled(OUTCOMES[name]())
    held, spill = built(held_outcome), built(spilled_outcome)
    assert isinstance(spill.items, Spill) and not isinstance(held.items, Spill)
    assert isinstance(spill.agent_failures, Spill)
    assert len(spill.items) == len(held.items) > 0
    held_doc = eval_document(held_outcome, held)
    spill_doc = eval_document(spilled_outcome, spill)
    assert held_outcome.mode != "run" or isinstance(spill_doc["items"], Streamed)
    assert isinstance(spill_doc["report"]["items"], Streamed)
    assert isinstance(spill_doc["run"]["items"], Streamed)
    assert dumps(spill_doc) == dumps(held_doc)
    out = io.StringIO()
    write(spill_doc, out)
    assert out.getvalue() == dumps(held_doc) + "\n"
    assert "".join(result_pieces(spill_doc)) == result_text(held_doc)
    assert junit.render(spill) == junit.render(held)
    assert markdown.render_summary(spill) == markdown.render_summary(held)
    assert (markdown.render_comment(spill, marker=MARK, details_url="https://x/1")
            == markdown.render_comment(held, marker=MARK, details_url="https://x/1"))
    assert render_text(spill) == render_text(held)


def test_the_links_of_spilled_items_are_made_as_they_are_read() -> None:
    report = built(spilled(cases.regressions()))
    links = [item.link for item in report.items]
    assert links and all(link.startswith("https://app.example/runs/") for link in links)
    assert "item=it_1" in report.items[0].link


def test_the_streamed_junit_file_is_the_tree_as_elementtree_writes_it(tmp_path: Path) -> None:
    """The streamed writer against the tree ``junit.build`` makes (ElementTree's own indent)."""
    import xml.etree.ElementTree as ET

    for name, make in OUTCOMES.items():
        report = built(spilled(make()))
        root = junit.build(report)
        ET.indent(root, space="  ")
        whole = ('<?xml version="1.0" encoding="UTF-8"?>\n'
                 + ET.tostring(root, encoding="unicode") + "\n")
        target = junit.write(report, tmp_path / f"{name}.xml")
        assert target.read_text(encoding="utf-8") == whole, name


def test_a_streamed_list_inside_a_list_and_an_empty_one_indent_as_json_dumps() -> None:
    import json

    doc = {"a": [1, {"b": Streamed(lambda: iter([{"c": [1, 2]}, "x"]), 2)}],
           "e": Streamed(lambda: iter(()), 0), "f": {"g": Streamed(lambda: iter([1.5]), 1)}}
    plain = {"a": [1, {"b": [{"c": [1, 2]}, "x"]}], "e": [], "f": {"g": [1.5]}}
    assert dumps(doc) == json.dumps(plain, indent=2, ensure_ascii=False)


def test_a_spilled_file_result_is_written_piece_by_piece(tmp_path: Path) -> None:
    outcome = spilled(cases.regressions())
    report = built(outcome)
    doc = eval_document(outcome, report)
    path = write_file(tmp_path / "result.json", result_pieces(doc))
    assert path.read_text(encoding="utf-8") == result_text(
        eval_document(cases.regressions(), built(cases.regressions())))


def test_item_verdict_records_come_back_whole() -> None:
    held = built(cases.hostile())
    records = Records(ItemVerdict)
    records.extend(held.items)
    assert list(records) == list(held.items)
    assert [records[i] for i in range(len(records))] == list(held.items)


def _random_value(rng: random.Random, depth: int = 0) -> Any:
    kinds = ["str", "int", "float", "none", "bool"] + (["list", "dict", "tuple", "record"]
                                                       if depth < 4 else [])
    kind = rng.choice(kinds)
    if kind == "str":
        chars = 'ab"\\\n\t\x00é€😀\ud800<>&[]{}:,'
        return "".join(rng.choice(chars) for _ in range(rng.randint(0, 6)))
    if kind == "int":
        return rng.choice([0, -1, 7, 2**70])
    if kind == "float":
        return rng.choice([0.1, -2.5e-300, 1e300, 3.0, math.nan, math.inf, -math.inf])
    if kind == "none":
        return None
    if kind == "bool":
        return rng.random() < 0.5
    if kind == "record":
        return ItemVerdict(_random_value(rng, 4), "x", "fail", score=rng.choice([None, 0.5]),
                           judges=[JudgeScore("j", rng.choice([math.nan, 0.25]), True)])
    items = [_random_value(rng, depth + 1) for _ in range(rng.randint(0, 4))]
    if kind == "list":
        return items
    if kind == "tuple":
        return tuple(items)
    return {f"k{i}{_random_value(rng, 4) if rng.random() < 0.2 else ''}": v
            for i, v in enumerate(items)}


def _plain(value: Any) -> Any:
    if isinstance(value, ItemVerdict):
        return dataclasses.asdict(value)
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    return value


def test_streamed_elements_are_written_as_json_dumps_writes_them() -> None:
    """The streamed writer's own element formatting against ``json.dumps`` (indent 2) of the
    same values as the document holds them (``jsonable``, records as ``asdict``)."""
    rng = random.Random(7)
    values = [_random_value(rng) for _ in range(400)]
    doc = {"head": 1, "rows": Streamed(lambda: iter(values), len(values)), "tail": [2]}
    expected = json.dumps({"head": 1, "rows": jsonable(_plain(values)), "tail": [2]},
                          indent=2, ensure_ascii=False, allow_nan=False)
    assert dumps(doc) == expected
