"""--chaos: every fault kind is injected, never on /v1/traces, and a fault has no effect."""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor

import requests

from tests.helpers import db_count, start_sandbox


def _probe(url: str, headers: dict[str, str]) -> str:
    started = time.monotonic()
    try:
        resp = requests.get(url + "/flywheel/gates/ci", headers=headers, timeout=20)
    except requests.ConnectionError:
        return "drop"
    took = time.monotonic() - started
    if resp.status_code == 500:
        assert "chaos" in resp.json()["detail"]
        return "500"
    if resp.status_code == 429:
        assert resp.headers["Retry-After"] == "1"
        return "429"
    assert resp.status_code == 200, resp.text
    return "stall" if took >= 1.9 else "ok"


def test_every_fault_kind_and_never_on_traces(tmp_path):
    sb = start_sandbox(tmp_path, extra=["--chaos", "1", "--chaos-seed", "7"])
    try:
        with ThreadPoolExecutor(8) as pool:
            kinds = list(pool.map(lambda _: _probe(sb.url, sb.headers), range(40)))
        assert set(kinds) == {"500", "429", "drop", "stall"}, kinds
        for _ in range(20):
            resp = requests.post(sb.url + "/v1/traces", data=b"{}", timeout=10, headers={
                **sb.headers, "Content-Type": "application/json"})
            assert resp.status_code == 200
        assert sb.proc.poll() is None  # still serving
    finally:
        sb.stop()


def test_faulted_requests_have_no_side_effects(tmp_path):
    sb = start_sandbox(tmp_path, extra=["--chaos", "1", "--chaos-kinds", "500,429,drop"])
    try:
        body = {"name": "x", "version_label": "v1", "dataset_id": "ds_refunds"}
        for _ in range(12):
            try:
                resp = sb.post("/preprod-evals", json=body)
            except requests.ConnectionError:
                continue
            assert resp.status_code in (500, 429)
        assert db_count(sb, "runs") == 0
    finally:
        sb.stop()


def test_partial_chaos_rate_lets_most_requests_through(tmp_path):
    sb = start_sandbox(tmp_path, extra=["--chaos", "0.3", "--chaos-seed", "1",
                                        "--chaos-kinds", "500,429"])
    try:
        codes = [requests.get(sb.url + "/flywheel/gates/ci", headers=sb.headers,
                              timeout=10).status_code for _ in range(40)]
        assert 0 < codes.count(200) < 40 and set(codes) <= {200, 500, 429}
    finally:
        sb.stop()
