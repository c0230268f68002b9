"""The sticky PR/MR comment while a job is going, and when it could not finish.

The "running" comment (:func:`running_body`) is posted before the work starts and edited
into the verdict at the end, under the verdict's own marker (one comment, two writes). It
names the commit it is for and when it started, so a job that was killed before it could
report (a cancelled job, a runner timeout) leaves a comment a reader can see is old rather
than a verdict. :func:`unfinished_body` replaces it when the job ends without a verdict (a
crash in our code, a publishing step that failed), and :func:`unfinished_line` heads the
report of an interrupted run. Modes and what each says: docs/modes.md.

Everything untrusted (dataset names, connection ids, arm labels, error text) goes through
the escaping helpers of :mod:`neens_action.text`; the posting helpers also neutralise GitLab
quick actions.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any

from neens_action import __version__
from neens_action.errors import EXIT_INTERRUPTED
from neens_action.text import md_code, md_link, md_message

if TYPE_CHECKING:
    from neens_action.report.model import Report

NAME_CHARS = 80  # one name in the running line
SHARED_STEPS = ("create", "finish")  # the two jobs of a sharded run that own its comment
LISTED = 4  # names listed before "and N more"


@dataclass(frozen=True)
class Doing:
    """What a running job says it does: a title and a Markdown fragment of escaped parts."""

    title: str  # e.g. "Neens eval running"
    what: str  # e.g. "3 items against `ds_refunds`"


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"


def _names(names: Sequence[str]) -> str:
    shown = [md_code(n, NAME_CHARS) for n in names[:LISTED]]
    more = len(names) - LISTED
    return ", ".join(shown) + (f" and {more} more" if more > 0 else "")


def run_doing(items: int, dataset: str) -> Doing:
    """``mode: run`` (and the CLI's pull flow): the items are known, agents are next."""
    against = f" against {md_code(dataset, NAME_CHARS)}" if dataset else ""
    return Doing("Neens eval running", f"{_count(items, 'item')}{against}")


def push_doing(connection: str, dataset: str, gates: bool) -> Doing:
    """``mode: push``: Neens calls the connection for each item."""
    target = (f"each item of {md_code(dataset, NAME_CHARS)}" if dataset
              else "each eval gate item" if gates else "each item")
    return Doing("Neens push eval running",
                 f"Neens calls {md_code(connection, NAME_CHARS)} for {target}")


def stress_doing(failure_modes: Sequence[str], suite_id: str, *, push: bool) -> Doing:
    """``mode: stress``: a suite is generated (or reused), then replayed."""
    if suite_id:
        what = f"running the stress scenarios of suite {md_code(suite_id, NAME_CHARS)}"
    else:
        what = (f"generating and running stress scenarios for "
                f"{_count(len(failure_modes), 'failure mode')} ({_names(failure_modes)})")
    return Doing("Neens stress test running",
                 what + (" (Neens calls the agent)" if push else ""))


def sweep_doing(arms: Sequence[str], target: str, k: int | None) -> Doing:
    """``mode: sweep``: every arm replays the same target ``k`` times."""
    labels = [arm.split("=", 1)[0].strip() for arm in arms]
    reps = f", {k} repetition{'' if k == 1 else 's'} each" if k else ""
    over = f" over {md_code(target, NAME_CHARS)}" if target else ""
    return Doing("Neens sweep running",
                 f"sweeping {_count(len(labels), 'variant')} ({_names(labels)}){over}{reps}")


def create_doing(run_id: str, items: str) -> Doing:
    """``mode: create``: the run exists; the shard jobs replay it, the finish job gates it."""
    what = f"{items} items of run" if items.isdigit() else "run"
    return Doing("Neens eval running",
                 f"{what} {md_code(run_id, NAME_CHARS)}, replayed by the shard jobs, then "
                 "scored and gated by the finish job")


def finish_doing(run_id: str) -> Doing:
    """``mode: finish``: the shard jobs replayed the items; the run is scored and gated."""
    return Doing("Neens eval finishing",
                 f"scoring and gating run {md_code(run_id, NAME_CHARS)}, replayed by the "
                 "shard jobs")


def sticky_key(job: str, mode: str) -> tuple[str, str]:
    """(job, mode) in the sticky comment's marker: the create and finish jobs of a sharded run
    share one comment (so the job names are left out: they differ), each other mode has its
    own per job."""
    return ("", "sharded") if mode in SHARED_STEPS else (job, mode)


def _when(started: datetime, commit: str) -> str:
    text = f"started {started:%Y-%m-%d %H:%M} UTC"
    return text + (f" for commit {md_code(commit, 40)}" if commit else "")


def _job(job_url: str | None, label: str) -> str:
    return f" · {md_link(label, job_url)}" if job_url else ""


def running_body(marker: str, doing: Doing, *, started: datetime, commit: str = "",
                 job_url: str | None = None) -> str:
    """``⏳ **Neens eval running**: 3 items against `ds_refunds`…, started 2026-12-02 15:58 UTC
    for commit `abc1234` · [follow it in the CI job](…)``."""
    line = (f"⏳ **{doing.title}**: {doing.what}…, {_when(started, commit)}"
            f"{_job(job_url, 'follow it in the CI job')}")
    return (f"{marker}\n\n{line}\n\n<sub>neens-action {__version__} · the verdict replaces "
            "this comment when the job ends; if it still says running long after the start "
            "time, the job was stopped before it could report (cancelled, timed out or "
            "killed): see the CI job</sub>\n")


def progress_body(marker: str, *, items: int, dataset: str, started: datetime,
                  job_url: str | None, commit: str = "") -> str:
    """The running comment of ``mode: run``: :func:`running_body` of :func:`run_doing`."""
    return running_body(marker, run_doing(items, dataset), started=started, commit=commit,
                        job_url=job_url)


def unfinished_line(why: str, *, started: datetime | None, commit: str = "") -> str:
    """``⚠️ **The job did not finish**: <why>; no verdict for commit `abc1234` (started …)``."""
    reason = md_message(why) or "it stopped before it could report"
    for_what = f" for commit {md_code(commit, 40)}" if commit else ""
    since = f" (started {started:%Y-%m-%d %H:%M} UTC)" if started is not None else ""
    return f"⚠️ **The job did not finish**: {reason}; no verdict{for_what}{since}."


def unfinished_body(marker: str, why: str, *, started: datetime | None, commit: str = "",
                    job_url: str | None = None, exit_code: int | None = None) -> str:
    """The comment of a job that ended without a verdict: why (when known) and the job."""
    line = unfinished_line(why, started=started, commit=commit)
    bits = [f"neens-action {__version__}"]
    if exit_code is not None:
        bits.append(f"exit code {exit_code}")
    bits.append("the next run of this job replaces this comment")
    return (f"{marker}\n\n{line}{_job(job_url, 'see the CI job')}\n\n"
            f"<sub>{' · '.join(bits)}</sub>\n")


class StickyProgress:
    """The running / did-not-finish half of a publisher (``publish/publishers.py``): it needs
    ``config`` (``comment``, ``commit``) and :meth:`post_note`, which posts one body under
    the verdict's marker."""

    config: Any

    def post_note(self, body: Callable[[str, str | None], str], mode: str) -> bool:
        """Post ``body(marker, job_url)`` as the sticky comment with ``mode``; True when
        written (a platform without comments: never)."""
        return False

    # The running comment's state: when it was posted (None: not by this job), and whether
    # the verdict (or the did-not-finish note) has replaced it since.
    started: datetime | None = None
    concluded: bool = False

    def step_note(self, report: Report) -> bool:
        """``mode: create`` that created its run: the comment says the run is going (its
        shards replay it) rather than showing the step's own report; True when that is the
        case. A create that failed shows its error report like any other mode."""
        if self.config.mode != "create" or report.exit_code != 0 or not report.run_id:
            return False
        items = dict(report.facts).get("items", "")
        self.running(create_doing(report.run_id, items), datetime.now(timezone.utc))
        self.concluded = True  # the finish job's verdict replaces it
        return True

    def running(self, doing: Doing, started: datetime) -> None:
        """The "running" sticky comment, before the work starts (only with ``comment:
        update``: ``new`` would leave it beside the verdict)."""
        if self.config.comment != "update":
            return

        def body(mark: str, job_url: str | None) -> str:
            return running_body(mark, doing, started=started, commit=self.config.commit,
                                job_url=job_url)

        if self.post_note(body, "update"):
            self.started = started

    def in_progress(self, items: int, dataset: str, started: datetime) -> None:
        """``mode: run``'s running comment, once the items are known."""
        self.running(run_doing(items, dataset), started)

    def unfinished(self, why: str, exit_code: int | None = None) -> None:
        """The job ends without having written its verdict (a crash, an interrupt outside
        the flow, a publishing step that failed): the sticky comment says it did not finish,
        so it never keeps saying "running" nor shows an older commit's verdict."""
        if self.config.comment == "off" or self.concluded:
            return

        def body(mark: str, job_url: str | None) -> str:
            return unfinished_body(mark, why, started=self.started, commit=self.config.commit,
                                   job_url=job_url, exit_code=exit_code)

        if self.post_note(body, self.config.comment):
            self.concluded = True

    def headed(self, report: Report, body: str) -> str:
        """The verdict comment; an interrupted run's is headed by the did-not-finish line."""
        if report.exit_code != EXIT_INTERRUPTED:
            return body
        mark, _, rest = body.partition("\n")
        why = report.error or "interrupted (SIGINT/SIGTERM)"
        line = unfinished_line(why, started=self.started, commit=self.config.commit)
        return f"{mark}\n\n{line}\n{rest}"


__all__ = [
    "SHARED_STEPS",
    "Doing",
    "StickyProgress",
    "create_doing",
    "finish_doing",
    "progress_body",
    "push_doing",
    "run_doing",
    "running_body",
    "sticky_key",
    "stress_doing",
    "sweep_doing",
    "unfinished_body",
    "unfinished_line",
]
