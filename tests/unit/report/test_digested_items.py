"""A console-only run folds its items into a digest: the report still counts every item."""

from __future__ import annotations

from neens_action.api.answers import Gate, Run
from neens_action.items import ItemDigest
from neens_action.outcome import Invocation, Outcome
from neens_action.report.build.eval import build_eval_report
from neens_action.report.render import markdown, text


def outcome(n: int, passing: int, *, digested: bool) -> Outcome:
    rows = [{"datasetVersionItemId": f"b_{i}", "input": f"prompt {i}", "passed": i < passing,
             "error": None if i < passing else "no trace captured"} for i in range(n)]
    run = {"id": "ppr_1", "status": "completed", "completed": n, "total": n}
    gate = {"passed": passing == n, "passRate": passing / n, "regressions": 0, "reasons": []}
    if not digested:
        run["items"] = rows
    out = Outcome(mode="run", run_id="ppr_1", base_url="http://neens.test", run=Run.decode(run),
                  gate=Gate.decode(gate))
    out.invocations = [Invocation(item_id="b_0", input="x", returncode=0),  # not all failed
                       Invocation(item_id=f"b_{n - 1}", input="x", returncode=3,
                                  error="rc=3")]
    if digested:
        out.item_digest = ItemDigest()
        for row in rows:
            out.item_digest.add(row)
    return out


def test_text_counts_every_item_of_a_digested_run():
    full = build_eval_report(outcome(500, 100, digested=False))
    digested = build_eval_report(outcome(500, 100, digested=True))
    assert len(digested.items) == 20 and digested.items_total == 500
    assert (digested.item_count, digested.not_passing_count) == (500, 400)
    assert (full.item_count, full.not_passing_count) == (500, 400)
    shown = text.render(digested)
    assert "items not passing (400 of 500):" in shown
    assert "… and 380 more (see --json)" in shown
    assert shown == text.render(full)  # the console cannot tell the two apart
    assert digested.exit_code == full.exit_code == 1


def test_markdown_counts_every_item_of_a_digested_run():
    digested = build_eval_report(outcome(300, 0, digested=True))
    body = markdown.render_summary(digested)
    assert "<summary>Failing items (300 of 300)</summary>" in body  # 20 rows: folded
    assert "_…and 280 more failing item(s)" in body


def test_a_digest_of_a_passing_run_lists_nothing():
    report = build_eval_report(outcome(50, 50, digested=True))
    assert report.items == [] and report.item_count == 50 and report.not_passing_count == 0
    assert "items not passing" not in text.render(report)
