"""``neens report`` on a crafted result file: every shape is one line on stderr and exit 2,
nothing on stdout, no traceback (the real CLI as a process, every format)."""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from neens_action.report.render.json import eval_document
from tests.unit.report import cases

FORMATS = ("markdown", "comment", "text", "junit")


def _valid() -> dict[str, Any]:
    outcome = cases.regressions()
    report = cases._eval(lambda: outcome)()
    return json.loads(json.dumps(eval_document(outcome, report)))


def _set(path: str, value: Any) -> Callable[[dict[str, Any]], Any]:
    def change(doc: dict[str, Any]) -> dict[str, Any]:
        node = doc
        keys = path.split(".")
        for key in keys[:-1]:
            node = node[int(key)] if isinstance(node, list) else node[key]
        last = keys[-1]
        if isinstance(node, list):
            node[int(last)] = value
        else:
            node[last] = value
        return doc
    return change


def _deep(depth: int) -> Any:
    value: Any = []
    for _ in range(depth):
        value = [value]
    return value


CORPUS: dict[str, Callable[[dict[str, Any]], Any]] = {
    "items not objects": _set("report.items", [1, "x", None]),
    "judges a string": _set("report.items.0.judges", "judge"),
    "judge not an object": _set("report.items.0.judges", [["a", 1]]),
    "tables rows an integer": _set("report.tables", [{"title": "t", "columns": ["a"],
                                                      "rows": 7}]),
    "table row a string": _set("report.tables", [{"title": "t", "columns": ["a"],
                                                  "rows": ["abc"]}]),
    "facts not pairs": _set("report.facts", [["only one"]]),
    "facts a dict": _set("report.facts", {"a": "b"}),
    "header of numbers": _set("report.header", [[1, 2]]),
    "exit code a string": _set("report.exit_code", "1"),
    "verdict missing": lambda d: d["report"].pop("verdict") and d,
    "title a list": _set("report.title", ["x"]),
    "report a list": _set("report", [1, 2]),
    "report a string": _set("report", "x"),
    "document a list": lambda d: [d],
    "document a number": lambda d: 42,
    "policy line a number": _set("report.policy", [3]),
    "chart series not numbers": _set("report.charts", [{"title": "c", "labels": ["a"],
                                                        "series": {"s": ["x"]}}]),
    "outputs nested": _set("report.outputs", {"a": {"b": "c"}}),
    "agent failure without id": _set("report.agent_failures", [{"kind": "crashed"}]),
    "score a string": _set("report.items.0.score", "high"),
    "links a list": _set("report.links", ["x"]),
    "deep nesting in a known field": _set("report.reasons", _deep(200)),
    "deep nesting anywhere": _set("extra", _deep(5000)),
    "warnings of objects": _set("report.warnings", [{"a": 1}]),
}


@pytest.mark.parametrize("name", list(CORPUS))
def test_crafted_result_is_one_line_and_exit_2(name: str, tmp_path: Path) -> None:
    doc = CORPUS[name](copy.deepcopy(_valid()))
    path = tmp_path / "crafted.json"
    try:
        path.write_text(json.dumps(doc), encoding="utf-8")
    except RecursionError:  # deeper than json.dumps goes: write it by hand
        path.write_text('{"report": {}, "extra": ' + "[" * 5000 + "]" * 5000 + "}")
    fmt = FORMATS[sorted(CORPUS).index(name) % len(FORMATS)]
    proc = subprocess.run([sys.executable, "-m", "neens_action", "report", str(path),
                           "--format", fmt], capture_output=True, text=True, timeout=60,
                          env={"PATH": "/usr/bin:/bin"})
    assert proc.returncode == 2, (proc.returncode, proc.stderr[-2000:])
    assert proc.stdout == ""
    assert proc.stderr.count("\n") == 1 and proc.stderr.startswith("neens: error: cannot read")
    assert "Traceback" not in proc.stderr


def test_the_untouched_document_still_renders_in_every_format(tmp_path: Path) -> None:
    path = tmp_path / "good.json"
    path.write_text(json.dumps(_valid()), encoding="utf-8")
    for fmt in FORMATS:
        proc = subprocess.run([sys.executable, "-m", "neens_action", "report", str(path),
                               "--format", fmt], capture_output=True, text=True, timeout=60,
                              env={"PATH": "/usr/bin:/bin"})
        assert proc.returncode == 0 and proc.stdout, proc.stderr
