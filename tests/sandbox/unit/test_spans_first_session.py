"""An item's first spans are scored from the decoded request (``spans.first_session``), not
read back from the database: the session must be the one ``spans.item_session`` reads back,
for every recorded framework payload, with span events, a span sent twice and any order."""

from __future__ import annotations

import copy
import json
import random
from pathlib import Path

import pytest

from neens_sandbox import seed, spans
from neens_sandbox.app import load_routes
from neens_sandbox.context import Context, Options
from neens_sandbox.db import Database

DATA = Path(__file__).parent / "data" / "frameworks"
NAMES = sorted(p.stem for p in DATA.glob("*.json"))


def _ctx(tmp_path: Path, pricing: dict) -> Context:
    load_routes()
    db = Database.open(tmp_path / "s.db")
    seed.apply_seed(db, seed.parse_seed({"pricing": pricing}))
    return Context(db=db, options=Options(), quiet=True)


def _request(name: str, rng: random.Random) -> list[dict]:
    """The payload's spans as the OTLP decoder hands them over: span events attached (the
    recorded events that name a span), shuffled, one span sent twice."""
    data = json.loads((DATA / f"{name}.json").read_text())
    by_span: dict[str, list[dict]] = {}
    for event in data["events"]:
        by_span.setdefault(event.get("spanId") or "", []).append(
            {"name": event["name"], "timeNs": event["timeNs"],
             "attributes": event.get("attributes") or {}})
    decoded = []
    for span in data["spans"]:
        span = copy.deepcopy(span)
        span.setdefault("scope", "")
        span["events"] = by_span.get(span["spanId"], [])
        decoded.append(span)
    rng.shuffle(decoded)
    if decoded:
        again = copy.deepcopy(decoded[0])
        again["attributes"]["resent"] = True  # the last copy is the one kept
        decoded.append(again)
    return decoded


@pytest.mark.parametrize("name", NAMES)
def test_the_decoded_spans_give_the_session_read_back(tmp_path: Path, name: str) -> None:
    ctx = _ctx(tmp_path, {"gpt-4o-mini": {"input": 0.15, "output": 0.6},
                          "claude-haiku-4-5": {"input": 1.0, "output": 5.0}})
    request = _request(name, random.Random(name))
    with ctx.db.tx() as con:
        spans.store_spans(con, "r", "i", request, 1.0)
    stored = spans.item_session(ctx, "r", "i")
    assert stored is not None and stored["spanCount"] > 0
    assert spans.first_session(ctx, request) == stored


def test_a_new_seed_reprices_what_is_scored_next(tmp_path: Path) -> None:
    """The pricing is kept in memory between requests, and dropped when the seed is applied."""
    ctx = _ctx(tmp_path, {"m": {"input": 1.0, "output": 1.0}})
    span = {"traceId": "a" * 32, "spanId": "b" * 16, "parentSpanId": "", "name": "chat",
            "startNs": 1, "endNs": 2, "scope": "", "resource": {}, "events": [],
            "attributes": {"gen_ai.operation.name": "chat", "gen_ai.request.model": "m",
                           "gen_ai.usage.input_tokens": 1000000,
                           "gen_ai.usage.output_tokens": 0}}
    assert spans.first_session(ctx, [span])["costUsd"] == 1.0
    seed.apply_seed(ctx.db, seed.parse_seed({"pricing": {"m": {"input": 3.0, "output": 1.0}}}))
    assert spans.first_session(ctx, [span])["costUsd"] == 3.0
