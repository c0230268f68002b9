"""NeensClient's endpoints (paths, envelopes, queries, ci-result, items read as they
stream) against the scripted server of client_support."""

from __future__ import annotations

import pytest

from neens_action.api.answers import ItemRow
from neens_action.api.client import (
    CI_RESULT_RETRIES,
    NeensClient,
)
from neens_action.errors import NeensApiError
from neens_action.items import ItemDigest
from tests.unit.api.client_support import KEY, make, rows_body


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


def test_a_run_is_folded_into_a_digest_as_it_streams(fake):
    client, _ = make(fake)
    fake.script = [(200, {}, rows_body(3000, total=3000))]
    digest = ItemDigest(limit=5)
    run = client.get_run("r", digest=digest)
    assert run.raw == {"id": "r", "status": "completed", "total": 3000}
    assert run.items is None and (run.id, run.total) == ("r", 3000)
    assert (digest.total, digest.passed) == (3000, 1500)
    assert [r.item_id for r in digest.rows] == [f"b_{i}" for i in (1, 3, 5, 7, 9)]
    assert digest.rows[0] == ItemRow(item_id="b_1", input="prompt 1", passed=False,
                                     error="judge said no")


def test_polling_never_holds_the_items_even_from_a_server_that_sends_them(fake):
    client, _ = make(fake)
    fake.script = [(200, {}, rows_body(2000, total=2000))]
    assert client.get_run_summary("r").raw == {"id": "r", "status": "completed", "total": 2000}
    assert fake.requests[0]["path"] == "/preprod-evals/r?items=false"


def test_a_create_answer_is_read_without_its_items_and_start_drains_the_run(fake):
    client, _ = make(fake)
    fake.script = [(201, {}, rows_body(2000, status="awaiting_traces")), (200, {}, rows_body(2000))]
    run = client.create_run({"name": "x", "version_label": "x"})
    assert run.raw == {"id": "r", "status": "awaiting_traces"} and run.items is None
    assert client.start_run("r") is None
