"""The sticky PR comment through PyGithub against a real local fake of the GitHub REST API."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from neens_action.publish.github import GitHubContext, marker, post_sticky_comment
from neens_action.report.render.markdown import render_comment
from tests.fakes.github_server import HUMAN, FakeGitHub
from tests.unit.report import samples

TOKEN = "ghs_fake_token"


@pytest.fixture
def gh():
    server = FakeGitHub(token=TOKEN).start()
    yield server
    server.stop()


def _ctx(gh: FakeGitHub, **kw) -> GitHubContext:
    values = dict(api_url=gh.api_url, repository=gh.full_name, event_name="pull_request",
                  sha="abc1234", workflow="CI", job="eval", pr_numbers=[7])
    values.update(kw)
    return GitHubContext(**values)


def _post(gh: FakeGitHub, report, *, leg: str = "0", mode: str = "update", author: str = "",
          **kw):
    ctx = _ctx(gh, **kw)
    mark = marker(workflow=ctx.workflow, job=ctx.job, mode="run", leg=leg)
    body = render_comment(report, marker=mark)
    return post_sticky_comment(ctx, token=TOKEN, body=body, mark=mark, mode=mode, timeout=10,
                               author=author)


def test_first_run_creates_second_run_edits_the_same_comment(gh: FakeGitHub) -> None:
    first = _post(gh, samples.failed())
    assert first.action == "created" and first.notices == []
    assert first.url.startswith("https://github.example/acme/agent/pull/7#issuecomment-")
    comments = gh.comments(7)
    assert len(comments) == 1 and "Blocked" in comments[0]["body"]

    second = _post(gh, samples.passed())
    assert second.action == "updated" and second.url == first.url
    comments = gh.comments(7)
    assert len(comments) == 1
    assert "Passed" in comments[0]["body"] and "Blocked" not in comments[0]["body"]
    assert len(gh.calls("PATCH")) == 1 and len(gh.calls("POST")) == 1
    # the token went in the header, never in a URL or a body
    for req in gh.requests:
        assert TOKEN not in req.path and TOKEN not in json.dumps(req.body)


def test_second_matrix_leg_gets_its_own_comment(gh: FakeGitHub) -> None:
    _post(gh, samples.passed(), leg="0")
    _post(gh, samples.failed(), leg="1")
    _post(gh, samples.failed(), leg="0")
    _post(gh, samples.passed(), leg="1")
    bodies = [c["body"] for c in gh.comments(7)]
    assert len(bodies) == 2
    assert "leg=0" in bodies[0] and "Blocked" in bodies[0]
    assert "leg=1" in bodies[1] and "Passed" in bodies[1]


def test_marker_found_beyond_the_first_page(gh: FakeGitHub) -> None:
    gh.seed(7, 130)  # 130 human comments: our marker sits on page 2 (per_page=100)
    first = _post(gh, samples.failed())
    assert first.action == "created"
    gh.seed(7, 5)
    second = _post(gh, samples.passed())
    assert second.action == "updated" and second.url == first.url
    pages = [r.query.get("page", "1") for r in gh.calls("GET", "/issues/7/comments")]
    assert "2" in pages
    assert all(r.query.get("per_page") == "100" for r in gh.calls("GET", "/issues/7/comments"))
    assert len(gh.comments(7)) == 136


def test_comment_new_always_posts(gh: FakeGitHub) -> None:
    _post(gh, samples.passed(), mode="new")
    _post(gh, samples.passed(), mode="new")
    assert len(gh.comments(7)) == 2
    assert gh.calls("GET") == []  # nothing to look up


def test_comment_off_does_nothing(gh: FakeGitHub) -> None:
    result = _post(gh, samples.passed(), mode="off")
    assert result.action == "skipped" and gh.requests == []


def test_403_on_a_fork_pr_is_a_notice(gh: FakeGitHub) -> None:
    gh.forbidden_prs.add(7)
    result = _post(gh, samples.failed())
    assert result.action == "skipped"
    assert len(result.notices) == 1 and "403" in result.notices[0]
    assert "pull-requests: write" in result.notices[0]


def test_read_only_token_is_a_notice(gh: FakeGitHub) -> None:
    gh.read_only = True
    result = _post(gh, samples.failed())
    assert result.action == "skipped" and "403" in result.notices[0]


def test_fork_event_is_skipped_without_calling_github(gh: FakeGitHub) -> None:
    result = _post(gh, samples.failed(), fork=True)
    assert result.action == "skipped" and "fork" in result.notices[0]
    assert gh.requests == []


def test_a_look_alike_human_comment_is_not_edited(gh: FakeGitHub) -> None:
    """Issue 17: a PR author plants our marker; the token could edit it (GitHub lets it), so
    only our own identity's comment counts: theirs is left alone and ours is posted."""
    mark = marker(workflow="CI", job="eval", mode="run", leg="0")
    gh.add_comment(7, mark + "\nI copied your marker", user=HUMAN)
    ours = _post(gh, samples.failed())
    assert ours.action == "created"  # the human's comment is untouched, and that is said
    assert len(ours.notices) == 1 and "octocat" in ours.notices[0]
    assert gh.comments(7)[0]["body"].endswith("I copied your marker")
    assert gh.calls("PATCH") == []
    again = _post(gh, samples.passed())  # ...and from now on ours is the one edited
    assert again.action == "updated" and again.url == ours.url and again.notices == []
    assert len(gh.comments(7)) == 2
    assert gh.comments(7)[0]["body"].endswith("I copied your marker")


def test_another_bot_or_a_quoted_marker_is_not_ours(gh: FakeGitHub) -> None:
    mark = marker(workflow="CI", job="eval", mode="run", leg="0")
    gh.add_comment(7, mark + "\nlook-alike", user={"login": "evil-app[bot]", "type": "Bot"})
    gh.add_comment(7, "> quoted\n" + mark + "\nold result")  # the bot's, marker not first
    result = _post(gh, samples.passed())
    assert result.action == "created" and gh.calls("PATCH") == []
    bodies = [c["body"] for c in gh.comments(7)]
    assert bodies[0].endswith("look-alike") and bodies[1].endswith("old result")
    assert "Passed" in bodies[2]


def test_a_personal_token_finds_its_own_user_comment(gh: FakeGitHub) -> None:
    gh.pat_login = "neens-ci"
    mark = marker(workflow="CI", job="eval", mode="run", leg="0")
    gh.add_comment(7, mark + "\nthe workflow bot's")  # github-actions[bot]: not this token
    first = _post(gh, samples.failed())
    second = _post(gh, samples.passed())
    assert (first.action, second.action) == ("created", "updated")
    assert second.url == first.url
    bodies = [c["body"] for c in gh.comments(7)]
    assert bodies[0].endswith("the workflow bot's") and "Passed" in bodies[1]
    assert gh.comments(7)[1]["user"]["login"] == "neens-ci"


def test_push_event_finds_the_prs_of_the_commit(gh: FakeGitHub) -> None:
    gh.set_commit_pulls("abc1234", [3, 4])
    result = _post(gh, samples.passed(), event_name="push", pr_numbers=[])
    assert result.action == "created"
    assert len(gh.comments(3)) == 1 and len(gh.comments(4)) == 1


def test_push_without_pr_is_a_notice(gh: FakeGitHub) -> None:
    result = _post(gh, samples.passed(), event_name="push", pr_numbers=[])
    assert result.action == "skipped" and result.notices == []
    assert "no pull request" in result.info[0]


def test_bad_token_is_a_notice(gh: FakeGitHub) -> None:
    ctx = _ctx(gh)
    result = post_sticky_comment(ctx, token="wrong", body="x", mark="<!-- m -->", timeout=10)
    assert result.action == "skipped" and "401" in result.notices[0]


def test_unreachable_api_is_a_notice() -> None:
    ctx = GitHubContext(api_url="http://127.0.0.1:9", repository="a/b", pr_numbers=[1])
    result = post_sticky_comment(ctx, token=TOKEN, body="x", mark="<!-- m -->", timeout=5)
    assert result.action == "skipped" and "could not be reached" in result.notices[0]


def test_context_from_event_payload(tmp_path: Path) -> None:
    event = tmp_path / "event.json"
    pr = {"number": 12, "head": {"repo": {"full_name": "someone/agent"}},
          "base": {"repo": {"full_name": "acme/agent"}}}
    event.write_text(json.dumps({"pull_request": pr}))
    env = {"GITHUB_EVENT_PATH": str(event), "GITHUB_EVENT_NAME": "pull_request",
           "GITHUB_REPOSITORY": "acme/agent", "GITHUB_API_URL": "https://ghe.example/api/v3/",
           "GITHUB_RUN_ID": "99", "GITHUB_SERVER_URL": "https://ghe.example"}
    ctx = GitHubContext.from_env(env)
    assert ctx.pr_numbers == [12] and ctx.fork is True
    assert ctx.api_url == "https://ghe.example/api/v3"
    assert ctx.details_url == "https://ghe.example/acme/agent/actions/runs/99"
    env["GITHUB_EVENT_NAME"] = "pull_request_target"
    assert GitHubContext.from_env(env).fork is False
    pr["head"]["repo"]["full_name"] = "acme/agent"
    event.write_text(json.dumps({"pull_request": pr}))
    env["GITHUB_EVENT_NAME"] = "pull_request"
    assert GitHubContext.from_env(env).fork is False


def test_an_app_token_finds_its_comment_with_comment_author(gh: FakeGitHub) -> None:
    gh.app_login = "neens-app[bot]"  # GET /user is 403: the token cannot say who it is
    first = _post(gh, samples.failed())
    blind = _post(gh, samples.failed())
    assert (first.action, blind.action) == ("created", "created")  # without the input...
    assert any("neens-app[bot]" in n and "comment-author" in n for n in blind.notices)
    told = _post(gh, samples.passed(), author="neens-app[bot]")
    assert told.action == "updated" and told.notices == []  # ...and with it
    assert "Passed" in gh.comments(7)[0]["body"]


def test_a_skipped_marked_comment_by_another_identity_is_a_notice(gh: FakeGitHub) -> None:
    mark = marker(workflow="CI", job="eval", mode="run", leg="0")
    gh.add_comment(7, mark + "\nplanted", user=HUMAN)
    result = _post(gh, samples.passed())
    assert result.action == "created"
    assert [n for n in result.notices if "octocat" in n and "left alone" in n]
