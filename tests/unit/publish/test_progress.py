"""The "running" comment's words, and a progress hook that fails never stops a run."""

from __future__ import annotations

import io
from datetime import datetime, timezone
from types import SimpleNamespace

import pytest

from neens_action.errors import Interrupted
from neens_action.publish.progress import (
    StickyProgress,
    create_doing,
    finish_doing,
    progress_body,
    push_doing,
    run_doing,
    running_body,
    stress_doing,
    sweep_doing,
    unfinished_body,
)
from neens_action.world import World

STARTED = datetime(2026, 12, 2, 15, 58, tzinfo=timezone.utc)


def test_the_running_line_names_items_dataset_time_and_job() -> None:
    body = progress_body("<!-- m -->", items=3, dataset="ds_refunds", started=STARTED,
                         job_url="https://ci.example/job/1")
    assert body.splitlines()[0] == "<!-- m -->"
    assert ("⏳ **Neens eval running**: 3 items against `ds_refunds`…, started 2026-12-02 15:58 "
            "UTC · [follow it in the CI job](https://ci.example/job/1)") in body
    one = progress_body("<!-- m -->", items=1, dataset="", started=STARTED, job_url=None)
    assert "running**: 1 item…, started" in one and "](" not in one


def test_an_untrusted_dataset_name_stays_inert() -> None:
    body = progress_body("<!-- m -->", items=2, dataset="x` @team <b>", started=STARTED,
                         job_url=None)
    # one code span holds the whole name: no HTML, mention or Markdown inside it
    assert "against ``x` @team <b>``…" in body


def test_a_failing_hook_is_one_warning_and_the_run_goes_on() -> None:
    err = io.StringIO()

    def boom(items: int) -> None:
        raise RuntimeError("github down")

    world = World(environ={}, err=err, on_start=boom)
    world.starting(3)
    assert err.getvalue() == ("neens: warning: could not post the progress comment: "
                              "RuntimeError\n")
    World(environ={}, err=err).starting(3)  # nobody listening: nothing happens


def test_an_interrupt_while_the_note_is_posted_stops_the_run() -> None:
    # SIGTERM raises Interrupted wherever the main thread is, the comment's request included:
    # swallowed as "could not post", the run went on with its agents until they ended
    def slow_post(items: int) -> None:
        raise Interrupted()

    err = io.StringIO()
    with pytest.raises(Interrupted):
        World(environ={}, err=err, on_start=slow_post).starting(3)
    assert err.getvalue() == ""


def test_each_mode_says_what_it_does() -> None:
    push = running_body("<!-- m -->", push_doing("conn_a", "ds_x", False), started=STARTED,
                        commit="abc1234", job_url="https://ci.example/job/2")
    assert ("⏳ **Neens push eval running**: Neens calls `conn_a` for each item of `ds_x`…, "
            "started 2026-12-02 15:58 UTC for commit `abc1234` · "
            "[follow it in the CI job](https://ci.example/job/2)") in push
    assert "for each eval gate item" in push_doing("c", "", True).what
    stress = stress_doing(["fm_a", "fm_b", "fm_c", "fm_d", "fm_e"], "", push=False)
    assert stress.what == ("generating and running stress scenarios for 5 failure modes "
                           "(`fm_a`, `fm_b`, `fm_c`, `fm_d` and 1 more)")
    assert stress_doing([], "ss_1", push=True).what == (
        "running the stress scenarios of suite `ss_1` (Neens calls the agent)")
    sweep = sweep_doing(["big=gpt-4o", "small=gpt-4o-mini"], "ds_s", 3)
    assert sweep.what == "sweeping 2 variants (`big`, `small`) over `ds_s`, 3 repetitions each"
    assert finish_doing("ppr_1").title == "Neens eval finishing"
    assert create_doing("ppr_1", "9").what.startswith("9 items of run `ppr_1`, replayed")
    assert create_doing("ppr_1", "n/a").what.startswith("run `ppr_1`, replayed")


def test_untrusted_names_stay_inert_in_every_mode() -> None:
    hostile = "x` @team #12 <img src=x> [a](http://e.x)"
    for doing in (push_doing(hostile, hostile, False), stress_doing([hostile], "", push=False),
                  sweep_doing([f"{hostile}=m"], hostile, 1), finish_doing(hostile)):
        body = running_body("<!-- m -->", doing, started=STARTED, job_url=None)
        # every name is one code span that nothing inside closes
        assert "``x` @team #12 <img src=x> [a](http://e.x)``" in body
        assert body.count("``") % 2 == 0


def test_the_did_not_finish_note_says_why_for_which_commit_and_links_the_job() -> None:
    body = unfinished_body("<!-- m -->", "backend said: see https://evil.example @team",
                           started=STARTED, commit="abc1234",
                           job_url="https://ci.example/job/3", exit_code=2)
    assert body.splitlines()[0] == "<!-- m -->"
    assert "⏳" not in body and "running**" not in body
    line = body.splitlines()[2]
    assert line.startswith("⚠️ **The job did not finish**: backend said: see "
                           "`https://evil.example`")  # no live link from untrusted text
    assert "@team" not in line.replace("@\u200bteam", "")  # no mention either
    assert ("no verdict for commit `abc1234` (started 2026-12-02 15:58 UTC). · "
            "[see the CI job](https://ci.example/job/3)") in line
    assert "exit code 2" in body
    bare = unfinished_body("<!-- m -->", "", started=None)
    assert "did not finish**: it stopped before it could report; no verdict." in bare


class Recorder(StickyProgress):
    """A publisher whose comment is a list: what each write would post."""

    def __init__(self, comment: str = "update") -> None:
        self.config = SimpleNamespace(comment=comment, commit="abc1234", mode="run")
        self.posts: list[tuple[str, str]] = []

    def post_note(self, body, mode: str) -> bool:  # type: ignore[no-untyped-def]
        self.posts.append((mode, body("<!-- m -->", "https://ci.example/job/4")))
        return True


def test_running_then_unfinished_once_and_never_after_the_verdict() -> None:
    pub = Recorder()
    pub.running(run_doing(3, "ds"), STARTED)
    assert pub.started == STARTED and "running**" in pub.posts[0][1]
    pub.unfinished("interrupted (SIGINT/SIGTERM)", 130)
    assert "did not finish**: interrupted" in pub.posts[1][1]
    assert "(started 2026-12-02 15:58 UTC)" in pub.posts[1][1]
    pub.unfinished("again", 2)  # already concluded: nothing more
    assert len(pub.posts) == 2
    new = Recorder(comment="new")
    new.running(run_doing(3, "ds"), STARTED)  # "new" would leave it beside the verdict
    assert new.posts == [] and new.started is None
    off = Recorder(comment="off")
    off.unfinished("boom", 2)
    assert off.posts == []


def test_an_interrupted_verdict_is_headed_by_the_did_not_finish_line() -> None:
    pub = Recorder()
    pub.started = STARTED
    verdict = "<!-- m -->\n\n### 💥 Errored\n"
    report = SimpleNamespace(exit_code=130, error="interrupted (SIGTERM): agents killed")
    headed = pub.headed(report, verdict)  # type: ignore[arg-type]
    assert headed.splitlines()[:3] == [
        "<!-- m -->", "",
        "⚠️ **The job did not finish**: interrupted (SIGTERM): agents killed; no verdict for "
        "commit `abc1234` (started 2026-12-02 15:58 UTC)."]
    assert headed.endswith("### 💥 Errored\n")
    passed = SimpleNamespace(exit_code=0, error="")
    assert pub.headed(passed, verdict) == verdict  # type: ignore[arg-type]
