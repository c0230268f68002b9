"""How every call is made (neens_action.api.transport): headers, retries, the idempotent create,
one-line errors, streamed bodies that break off; against the scripted server of
client_support."""

from __future__ import annotations

import json

import pytest

from neens_action.api.client import (
    USER_AGENT,
    NeensClient,
    backoff_delay,
    error_detail,
    parse_retry_after,
)
from neens_action.errors import NeensApiError
from neens_action.items import ItemDigest, ItemSpool
from tests.unit.api.client_support import KEY, Cut, make, posts, rows_body


def test_headers_and_bodies(fake):
    client, _ = make(fake, project_id="proj_1")
    fake.script = [(200, {}, {"id": "ppr_1", "status": "awaiting_traces"}), (200, {}, {}), ]
    run = client.create_run({"name": "v1", "version_label": "v1", "dataset_id": None})
    assert run.id == "ppr_1"
    client.start_run("ppr_1")
    create, start = fake.requests
    assert create["path"] == "/preprod-evals"
    assert json.loads(create["body"]) == {"name": "v1", "version_label": "v1"}  # null omitted
    assert create["headers"]["Content-Type"] == "application/json"
    assert create["headers"]["Accept"] == "application/json"
    assert create["headers"]["User-Agent"] == USER_AGENT
    assert USER_AGENT.startswith("neens-action/")
    assert create["headers"]["Authorization"] == f"Bearer {KEY}"
    assert create["headers"]["X-Neens-Project-Id"] == "proj_1"
    assert start["path"] == "/preprod-evals/ppr_1/start"
    assert start["body"] == b""
    assert "Content-Type" not in start["headers"]


def test_no_key_no_authorization_header(fake):
    client = NeensClient(fake.url, None)
    client.get_run("r")
    assert "Authorization" not in fake.requests[0]["headers"]
    assert "X-Neens-Project-Id" not in fake.requests[0]["headers"]


def test_get_retries_5xx_then_succeeds(fake):
    client, sleeps = make(fake)
    fake.script = [(500, {}, {"detail": "boom"}), (503, {}, "down"), (200, {}, {"status": "ok"})]
    assert client.get_run("r").raw == {"status": "ok"}
    assert len(fake.requests) == 3
    assert sleeps == [0.5, 1.0]  # full jitter upper bounds (rand returns the maximum)


def test_retry_after_honoured_and_capped(fake):
    client, sleeps = make(fake, max_retry_after=4.0)
    fake.script = [(429, {"Retry-After": "2"}, {"detail": "slow down"}),
                   (429, {"Retry-After": "120"}, {"detail": "slow down"}),
                   (200, {}, {"status": "ok"})]
    assert client.get_run("r").status == "ok"
    assert sleeps == [2.0, 4.0]


def test_retries_exhausted_raise_with_detail(fake):
    client, sleeps = make(fake, retries=2)
    fake.script = [(502, {}, {"detail": "bad gateway"})] * 3
    with pytest.raises(NeensApiError) as info:
        client.get_gate("r")
    assert info.value.status == 502
    assert info.value.detail == "bad gateway"
    assert len(fake.requests) == 3 and len(sleeps) == 2
    assert info.value.transient


@pytest.mark.parametrize("call", [
    lambda c: c.trigger_push("r"),
    lambda c: c.preview_sweep({}),
])
def test_unkeyed_posts_never_retry(fake, call):
    client, sleeps = make(fake)
    fake.script = [(503, {}, {"detail": "try later"}), (200, {}, {"id": "x"})]
    with pytest.raises(NeensApiError) as info:
        call(client)
    assert info.value.status == 503
    assert len(fake.requests) == 1 and sleeps == []


KEYED_CREATES = [  # (call, the POST path, the lookup path, the listing field)
    (lambda c: c.create_sweep({"name": "x"}), "/model-sweeps", "/model-sweeps", "sweeps"),
    (lambda c: c.create_suite({"name": "x"}), "/scenario-suites", "/scenario-suites",
     "suites"),
    (lambda c: c.launch_suite("s", {"version_label": "v"}), "/scenario-suites/s/launch",
     "/preprod-evals", "runs"),
]


@pytest.mark.parametrize(("call", "path", "lookup", "field"), KEYED_CREATES)
def test_sweep_suite_and_launch_creates_are_looked_up_not_repeated(fake, call, path, lookup,
                                                                   field):
    client, _ = make(fake)
    fake.script = [(503, {}, {"detail": "try later"}), (200, {}, {field: [{"id": "x_9"}]})]
    answer = call(client)  # the lookup found what the lost create made
    assert (answer["id"] if isinstance(answer, dict) else answer.id) == "x_9"
    post, get = fake.requests
    key = post["headers"]["Idempotency-Key"]
    assert post["path"] == path and key.startswith("neens-action-")
    assert get["method"] == "GET" and get["path"] == f"{lookup}?idempotency_key={key}"
    fake.requests.clear()
    fake.script = [(500, {}, {"detail": "boom"}), (200, {}, {field: []}), (201, {}, {"id": "y"})]
    answer = call(client)  # nothing was made: sent again, same key
    assert (answer["id"] if isinstance(answer, dict) else answer.id) == "y"
    first, _, second = fake.requests
    assert first["headers"]["Idempotency-Key"] == second["headers"]["Idempotency-Key"]
    fake.requests.clear()
    fake.script = [(502, {}, {"detail": "bad gateway"}), (404, {}, {"detail": "no route"})]
    with pytest.raises(NeensApiError, match="may have been created anyway"):
        call(client)  # a server without the lookup: an error, never a second create
    assert len(posts(fake)) == 1


@pytest.mark.parametrize("call", [
    lambda c: c.start_run("r"),
    lambda c: c.cancel_run("r"),
    lambda c: c.post_ci_result("r", {"verdict": "passed"}),
    lambda c: c.cancel_sweep("s"),
])
def test_idempotent_posts_retry(fake, call):
    client, _ = make(fake)
    fake.script = [(500, {}, "oops"), (200, {}, {"ok": True})]
    call(client)
    assert len(fake.requests) == 2


def test_conflict_on_start_and_cancel_is_none(fake):
    client, _ = make(fake)
    fake.script = [(409, {}, {"detail": "already terminal"})] * 2
    assert client.start_run("r") is None
    assert client.cancel_run("r") is None


def test_error_detail_from_json_and_message_shape(fake):
    client, _ = make(fake)
    fake.script = [(404, {}, {"detail": "dataset 'ds_x' not found"})]
    with pytest.raises(NeensApiError) as info:
        client.create_run({"name": "x"})
    msg = str(info.value)
    # what is wrong first, the call only in the details at the end
    assert msg == ("Neens found no such resource: dataset 'ds_x' not found "
                   "(HTTP 404 Not Found; POST /preprod-evals)")
    assert info.value.method == "POST" and info.value.path == "/preprod-evals"


def test_html_error_page_is_reduced(fake):
    client, _ = make(fake, retries=0)
    page = ("<html><head><title>502 Bad Gateway</title><style>body{x:y}</style></head>"
            "<body><h1>Bad Gateway</h1>" + "<p>filler</p>" * 500 + "</body></html>")
    fake.script = [(502, {"Content-Type": "text/html"}, page)]
    with pytest.raises(NeensApiError) as info:
        client.get_run("r")
    assert info.value.detail == "502 Bad Gateway"
    assert "<" not in str(info.value) and len(str(info.value)) < 300


def test_long_text_error_truncated_to_200():
    detail = error_detail("x" * 5000, "text/plain")
    assert len(detail) <= 201


def test_error_detail_variants():
    assert error_detail('{"detail": [{"msg": "field required"}, {"msg": "bad"}]}') == \
        "field required; bad"
    assert error_detail('{"message": "nope"}') == "nope"
    assert error_detail("<p>plain <b>html</b></p>") == "plain html"
    assert error_detail("") == ""


def test_non_json_2xx_is_an_error(fake):
    client, _ = make(fake)
    fake.script = [(200, {"Content-Type": "text/html"}, "<html>login page</html>")]
    with pytest.raises(NeensApiError) as info:
        client.get_run("r")
    assert str(info.value).startswith("Neens answered with a non-JSON response")


def test_empty_2xx_is_none(fake):
    client, _ = make(fake)
    fake.script = [(204, {}, b"")]
    assert client.post_ci_result("r", {"verdict": "passed"}) is None


def test_read_timeout_is_a_clean_error(fake):
    client = NeensClient(fake.url, KEY, timeout=0.3, retries=1, sleep=lambda s: None)
    fake.delay = 1.0
    with pytest.raises(NeensApiError) as info:
        client.get_run("r")
    assert info.value.status is None
    assert "no response within 0.3s" in str(info.value)
    assert len(fake.requests) == 2  # a GET is retried on a timeout


def test_create_timeout_is_looked_up_not_resent(fake):
    client = NeensClient(fake.url, KEY, timeout=0.3, retries=1, sleep=lambda s: None)
    fake.delay = 1.0  # the create and the lookups all time out: the outcome stays unknown
    with pytest.raises(NeensApiError) as info:
        client.create_run({"name": "x"})
    assert len(posts(fake)) == 1
    gets = [r for r in fake.requests if r["method"] == "GET"]
    key = posts(fake)[0]["headers"]["Idempotency-Key"]
    assert gets and all(r["path"] == f"/preprod-evals?idempotency_key={key}" for r in gets)
    assert "may have been created anyway" in str(info.value)
    assert "\n" not in str(info.value)


def test_create_5xx_found_by_the_lookup_is_the_answer(fake):
    client, sleeps = make(fake)
    fake.script = [(503, {}, {"detail": "try later"}),
                   (200, {}, {"runs": [{"id": "ppr_9", "status": "awaiting_traces"}]})]
    assert client.create_run({"name": "x"}).id == "ppr_9"
    assert len(posts(fake)) == 1 and sleeps == []


def test_create_5xx_that_created_nothing_is_sent_again_with_the_same_key(fake):
    client, _ = make(fake)
    fake.script = [(500, {}, {"detail": "boom"}), (200, {}, {"runs": []}),
                   (201, {}, {"id": "ppr_2"})]
    assert client.create_run({"name": "x"}).id == "ppr_2"
    first, second = posts(fake)
    assert first["headers"]["Idempotency-Key"] == second["headers"]["Idempotency-Key"]
    assert first["headers"]["Idempotency-Key"].startswith("neens-action-")


def test_create_without_a_lookup_on_the_server_is_an_error_not_a_resend(fake):
    client, _ = make(fake)
    fake.script = [(502, {}, {"detail": "bad gateway"}), (404, {}, {"detail": "no route"})]
    with pytest.raises(NeensApiError) as info:
        client.create_run({"name": "x"})
    assert info.value.status == 502
    assert "may have been created anyway" in str(info.value) and "HTTP 404" in str(info.value)
    assert len(posts(fake)) == 1


def test_create_429_is_sent_again_after_retry_after(fake):
    client, sleeps = make(fake)
    fake.script = [(429, {"Retry-After": "2"}, {"detail": "slow down"}), (201, {}, {"id": "r"})]
    assert client.create_run({"name": "x"}).id == "r"
    assert len(fake.requests) == 2 and sleeps == [2.0]  # a refusal: no lookup needed


@pytest.mark.parametrize("payload", [[1, 2], "ppr_1", 42])
def test_non_object_answers_are_errors(fake, payload):
    client, _ = make(fake)
    fake.script = [(200, {}, json.dumps(payload))] * 2
    with pytest.raises(NeensApiError) as info:
        client.get_run("r")
    assert "where a JSON object was expected" in str(info.value)
    with pytest.raises(NeensApiError):
        client.create_run({"name": "x"})


def test_connection_refused_is_clean():
    client = NeensClient("http://127.0.0.1:9", KEY, retries=1, sleep=lambda s: None)
    with pytest.raises(NeensApiError) as info:
        client.get_run("r")
    assert info.value.status is None
    assert "connection refused" in str(info.value)
    assert "http://127.0.0.1:9" in str(info.value)


def test_key_never_in_messages_or_repr(fake):
    client, _ = make(fake, retries=0)
    fake.script = [(401, {}, {"detail": f"bad key {KEY}"})]
    with pytest.raises(NeensApiError) as info:
        client.get_run("r")
    assert KEY not in str(info.value) and KEY not in repr(info.value)
    assert KEY not in (info.value.detail or "")
    assert "NEENS_API_KEY" in str(info.value)  # says how to fix it
    assert KEY not in repr(client) and KEY not in repr(client.session.auth)


def test_backoff_and_retry_after_helpers():
    assert backoff_delay(0, rand=lambda a, b: b) == 0.5
    assert backoff_delay(3, rand=lambda a, b: b) == 4.0
    assert backoff_delay(10, rand=lambda a, b: b) == 8.0  # capped
    assert all(0 <= backoff_delay(2) <= 2.0 for _ in range(50))
    assert parse_retry_after("3") == 3.0
    assert parse_retry_after("-1") == 0.0
    assert parse_retry_after("garbage") is None
    assert parse_retry_after(None) is None
    assert parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT", now=1445412470.0) == 10.0


def test_empty_base_url_refused():
    with pytest.raises(NeensApiError):
        NeensClient("  ", KEY)


def test_a_body_that_breaks_off_is_read_again_from_the_first_row(fake):
    client, sleeps = make(fake)
    whole = json.dumps({"items": [{"item_id": f"it_{i}", "input": f"q{i}"}
                                  for i in range(400)]}).encode()
    fake.script = [(200, {"Content-Type": "application/json"}, Cut(whole[: len(whole) // 2])),
                   (200, {}, json.loads(whole))]
    with ItemSpool() as spool:
        client.get_items("r", row=spool.add, restart=spool.reset)
        assert [item.item_id for item in spool] == [f"it_{i}" for i in range(400)]
    assert len(fake.requests) == 2 and len(sleeps) == 1  # retried once, nothing twice
    digest = ItemDigest()
    fake.script = [(200, {}, Cut(json.dumps(rows_body(300)).encode()[:5000])),
                   (200, {}, rows_body(300))]
    client.get_run("r", digest=digest)
    assert (digest.total, digest.passed) == (300, 150)


def test_a_body_that_keeps_breaking_off_is_one_clean_error(fake):
    client, _ = make(fake, retries=1)
    fake.script = [(200, {}, Cut(b'{"items": [{"item_id": "a"')) for _ in range(2)]
    with pytest.raises(NeensApiError) as info:
        client.get_items("r")
    assert info.value.status is None and "\n" not in str(info.value)
    assert str(info.value).startswith("could not reach Neens at http://127.0.0.1:")
    assert str(info.value).endswith("(GET /preprod-evals/r/items)")


def test_a_streamed_non_json_answer_names_its_content_type(fake):
    client, _ = make(fake)
    fake.script = [(200, {"Content-Type": "text/html; charset=utf-8"},
                    "<html><body>" + "<p>sign in</p>" * 5000 + "</body></html>")]
    with pytest.raises(NeensApiError) as info:
        client.get_run("r", digest=ItemDigest())
    assert str(info.value) == ("Neens answered with a non-JSON response: is --base-url the "
                               "Neens API origin? (HTTP 200, text/html; GET /preprod-evals/r)")


def test_a_create_whose_answer_breaks_off_is_looked_up_not_resent(fake):
    client, _ = make(fake)
    fake.script = [(201, {}, Cut(b'{"id": "ppr_7", "status": "awaiting_traces", "items": [')),
                   (200, {}, {"runs": [{"id": "ppr_7", "status": "awaiting_traces"}]})]
    run = client.create_run({"name": "x", "version_label": "x"})
    assert run.id == "ppr_7" and len(posts(fake)) == 1
