"""The "running" comment's words, and a progress hook that fails never stops a run."""

from __future__ import annotations

import io
from datetime import datetime, timezone

from neens_action.publish.progress import progress_body
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
