"""NeensClient against a tiny scripted http.server on 127.0.0.1 (a fake at the edge)."""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from neens_action.client import (
    CI_RESULT_RETRIES,
    USER_AGENT,
    NeensClient,
    backoff_delay,
    error_detail,
    parse_retry_after,
)
from neens_action.errors import NeensApiError
from neens_action.items import ItemDigest, ItemSpool

KEY = "nk_live_secret_client_test_key"


class Cut(bytes):
    """A body that breaks off: its Content-Length promises 100 bytes more than are sent."""


class Fake:
    """Scripted responses: a list of (status, headers, body) popped per request."""

    def __init__(self) -> None:
        self.script: list[tuple[int, dict[str, str], bytes | str | dict | None]] = []
        self.requests: list[dict] = []
        self.delay = 0.0
        handler = self._handler()
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, args=(0.05,),
                                       daemon=True)
        self.thread.start()

    def _handler(self):
        fake = self

        class H(BaseHTTPRequestHandler):
            def log_message(self, *a):  # quiet
                pass

            def _serve(self):
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else b""
                fake.requests.append({"method": self.command, "path": self.path,
                                      "headers": dict(self.headers), "body": body})
                if fake.delay:
                    time.sleep(fake.delay)
                status, headers, payload = (fake.script.pop(0) if fake.script
                                            else (200, {}, {"ok": True}))
                if isinstance(payload, dict | list):
                    data = json.dumps(payload).encode()
                    headers = {"Content-Type": "application/json", **headers}
                elif isinstance(payload, str):
                    data = payload.encode()
                else:
                    data = payload or b""
                self.send_response(status)
                for k, v in headers.items():
                    self.send_header(k, v)
                cut = isinstance(payload, Cut)
                self.send_header("Content-Length", str(len(data) + (100 if cut else 0)))
                self.end_headers()
                self.wfile.write(data)
                if cut:
                    self.wfile.flush()
                    self.close_connection = True

            do_GET = do_POST = _serve

        return H

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def fake():
    f = Fake()
    yield f
    f.close()


def make(fake: Fake, **kw) -> tuple[NeensClient, list[float]]:
    sleeps: list[float] = []
    kw.setdefault("timeout", 5.0)
    client = NeensClient(fake.url + "/", KEY, kw.pop("project_id", None),
                         sleep=sleeps.append, rand=lambda a, b: b, **kw)
    return client, sleeps


def test_headers_and_bodies(fake):
    client, _ = make(fake, project_id="proj_1")
    fake.script = [(200, {}, {"id": "ppr_1", "status": "awaiting_traces"}), (200, {}, {}), ]
    run = client.create_run({"name": "v1", "version_label": "v1", "dataset_id": None})
    assert run["id"] == "ppr_1"
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


def test_ids_are_escaped_in_paths(fake):
    client, _ = make(fake)
    client.get_gate("../x/y?z")
    assert fake.requests[0]["path"] == "/preprod-evals/..%2Fx%2Fy%3Fz/gate"


def test_envelopes_unwrapped(fake):
    client, _ = make(fake)
    fake.script = [(200, {}, {"items": [{"item_id": "a", "input": "q"}]}), (200, {}, {}),
                   (200, {}, {"gates": [{"gateId": "g"}]})]
    assert client.get_items("r") == [{"item_id": "a", "input": "q"}]
    assert client.get_items("r") == []
    assert client.list_ci_gates() == [{"gateId": "g"}]


def test_get_retries_5xx_then_succeeds(fake):
    client, sleeps = make(fake)
    fake.script = [(500, {}, {"detail": "boom"}), (503, {}, "down"), (200, {}, {"status": "ok"})]
    assert client.get_run("r") == {"status": "ok"}
    assert len(fake.requests) == 3
    assert sleeps == [0.5, 1.0]  # full jitter upper bounds (rand returns the maximum)


def test_retry_after_honoured_and_capped(fake):
    client, sleeps = make(fake, max_retry_after=4.0)
    fake.script = [(429, {"Retry-After": "2"}, {"detail": "slow down"}),
                   (429, {"Retry-After": "120"}, {"detail": "slow down"}),
                   (200, {}, {"status": "ok"})]
    assert client.get_run("r")["status"] == "ok"
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
    lambda c: c.create_sweep({"name": "x"}),
    lambda c: c.preview_sweep({}),
    lambda c: c.launch_suite("s", {"version_label": "v"}),
    lambda c: c.create_suite({"name": "x"}),
])
def test_creates_never_retry(fake, call):
    client, sleeps = make(fake)
    fake.script = [(503, {}, {"detail": "try later"}), (200, {}, {"id": "x"})]
    with pytest.raises(NeensApiError) as info:
        call(client)
    assert info.value.status == 503
    assert len(fake.requests) == 1 and sleeps == []


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
    assert msg.startswith("POST /preprod-evals failed: HTTP 404")
    assert "dataset 'ds_x' not found" in msg
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
    assert "returned a non-JSON response" in str(info.value)


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


def posts(fake: Fake) -> list[dict]:
    return [r for r in fake.requests if r["method"] == "POST"]


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
    assert client.create_run({"name": "x"})["id"] == "ppr_9"
    assert len(posts(fake)) == 1 and sleeps == []


def test_create_5xx_that_created_nothing_is_sent_again_with_the_same_key(fake):
    client, _ = make(fake)
    fake.script = [(500, {}, {"detail": "boom"}), (200, {}, {"runs": []}),
                   (201, {}, {"id": "ppr_2"})]
    assert client.create_run({"name": "x"})["id"] == "ppr_2"
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
    assert client.create_run({"name": "x"})["id"] == "r"
    assert len(fake.requests) == 2 and sleeps == [2.0]  # a refusal: no lookup needed


@pytest.mark.parametrize("payload", [[1, 2], "ppr_1", 42])
def test_non_object_answers_are_errors(fake, payload):
    client, _ = make(fake)
    fake.script = [(200, {}, json.dumps(payload))] * 2
    with pytest.raises(NeensApiError) as info:
        client.get_run("r")
    assert "returned an unexpected response" in str(info.value)
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


def test_query_parameters(fake):
    client, _ = make(fake)
    client.get_comparison("r", baseline="branch:main")
    client.get_sweep_comparison("s", bar=0.9, baseline_arm="arm 1")
    assert fake.requests[0]["path"] == "/preprod-evals/r/comparison?baseline=branch%3Amain"
    assert fake.requests[1]["path"] == "/model-sweeps/s/comparison?bar=0.9&baselineArm=arm%201"


def test_ci_result_timeout_capped(fake):
    client = NeensClient(fake.url, KEY, timeout=60, retries=5, sleep=lambda s: None)
    fake.delay = 0.2
    client.post_ci_result("r", {"verdict": "passed"})  # works with the capped timeout
    assert len(fake.requests) == 1


def test_ci_result_outlasts_five_faults_in_a_row_within_its_budget(fake):
    client, sleeps = make(fake, retries=5)
    fake.script = [(500, {}, {"detail": "x"}), (429, {"Retry-After": "0"}, {}),
                   (503, {}, "down"), (500, {}, {}), (429, {}, {}), (200, {}, {"ok": True})]
    assert client.post_ci_result("r", {"verdict": "blocked"}) == {"ok": True}
    assert len(fake.requests) == 6 and len(sleeps) == 5
    fake.script = [(500, {}, {})] * 12
    fake.requests.clear()
    with pytest.raises(NeensApiError):
        client.post_ci_result("r", {"verdict": "blocked"})
    assert len(fake.requests) == 1 + CI_RESULT_RETRIES
    none, _ = make(fake, retries=0)
    fake.script, fake.requests[:] = [(500, {}, {})], []
    with pytest.raises(NeensApiError):
        none.post_ci_result("r", {"verdict": "blocked"})
    assert len(fake.requests) == 1  # retries=0 is respected


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


# -- streamed bodies ---------------------------------------------------------------------------


def rows_body(n: int, **extra) -> dict:
    return {"id": "r", "status": "completed", **extra, "items": [
        {"datasetVersionItemId": f"b_{i}", "input": f"prompt {i}", "passed": i % 2 == 0,
         "output": "o" * 50, "error": None if i % 2 == 0 else "judge said no"}
        for i in range(n)]}


def test_a_run_is_folded_into_a_digest_as_it_streams(fake):
    client, _ = make(fake)
    fake.script = [(200, {}, rows_body(3000, total=3000))]
    digest = ItemDigest(limit=5)
    run = client.get_run("r", digest=digest)
    assert run == {"id": "r", "status": "completed", "total": 3000}
    assert (digest.total, digest.passed) == (3000, 1500)
    assert [r["datasetVersionItemId"] for r in digest.rows] == [f"b_{i}" for i in (1, 3, 5, 7, 9)]
    assert digest.rows[0] == {"datasetVersionItemId": "b_1", "input": "prompt 1",
                              "passed": False, "error": "judge said no"}


def test_polling_never_holds_the_items_even_from_a_server_that_sends_them(fake):
    client, _ = make(fake)
    fake.script = [(200, {}, rows_body(2000, total=2000))]
    assert client.get_run_summary("r") == {"id": "r", "status": "completed", "total": 2000}
    assert fake.requests[0]["path"] == "/preprod-evals/r?items=false"


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
    assert str(info.value).startswith("GET /preprod-evals/r/items failed: ")


def test_a_streamed_non_json_answer_names_its_content_type(fake):
    client, _ = make(fake)
    fake.script = [(200, {"Content-Type": "text/html; charset=utf-8"},
                    "<html><body>" + "<p>sign in</p>" * 5000 + "</body></html>")]
    with pytest.raises(NeensApiError) as info:
        client.get_run("r", digest=ItemDigest())
    assert str(info.value) == ("GET /preprod-evals/r returned a non-JSON response (HTTP 200, "
                               "text/html); is --base-url the Neens API origin?")


def test_a_create_whose_answer_breaks_off_is_looked_up_not_resent(fake):
    client, _ = make(fake)
    fake.script = [(201, {}, Cut(b'{"id": "ppr_7", "status": "awaiting_traces", "items": [')),
                   (200, {}, {"runs": [{"id": "ppr_7", "status": "awaiting_traces"}]})]
    run = client.create_run({"name": "x", "version_label": "x"})
    assert run["id"] == "ppr_7" and len(posts(fake)) == 1


def test_a_create_answer_is_read_without_its_items_and_start_drains_the_run(fake):
    client, _ = make(fake)
    fake.script = [(201, {}, rows_body(2000, status="awaiting_traces")), (200, {}, rows_body(2000))]
    run = client.create_run({"name": "x", "version_label": "x"})
    assert run == {"id": "r", "status": "awaiting_traces"}
    assert client.start_run("r") is None
