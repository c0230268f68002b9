"""Noise-aware reports (repeats and main's history) as golden files on every surface:
summary, comment, console, JUnit and the ``--json`` document; and what each surface must
say (the four outcomes, flaky apart from regressed, the history fact at K = 1, Surefire's
rerun elements, the format bump only with noise, the saved result re-rendered)."""

from __future__ import annotations

import json
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from neens_action.cli.report_doc import check
from neens_action.report import serial
from neens_action.report.build.eval import build_eval_report
from neens_action.report.links import attach
from neens_action.report.model import Report
from neens_action.report.render import json as json_render
from neens_action.report.render import junit, markdown
from neens_action.report.render.text import render as render_text
from tests.unit.report.cases import CASES, GITHUB_ENV, UI_URL
from tests.unit.report.golden_util import check_golden
from tests.unit.report.noise_cases import NOISE_CASES, noise_outcome, records
from tests.unit.report.test_golden_cases import JOB, MARK


def build(name: str) -> tuple[object, Report]:
    outcome = NOISE_CASES[name]()
    report = attach(build_eval_report(outcome), ui_url=UI_URL, environ=GITHUB_ENV,
                    baseline_run_id="ppr_100")
    return outcome, report


@pytest.mark.parametrize("name", sorted(NOISE_CASES))
def test_noise_goldens(name: str) -> None:
    outcome, report = build(name)
    check_golden(f"noise/{name}.summary.md", markdown.render_summary(report))
    check_golden(f"noise/{name}.comment.md",
                 markdown.render_comment(report, marker=MARK, details_url=JOB))
    check_golden(f"noise/{name}.console.txt", render_text(report) + "\n")
    check_golden(f"noise/{name}.junit.xml", junit.render(report))
    doc = json_render.eval_document(outcome, report)  # type: ignore[arg-type]
    check_golden(f"noise/{name}.json", json_render.dumps(doc) + "\n")


@pytest.mark.parametrize("name,outcome", [
    ("noise_no_change", "no change"), ("noise_regressed", "regressed"),
    ("noise_improved", "improved"), ("noise_inconclusive", "inconclusive"),
    ("noise_flaky_only", "no change"), ("noise_k1_history", "no change")])
def test_the_verdict_line_says_the_outcome_and_why(name: str, outcome: str) -> None:
    _, report = build(name)
    assert report.noise is not None and report.noise.outcome == outcome
    assert report.noise.line.startswith(f"{outcome}: ")
    assert " vs main " in report.noise.line
    summary = markdown.render_summary(report)
    shown = report.noise.line.partition(": ")[2].replace("_", "\\_").replace("<", "&lt;")
    assert shown in summary


def test_an_inconclusive_pass_never_reads_as_a_plain_pass() -> None:
    _, report = build("noise_inconclusive")
    for text in (markdown.render_summary(report),
                 markdown.render_comment(report, marker=MARK, details_url=JOB)):
        first = next(line for line in text.splitlines() if line.startswith("### "))
        assert "✅" not in first and "⚠️" in first
        assert "⚠️ **Inconclusive**" in text


def test_regressed_items_carry_their_evidence_and_flaky_ones_stay_apart() -> None:
    _, report = build("noise_regressed")
    assert report.noise is not None
    summary = markdown.render_summary(report)
    held = summary.split("#### Regressed items (3): now vs main")[1].split("\n\n")[1]
    assert "| it\\_48 | 0/3 | 5/5 |" in held
    flaky = summary.split("flaky item(s)")[1].split("</details>")[0]
    assert "it\\_48" not in flaky and all(f"it\\_{i}" not in held for i in (51, 52, 53))
    console = render_text(report)
    assert "✗ it_48  0/3 now vs 5/5 on main" in console


def test_flaky_only_failures_pass_and_no_failing_item_reads_regressed() -> None:
    _, report = build("noise_flaky_only")
    assert report.verdict == "passed" and report.noise is not None
    assert not report.noise.regressed
    failing = markdown.render_summary(report).split("#### Failing items")[1].split("<details>")[0]
    assert "regressed" not in failing and "flaky on main" in failing


def test_at_k1_with_history_every_failing_item_carries_its_history_fact() -> None:
    _, report = build("noise_k1_history")
    assert report.noise is not None
    failing = [i.item_id for i in report.failed_items]
    assert failing and set(failing) <= set(report.noise.facts)
    console = render_text(report)
    assert "failing on main: passed 0 of the last 5" in console
    assert "flaky on main: passed" in markdown.render_summary(report)


def test_the_trend_warns_when_main_slid_over_the_window() -> None:
    _, slid = build("noise_k1_history")
    _, flat = build("noise_no_change")
    assert slid.noise is not None and "slid 7.0 pp" in slid.noise.trend_warning
    assert flat.noise is not None and flat.noise.trend_warning == ""
    assert "> [!WARNING]\n> main's pass rate slid" in markdown.render_summary(slid)


def test_junit_uses_surefire_rerun_elements() -> None:
    _, report = build("noise_regressed")
    root = ET.fromstring(junit.render(report))
    cases = {c.get("name"): c for c in root.iter("testcase")}
    held = cases["it_48"]
    assert held.find("failure") is not None and len(held.findall("rerunFailure")) == 2
    _, flaky_report = build("noise_flaky_only")
    root = ET.fromstring(junit.render(flaky_report))
    cases = {c.get("name"): c for c in root.iter("testcase")}
    assert flaky_report.noise is not None
    failing = {i.item_id for i in flaky_report.failed_items}
    for item in flaky_report.noise.flaky:
        case = cases[item.item_id]
        assert case.find("failure") is None and case.find("error") is None
        expected = max(item.now_scored - item.now_passed, int(item.item_id in failing))
        assert len(case.findall("flakyFailure")) == expected
        for el in case.findall("flakyFailure"):
            assert el.find("stackTrace") is not None and "on main" in (el.get("message") or "")
    assert root.get("failures") == "0"


def test_the_json_format_is_bumped_only_with_noise() -> None:
    outcome, report = build("noise_no_change")
    doc = json_render.eval_document(outcome, report)  # type: ignore[arg-type]
    assert doc["format"] == 3 and doc["noise"]["outcome"] == "no change"
    assert doc["report"]["format"] == 2
    plain = CASES["pass"]()
    saved = serial.to_json(plain)
    assert saved["format"] == 1 and "noise" not in saved


@pytest.mark.parametrize("name", sorted(NOISE_CASES))
def test_a_saved_result_with_noise_re_renders_every_surface(name: str) -> None:
    outcome, report = build(name)
    text = json_render.dumps(json_render.eval_document(outcome, report))  # type: ignore[arg-type]
    saved = json.loads(text)["report"]
    check(saved, Report, "report")
    again = serial.from_json(saved)
    assert again.noise == report.noise
    assert markdown.render_summary(again) == markdown.render_summary(report)
    assert junit.render(again) == junit.render(report)
    assert render_text(again) == render_text(report)


def test_untrusted_item_ids_are_escaped_in_the_noise_blocks() -> None:
    recs = records(stable=50, flaky=6, k=3, n=5)
    hostile = "<img src=x>@bob [x](http://evil)\x1b[31m"
    recs = [type(r)(hostile if r.item_id == "it_53" else r.item_id, r.history, r.reps)
            for r in recs]
    report = build_eval_report(noise_outcome(recs, main_rates=[0.95] * 5))
    summary = markdown.render_summary(report)
    assert report.noise is not None and hostile in {i.item_id for i in report.noise.flaky}
    assert "<img" not in summary and "](http://evil)" not in summary and "\x1b" not in summary
    assert "&lt;img src=x&gt;" in summary  # shown, escaped, in the flaky block
    console = render_text(report)
    assert "\x1b" not in console and "<img src=x>" in console
    assert "\x1b" not in junit.render(report)


def test_neens_report_re_renders_a_saved_result_with_noise(tmp_path: Path) -> None:
    outcome, report = build("noise_flaky_only")
    path = tmp_path / "neens-result.json"
    doc = json_render.eval_document(outcome, report)  # type: ignore[arg-type]
    path.write_text(json_render.dumps(doc), encoding="utf-8")

    def neens(*args: str) -> str:
        out = subprocess.run([sys.executable, "-m", "neens_action", "report", str(path), *args],
                             capture_output=True, text=True, env={"PATH": "/usr/bin:/bin"},
                             timeout=60)
        assert out.returncode == 0, out.stderr
        return out.stdout

    assert neens() == markdown.render_summary(report)
    assert "<flakyFailure" in neens("--format", "junit")
    assert "flaky items, not regressions" in neens("--format", "text")


def test_the_regressions_output_counts_the_items_held_regressed() -> None:
    outcome, report = build("noise_regressed")
    assert report.outputs["regressions"] == "3"  # 5 failed in repetition 1, 3 are held
    doc = json_render.eval_document(outcome, report)  # type: ignore[arg-type]
    assert doc["summary"]["regressions"] == 3


def test_a_saved_result_with_a_malformed_noise_block_is_refused() -> None:
    _, report = build("noise_regressed")
    saved = json.loads(json.dumps(serial.to_json(report)))
    saved["noise"]["flaky"] = "it_1"
    with pytest.raises(ValueError, match=r"report\.noise\.flaky"):
        check(saved, Report, "report")


def test_adaptive_repeats_say_so() -> None:
    outcome = noise_outcome(records(stable=50, flaky=6, k=3, n=5), main_rates=[0.95] * 5,
                            adaptive=True)
    report = build_eval_report(outcome)
    assert report.noise is not None and report.noise.repeat == "auto"
    assert "_adaptive repeats · history: 5 of 5 run(s) on main_" in \
        markdown.render_summary(report)
    assert "repeats:     auto;" in render_text(report)


def test_a_new_item_that_fails_says_it_has_no_history() -> None:
    recs = [*records(stable=50, flaky=0, k=3, n=5),
            type(records(stable=1, flaky=0, k=1, n=1)[0])("it_new", (None,) * 5, (False,) * 3)]
    report = build_eval_report(noise_outcome(recs, main_rates=[0.95] * 5))
    assert report.noise is not None
    assert report.noise.facts["it_new"] == "new: no history on main"
