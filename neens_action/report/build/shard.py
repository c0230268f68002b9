"""Reports, verdicts and ``--json`` documents of the sharding steps that gate nothing.

``--only-create`` (mode ``create``) and ``--shard I/N`` / ``--no-start`` (mode ``shard``) do
not measure anything, so they never claim a pass (``verdict.decide_step``): their build verdict
is ``created`` or ``replayed`` (exit 0), ``errored`` (exit 2) or, on SIGINT/SIGTERM, exit 130. No ci-result is
sent for them (the finish job reports the run's verdict). ``--finish`` is an ordinary eval
report (``report.build.build_eval_report``) whose JSON adds ``missingItems``.

JSON documents (stdout with ``--json``, and the CI result file), ``"format": 1``::

    create: {"format", "mode": "create", "runId", "exitCode", "verdict", "error",
             "interrupted", "run": <create response> | null, "versionLabel",
             "next": {"shard": "<command>", "finish": "<command>"} | null, "warnings"}
    shard:  {"format", "mode": "shard", "runId", "exitCode", "verdict", "error",
             "interrupted", "shard": {"index", "total", "items", "totalItems"},
             "versionLabel", "next": {"finish": "<command>"} | null, "warnings",
             "items": [{"itemId", "returncode", "durationS", "timedOut", "error"}]}
    finish: the eval document (``report.json.eval_document``) + "missingItems": [ids]
"""

from __future__ import annotations

from typing import Any

from neens_action.errors import EXIT_ERROR, EXIT_INTERRUPTED, EXIT_PASSED
from neens_action.api.answers import Run
from neens_action.outcome import Outcome, ShardInfo
from neens_action.report.model import Report, Table
from neens_action.verdict import decide_step

FORMAT = 1
FAILED_ROWS = 20


def _finish_cmd(outcome: Outcome) -> str:
    from neens_action.settings.shard import resume_command

    return resume_command(outcome.run_id)


def _base(outcome: Outcome, title: str, headline: str) -> Report:
    if outcome.build_verdict is None:
        outcome.exit_code, outcome.build_verdict = decide_step(outcome)
    report = Report(kind="eval", title=title, verdict=outcome.build_verdict,
                    exit_code=outcome.exit_code, headline=headline, run_id=outcome.run_id,
                    error=outcome.error, warnings=list(dict.fromkeys(outcome.warnings)))
    report.outputs = {"exit-code": str(outcome.exit_code), "verdict": outcome.build_verdict,
                      "run-id": outcome.run_id or "", "pass-rate": "", "regressions": ""}
    return report


def build_create_report(outcome: Outcome) -> Report:
    run = outcome.run or Run()
    ok = not outcome.error and not outcome.interrupted and outcome.run_id
    headline = (f"Created run {outcome.run_id}: it waits for its shards' traces."
                if ok else "No run was created." if not outcome.run_id
                else f"Run {outcome.run_id} was created but the step did not complete.")
    report = _base(outcome, f"Pre-prod eval {outcome.run_id or '(no run)'} (create)", headline)
    if ok:
        report.facts = [("status", run.status or "awaiting_traces"),
                        ("items", str(run.total) if run.total_said else "n/a"),
                        ("version", outcome.version_label or ""),
                        ("next", f"--run-id {outcome.run_id} --shard I/N, then "
                                 f"{_finish_cmd(outcome)}")]
    return report


def build_shard_report(outcome: Outcome) -> Report:
    info = outcome.shard or ShardInfo()
    index, total = info.index, info.total
    share = f"shard {index}/{total}" if total > 1 else "all items"
    invs = outcome.invocations
    ok = sum(1 for inv in invs if inv.ok)
    if outcome.interrupted:
        headline = f"Interrupted while replaying {share}."
    elif outcome.error:
        headline = f"Replaying {share} failed."
    else:
        headline = (f"Replayed {share}: {len(invs)} of {info.total_items} item(s), "
                    f"{ok} exited 0; the run is not started.")
    title = (f"Shard {index}/{total} of run {outcome.run_id}" if total > 1
             else f"Replay of run {outcome.run_id or '(no run)'} (not started)")
    report = _base(outcome, title, headline)
    if invs or not outcome.error:
        report.facts = [("shard", f"{index}/{total}"),
                        ("items", f"{info.items} of {info.total_items}"),
                        ("agents ok", f"{ok}/{len(invs)}")]
        if not outcome.error and not outcome.interrupted and outcome.run_id:
            report.facts.append(("next", _finish_cmd(outcome)))
    failed = [inv for inv in invs if not inv.ok]
    rerun = outcome.rerun
    if rerun:
        leg = f"shard {index}/{total}" if total > 1 else "the replay"
        report.facts.append(("re-run", f"{leg}: {rerun}"))
        report.hints = [f"Re-run {leg} once the agent is fixed: re-run this job (its matrix "
                        f"leg / parallel job), or locally `{rerun}`.",
                        f"Then finish the run once: `{_finish_cmd(outcome)}`."]
        if not outcome.interrupted:
            report.headline = report.headline.rstrip(".") + f"; re-run {leg}."
    if failed:
        rows = [[inv.item_id, inv.error or f"rc={inv.returncode}", f"{inv.duration_s:.1f}s"]
                for inv in failed[:FAILED_ROWS]]
        footer = (f"{len(failed) - FAILED_ROWS} more not shown" if len(failed) > FAILED_ROWS
                  else None)
        report.tables.append(Table(title="agent failures", columns=["ITEM", "ERROR", "TIME"],
                                   rows=rows, footer=footer))
    return report


def _doc(outcome: Outcome, report: Report) -> dict[str, Any]:
    return {"format": FORMAT, "mode": outcome.mode, "runId": outcome.run_id or "",
            "exitCode": report.exit_code, "verdict": report.verdict, "error": outcome.error,
            "interrupted": bool(outcome.interrupted),
            "versionLabel": outcome.version_label}


def create_document(outcome: Outcome, report: Report) -> dict[str, Any]:
    from neens_action.report.render.json import jsonable

    doc = _doc(outcome, report)
    doc["run"] = outcome.run.raw if outcome.run is not None else None  # as the server sent it
    done = report.exit_code == EXIT_PASSED and outcome.run_id
    doc["next"] = ({"shard": f"neens eval run --run-id {outcome.run_id} --shard I/N -- "
                             "<agent command>",
                    "finish": _finish_cmd(outcome)} if done else None)
    doc["warnings"] = list(report.warnings)
    return jsonable(doc)


def shard_document(outcome: Outcome, report: Report) -> dict[str, Any]:
    from neens_action.report.render.json import jsonable

    doc = _doc(outcome, report)
    info = outcome.shard or ShardInfo()
    doc["shard"] = {"index": info.index, "total": info.total, "items": info.items,
                    "totalItems": info.total_items}
    doc["next"] = ({"finish": _finish_cmd(outcome)}
                   if report.exit_code == EXIT_PASSED and outcome.run_id else None)
    doc["warnings"] = list(report.warnings)
    doc["items"] = [{"itemId": inv.item_id, "returncode": inv.returncode,
                     "durationS": round(inv.duration_s, 3), "timedOut": inv.timed_out,
                     "error": inv.error} for inv in outcome.invocations]
    return jsonable(doc)


def finish_document(outcome: Outcome, report: Report) -> dict[str, Any]:
    from neens_action.report.render.json import eval_document

    doc = eval_document(outcome, report)
    doc["missingItems"] = list(outcome.missing_items)
    return doc


__all__ = ["build_create_report", "build_shard_report", "create_document", "finish_document",
           "shard_document"]
