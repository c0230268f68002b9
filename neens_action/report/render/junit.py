"""JUnit XML for the GitLab MR test widget, the Jenkins JUnit plugin and friends.

Layout (the common "Jenkins/GitLab" JUnit dialect):

- one ``<testsuite>`` for the dataset (items whose ``suite`` is empty), one per eval gate
  (``ItemVerdict.suite``), and one named ``policy`` for gate-as-code rules;
- one ``<testcase>`` per golden item: a pass is empty, a failing item carries ``<failure>``
  with its score and reason, an unscored item carries ``<error>``;
- a run error adds a ``run`` test case with ``<error>`` so measuring nothing never looks green;
- with repeats (``Report.noise``), Maven Surefire's rerun dialect: a flaky item is a passing
  test case with one ``<flakyFailure>`` per failed repetition, an item held regressed a
  ``<failure>`` followed by one ``<rerunFailure>`` per further failed repetition.

ElementTree does the escaping; characters XML 1.0 cannot carry at all are dropped first.
"""

from __future__ import annotations

import os
import tempfile
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from pathlib import Path

from neens_action.redact import redact
from neens_action.report.model import ItemVerdict, NoiseItem, NoiseView, PolicyLine, Report
from neens_action.text import excerpt, xml_text

MESSAGE_CHARS = 500  # attribute messages stay short; the full text goes in the element body


def _fmt_time(seconds: float | None) -> str:
    return f"{max(seconds or 0.0, 0.0):.3f}"


class _Suite:
    """One ``<testsuite>``: its counts, and its cases when ``keep`` (the streamed writer
    counts first and makes the cases again as it writes them)."""

    def __init__(self, name: str, keep: bool = True) -> None:
        self.name = name
        self.keep = keep
        self.cases: list[ET.Element] = []
        self.tests = 0
        self.failures = 0
        self.errors = 0
        self.skipped = 0
        self.time = 0.0
        self.last: ET.Element | None = None  # the case made last

    def case(self, name: str, classname: str, seconds: float | None) -> ET.Element:
        el = ET.Element(
            "testcase",
            {"name": xml_text(name), "classname": xml_text(classname), "time": _fmt_time(seconds)},
        )
        self.time += max(seconds or 0.0, 0.0)
        self.tests += 1
        self.last = el
        if self.keep:
            self.cases.append(el)
        return el

    def element(self, index: int) -> ET.Element:
        el = ET.Element(
            "testsuite",
            {
                "name": xml_text(self.name),
                "id": str(index),
                "tests": str(self.tests),
                "failures": str(self.failures),
                "errors": str(self.errors),
                "skipped": str(self.skipped),
                "time": _fmt_time(self.time),
            },
        )
        el.extend(self.cases)
        return el


def _child(parent: ET.Element, tag: str, message: str, kind: str, body: str) -> None:
    el = ET.SubElement(parent, tag, {"message": xml_text(excerpt(message, MESSAGE_CHARS))})
    el.set("type", kind)
    el.text = xml_text(body)


def _reruns(case: ET.Element, tag: str, item: NoiseItem, count: int, body: str) -> None:
    """``count`` Surefire rerun elements (``flakyFailure`` / ``rerunFailure``)."""
    message = (f"{item.now_scored - item.now_passed} of {item.now_scored} repetition(s) "
               f"failed; {item.main_passed}/{item.main_runs} passed on main ({item.fact})")
    for _ in range(count):
        el = ET.SubElement(case, tag, {"message": xml_text(excerpt(message, MESSAGE_CHARS)),
                                       "type": "fail"})
        ET.SubElement(el, "stackTrace").text = xml_text(body)


class _Noise:
    """The noise view by item id (looked up once per test case)."""

    def __init__(self, view: NoiseView) -> None:
        self.facts = view.facts
        self.flaky = {i.item_id: i for i in view.flaky}
        self.regressed = {i.item_id: i for i in view.regressed}


def _noise_case(suite: _Suite, case: ET.Element, item: ItemVerdict, body: str,
                noise: _Noise) -> bool:
    """The item as a flaky pass or a held regression; False when the noise verdict has
    nothing to say about it (then it is written as without repeats)."""
    flaky = noise.flaky.get(item.item_id)
    if flaky is not None:
        failed = max(flaky.now_scored - flaky.now_passed, 1 if item.state == "fail" else 0)
        _reruns(case, "flakyFailure", flaky, failed, body)
        ET.SubElement(case, "system-out").text = xml_text(body)
        return True
    held = noise.regressed.get(item.item_id)
    if held is None:
        return False
    suite.failures += 1
    _child(case, "failure", f"regressed: {held.now_passed}/{held.now_scored} now vs "
           f"{held.main_passed}/{held.main_runs} on main", "regressed", body)
    _reruns(case, "rerunFailure", held, max(held.now_scored - held.now_passed - 1, 0), body)
    return True


def _item_case(suite: _Suite, item: ItemVerdict, classname: str,
               noise: _Noise | None = None) -> None:
    case = suite.case(item.item_id or "(no id)", classname, item.duration_s)
    score = "n/a" if item.score is None else f"{item.score:.3f}"
    details = [f"input: {item.input}", f"score: {score}"]
    if item.strategy:
        details.append(f"strategy: {item.strategy}")
    if item.reason:
        details.append(f"reason: {item.reason}")
    fact = noise.facts.get(item.item_id) if noise is not None else None
    if fact:
        details.append(f"history: {fact}")
    body = "\n".join(details)
    if noise is not None and _noise_case(suite, case, item, body, noise):
        return
    if item.state == "pass":
        ET.SubElement(case, "system-out").text = xml_text(body)
    elif item.state == "fail" and item.status != "agent_failed":
        suite.failures += 1
        _child(case, "failure", f"score {score}: {item.reason or 'did not pass'}", "fail", body)
    else:  # unscored, or failed by its agent (an agent failure, never a regression)
        suite.errors += 1
        kind = "agent_failed" if item.status == "agent_failed" else item.state or "unscored"
        _child(case, "error", item.reason or "no score", kind, body)


def _policy_case(suite: _Suite, line: PolicyLine) -> None:
    case = suite.case(line.label, "policy", None)
    text = (
        f"[{line.severity.upper()}] {line.label}: observed {line.observed} vs {line.threshold}"
        f" ({line.status}) {line.reason}".rstrip()
    )
    if line.status == "fail" and line.severity == "block":
        suite.failures += 1
        _child(case, "failure", text, "policy", text)
    elif line.status == "skipped":
        suite.skipped += 1
        ET.SubElement(case, "skipped", {"message": xml_text(excerpt(text, MESSAGE_CHARS))})
    else:  # pass, or a warn-tier rule that fired: reported, never a failure
        ET.SubElement(case, "system-out").text = xml_text(text)


def _run_case(suite: _Suite, report: Report, dataset_name: str) -> None:
    """The ``run`` case of a run error (or of a run that scored nothing)."""
    case = suite.case("run", dataset_name, None)
    suite.errors += 1
    message = report.error or "no item was scored"
    _child(case, "error", message, "run_error", f"{report.headline}\n{message}".strip())


def _suites(report: Report, *, keep: bool) -> dict[str, _Suite]:
    """Every suite, in the order of its first case, with its counts (and its cases when
    ``keep``)."""
    dataset_name = report.title or "neens eval"
    suites: dict[str, _Suite] = {}

    def suite_for(name: str) -> _Suite:
        if name not in suites:
            suites[name] = _Suite(name, keep)
        return suites[name]

    if report.error or not report.items:
        _run_case(suite_for(dataset_name), report, dataset_name)
    noise = _Noise(report.noise) if report.noise is not None else None
    for item in report.items:
        name = item.suite or dataset_name
        _item_case(suite_for(name), item, name, noise)
    if report.policy:
        policy = suite_for("policy")
        for line in report.policy:
            _policy_case(policy, line)
    return suites


def _root(report: Report, suites: dict[str, _Suite]) -> ET.Element:
    root = ET.Element("testsuites", {"name": xml_text(report.title or "neens eval")})
    totals = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
    elapsed = 0.0
    for suite in suites.values():
        totals["tests"] += suite.tests
        totals["failures"] += suite.failures
        totals["errors"] += suite.errors
        totals["skipped"] += suite.skipped
        elapsed += suite.time
    for key, value in totals.items():
        root.set(key, str(value))
    root.set("time", _fmt_time(elapsed))
    return root


def build(report: Report) -> ET.Element:
    """The ``<testsuites>`` element for ``report`` (see the module docstring)."""
    suites = _suites(report, keep=True)
    root = _root(report, suites)
    for index, suite in enumerate(suites.values()):
        root.append(suite.element(index))
    return root


def _cases(report: Report, name: str) -> Iterator[ET.Element]:
    """The cases of suite ``name``, made again one at a time, in the order :func:`build`
    makes them."""
    dataset_name = report.title or "neens eval"
    suite = _Suite(name, keep=False)
    if name == dataset_name and (report.error or not report.items):
        _run_case(suite, report, dataset_name)
        yield suite.last  # type: ignore[misc]
    noise = _Noise(report.noise) if report.noise is not None else None
    for item in report.items:
        if (item.suite or dataset_name) == name:
            _item_case(suite, item, name, noise)
            yield suite.last  # type: ignore[misc]
    if name == "policy":
        for line in report.policy:
            _policy_case(suite, line)
            yield suite.last  # type: ignore[misc]


def _opening(el: ET.Element, inner: str) -> tuple[str, str]:
    """``el``'s start tag followed by ``inner``, and its end tag, as ElementTree writes them."""
    el.text = inner
    text = ET.tostring(el, encoding="unicode")
    end = f"</{el.tag}>"
    return text[:-len(end)], end


def pieces(report: Report) -> Iterator[str]:
    """The text of :func:`render`, one test case a piece: the items are read twice (counts,
    then cases), never held (a run's items may be spilled to disk)."""
    suites = _suites(report, keep=False)
    yield '<?xml version="1.0" encoding="UTF-8"?>\n'
    start, end = _opening(_root(report, suites), "\n  ")
    yield start
    for index, suite in enumerate(suites.values()):
        last_suite = index == len(suites) - 1
        head, tail = _opening(suite.element(index), "\n    ")
        yield head
        remaining = suite.tests
        for case in _cases(report, suite.name):
            remaining -= 1
            ET.indent(case, space="  ", level=2)
            case.tail = "\n    " if remaining else "\n  "
            yield ET.tostring(case, encoding="unicode")
        yield tail + ("\n" if last_suite else "\n  ")
    yield end + "\n"


def render(report: Report) -> str:
    """The JUnit document as text (UTF-8 XML declaration, indented)."""
    return "".join(pieces(report))


def write(report: Report, path: str | os.PathLike[str]) -> Path:
    """Write the JUnit file atomically (a half-written report never reaches the CI parser)."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".neens-junit-", suffix=".xml", dir=target.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            for piece in pieces(report):  # one case at a time: a piece ends between elements
                fh.write(redact(piece))  # secrets never reach a file we write
        os.chmod(tmp, 0o644)  # mkstemp makes 0600; later CI steps may run as another user
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return target
