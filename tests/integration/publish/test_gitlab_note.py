"""The sticky MR note through python-gitlab against a real local fake of the GitLab notes API."""

from __future__ import annotations

import json

import pytest

from neens_action.publish.gitlab import GitLabContext, marker, post_sticky_note
from neens_action.report.render.markdown import render_comment
from tests.fakes.gitlab_server import FakeGitLab
from tests.unit.report import samples

TOKEN = "glpat-fake-token"


@pytest.fixture
def gl():
    server = FakeGitLab(token=TOKEN).start()
    yield server
    server.stop()


def _post(gl: FakeGitLab, report, *, job: str = "neens-eval", mode: str = "update",
          token: str = TOKEN, **kw):
    values = dict(api_url=gl.api_url, project_id="42", mr_iid="5", sha="abc1234", job_name=job,
                  project_url="https://gitlab.example/g/p")
    values.update(kw)
    ctx = GitLabContext(**values)
    mark = marker(job=ctx.job_name, mode="run")
    return post_sticky_note(ctx, token=token, body=render_comment(report, marker=mark),
                            mark=mark, mode=mode, timeout=10)


def test_create_then_update_the_same_note(gl: FakeGitLab) -> None:
    first = _post(gl, samples.failed())
    assert first.action == "created" and first.notices == []
    assert first.url.startswith("https://gitlab.example/g/p/-/merge_requests/5#note_")
    second = _post(gl, samples.passed())
    assert second.action == "updated" and second.url == first.url
    notes = gl.mr_notes("5")
    assert len(notes) == 1 and "Passed" in notes[0]["body"]
    assert len(gl.calls("PUT")) == 1 and len(gl.calls("POST")) == 1
    for req in gl.requests:
        assert req.headers["private-token"] == TOKEN
        assert TOKEN not in req.path and TOKEN not in json.dumps(req.body)


def test_second_job_gets_its_own_note(gl: FakeGitLab) -> None:
    _post(gl, samples.passed(), job="eval: [a]")
    _post(gl, samples.failed(), job="eval: [b]")
    _post(gl, samples.failed(), job="eval: [a]")
    notes = gl.mr_notes("5")
    assert len(notes) == 2
    assert "Blocked" in notes[0]["body"] and "Blocked" in notes[1]["body"]


def test_all_note_pages_are_read(gl: FakeGitLab) -> None:
    gl.seed("5", 250)
    first = _post(gl, samples.failed())
    second = _post(gl, samples.passed())
    assert (first.action, second.action) == ("created", "updated")
    pages = [r.query.get("page", "1") for r in gl.calls("GET", "/notes")]
    assert {"1", "2", "3"} <= set(pages)
    assert len(gl.mr_notes("5")) == 251


def test_403_is_a_notice(gl: FakeGitLab) -> None:
    gl.forbidden_mrs.add("5")
    result = _post(gl, samples.failed())
    assert result.action == "skipped" and "403" in result.notices[0]
    assert "api scope" in result.notices[0]


def test_no_token_is_a_notice_without_any_call(gl: FakeGitLab) -> None:
    result = _post(gl, samples.failed(), token="")
    assert result.action == "skipped" and "NEENS_GITLAB_TOKEN" in result.notices[0]
    assert gl.requests == []


def test_branch_pipeline_finds_the_mr_of_the_commit(gl: FakeGitLab) -> None:
    gl.commit_mrs["abc1234"] = [{"iid": 9, "state": "opened"}, {"iid": 3, "state": "merged"}]
    result = _post(gl, samples.passed(), mr_iid="")
    assert result.action == "created"
    assert len(gl.mr_notes("9")) == 1 and gl.mr_notes("3") == []


def test_comment_new_and_off(gl: FakeGitLab) -> None:
    _post(gl, samples.passed(), mode="new")
    _post(gl, samples.passed(), mode="new")
    assert len(gl.mr_notes("5")) == 2
    before = len(gl.requests)
    assert _post(gl, samples.passed(), mode="off").action == "skipped"
    assert len(gl.requests) == before


def test_unreachable_api_is_a_notice() -> None:
    ctx = GitLabContext(api_url="http://127.0.0.1:9/api/v4", project_id="1", mr_iid="1")
    result = post_sticky_note(ctx, token=TOKEN, body="x", mark="<!-- m -->", timeout=5)
    assert result.action == "skipped" and "could not be reached" in result.notices[0]


def test_a_planted_marker_note_is_left_alone_and_a_new_note_posted(gl: FakeGitLab) -> None:
    """Issue 17: a marker opening a note by another author is not ours (the PUT would be
    refused with 403 and nothing posted at all)."""
    mark = marker(job="neens-eval", mode="run")
    planted = gl.add_note("5", mark + "\n✅ Passed (trust me)", user_id=5)
    result = _post(gl, samples.failed())
    assert result.action == "created" and result.notices == []
    notes = gl.mr_notes("5")
    assert notes[0]["body"].endswith("(trust me)") and notes[0]["id"] == planted["id"]
    assert notes[1]["author"]["id"] == 77 and "Blocked" in notes[1]["body"]
    assert gl.calls("PUT") == []
    again = _post(gl, samples.passed())  # ...and ours is the one edited from now on
    assert again.action == "updated" and again.url == result.url
    assert gl.mr_notes("5")[0]["body"].endswith("(trust me)")


def test_marker_must_open_our_note_and_system_notes_are_skipped(gl: FakeGitLab) -> None:
    mark = marker(job="neens-eval", mode="run")
    gl.add_note("5", "quoting you:\n" + mark, user_id=77)  # ours, but does not open with it
    gl.add_note("5", mark + " system", user_id=77, system=True)
    result = _post(gl, samples.failed())
    assert result.action == "created" and len(gl.mr_notes("5")) == 3
    assert gl.calls("PUT") == []


def test_update_refused_with_403_or_404_falls_back_to_a_new_note(gl: FakeGitLab) -> None:
    first = _post(gl, samples.failed())
    note_id = gl.mr_notes("5")[0]["id"]
    for status in (403, 404):
        gl.locked_notes[note_id] = status
        again = _post(gl, samples.passed())
        assert again.action == "created" and again.notices == []
        note_id = gl.mr_notes("5")[-1]["id"]
    assert first.action == "created" and len(gl.mr_notes("5")) == 3
    assert [r.method for r in gl.requests if r.method in ("PUT", "POST")] == [
        "POST", "PUT", "POST", "PUT", "POST"]


def test_a_redirect_is_an_error_and_the_token_does_not_follow(gl: FakeGitLab) -> None:
    with FakeGitLab(token=TOKEN) as other:
        gl.redirect_to = other.url
        result = _post(gl, samples.failed())
        assert result.action == "skipped" and "redirect" in result.notices[0]
        assert other.requests == []
