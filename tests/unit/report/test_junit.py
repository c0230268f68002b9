from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

from neens_action.report.model import ItemVerdict, Report
from neens_action.report.render import junit
from tests.unit.report import samples
from tests.unit.report.golden_util import check_golden

# The JUnit dialect GitLab and the Jenkins JUnit plugin read (the "jenkins-junit.xsd" shape):
SUITE_REQUIRED = {"name", "tests"}
SUITE_ALLOWED = SUITE_REQUIRED | {
    "failures", "errors", "skipped", "time", "timestamp", "hostname", "id", "package",
    "disabled", "file", "assertions",
}
CASE_REQUIRED = {"name", "classname"}
CASE_ALLOWED = CASE_REQUIRED | {"time", "status", "assertions", "file", "line"}
CASE_CHILDREN = {"skipped", "error", "failure", "system-out", "system-err"}
ROOT_ALLOWED = {"name", "tests", "failures", "errors", "skipped", "time", "disabled"}


def _number(value: str | None, what: str) -> float:
    assert value is not None, f"{what} missing"
    number = float(value)
    assert number >= 0, what
    return number


def validate(text: str) -> ET.Element:
    """Parse ``text`` and check the structure the JUnit schema requires (no lxml here)."""
    assert text.startswith('<?xml version="1.0" encoding="UTF-8"?>\n')
    root = ET.fromstring(text.encode("utf-8"))
    assert root.tag == "testsuites"
    assert set(root.attrib) <= ROOT_ALLOWED, root.attrib
    totals = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
    for suite in root:
        assert suite.tag == "testsuite", suite.tag
        assert SUITE_REQUIRED <= set(suite.attrib) <= SUITE_ALLOWED, suite.attrib
        assert suite.get("name"), "suite name empty"
        counts = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
        for case in suite:
            assert case.tag == "testcase", case.tag
            assert CASE_REQUIRED <= set(case.attrib) <= CASE_ALLOWED, case.attrib
            assert case.get("name")
            _number(case.get("time"), "testcase time")
            counts["tests"] += 1
            kinds = [c.tag for c in case]
            assert set(kinds) <= CASE_CHILDREN, kinds
            outcome = [k for k in kinds if k in ("failure", "error", "skipped")]
            assert len(outcome) <= 1, kinds
            for tag, key in (("failure", "failures"), ("error", "errors"), ("skipped", "skipped")):
                if tag in outcome:
                    counts[key] += 1
                    el = case.find(tag)
                    assert el is not None and set(el.attrib) <= {"message", "type"}
        for key, value in counts.items():
            assert int(suite.get(key, "0")) == value, (suite.get("name"), key)
            totals[key] += value
        _number(suite.get("time"), "suite time")
    for key, value in totals.items():
        assert int(root.get(key, "0")) == value, key
    return root


def _cases(root: ET.Element) -> dict[str, ET.Element]:
    return {f"{s.get('name')}/{c.get('name')}": c for s in root for c in s}


def test_failed_report_golden_and_valid() -> None:
    text = junit.render(samples.failed())
    check_golden("junit_failed.xml", text)
    root = validate(text)
    cases = _cases(root)
    assert root.get("tests") == "6" and root.get("failures") == "2"
    assert root.get("errors") == "1" and root.get("skipped") == "1"
    fail = cases["Pre-prod eval ppr_124/it_2"].find("failure")
    assert fail is not None and fail.get("message", "").startswith("score 0.250: correctness")
    err = cases["Pre-prod eval ppr_124/it_3"].find("error")
    assert err is not None and err.get("message") == "no trace captured"
    assert err.get("type") == "unscored"
    assert cases["Pre-prod eval ppr_124/it_1"].find("failure") is None
    assert cases["policy/max_abs_failures"].find("failure") is not None
    assert cases["policy/latency"].find("failure") is None  # warn tier never fails
    assert cases["policy/cost"].find("skipped") is not None


def test_one_suite_per_eval_gate() -> None:
    root = validate(junit.render(samples.passed()))
    names = [s.get("name") for s in root]
    assert names == ["Pre-prod eval ppr_123", "FM: Wrong refund amount"]
    assert [s.get("tests") for s in root] == ["2", "1"]
    assert root.get("failures") == "0" and root.get("errors") == "0"


def test_run_error_is_an_error_case() -> None:
    text = junit.render(samples.errored())
    check_golden("junit_errored.xml", text)
    root = validate(text)
    case = _cases(root)["Pre-prod eval ppr_125/run"]
    err = case.find("error")
    assert err is not None and "poll timeout" in (err.get("message") or "")
    assert root.get("errors") == "1"


def test_no_items_is_never_green() -> None:
    report = Report(kind="eval", title="t", verdict="errored", exit_code=2, headline="h")
    root = validate(junit.render(report))
    assert root.get("errors") == "1"


def test_hostile_text_is_escaped_and_illegal_characters_dropped() -> None:
    nasty = 'a < b & "c" ]]> <x/> \x00\x01\x1b\ufffe end \U0001d518 \t tab\nline'
    report = Report(
        kind="eval", title="suite <&>", verdict="blocked", exit_code=1, headline="h",
        items=[ItemVerdict("id<&>\x07", nasty, "fail", 0.5, reason=nasty, suite="gate \"q\"")],
    )
    text = junit.render(report)
    root = validate(text)
    case = _cases(root)['gate "q"/id<&>']
    failure = case.find("failure")
    assert failure is not None
    assert "a < b & \"c\" ]]> <x/>" in (failure.text or "")
    assert "\x00" not in text and "\x1b" not in text and "\ufffe" not in text
    assert "\U0001d518" in (failure.text or "")


def test_write_is_atomic_and_readable(tmp_path: Path) -> None:
    target = tmp_path / "out" / "neens-junit.xml"
    junit.write(samples.failed(), target)
    validate(target.read_text(encoding="utf-8"))
    assert target.stat().st_mode & 0o044 == 0o044
    assert [p.name for p in target.parent.iterdir()] == ["neens-junit.xml"]
