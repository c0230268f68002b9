"""A run's items are decoded once (as they are scored, when the OTLP receiver scores them) and
reused while their rows are unchanged; a finished run's figures are kept as a fresh read
computes them, item views made only when asked; the seed is read with libyaml's safe loader
when PyYAML has it."""

from __future__ import annotations

import json
from pathlib import Path

import yaml

from neens_sandbox import run_records, runs_api, seed
from neens_sandbox.app import load_routes
from neens_sandbox.context import Context, Options
from neens_sandbox.db import Database
from neens_sandbox.http import Request
from neens_sandbox.routes import traces


def _ctx(tmp_path: Path, n: int) -> tuple[Context, str]:
    load_routes()
    db = Database.open(tmp_path / "s.db")
    seed.apply_seed(db, seed.parse_seed({
        "judges": [{"id": "j", "metric": "correctness", "kind": "contains"}],
        "datasets": [{"id": "ds", "name": "d", "judges": ["j"], "items": [
            {"id": f"i{k}", "input": f"q{k}", "expected_output": f"a{k}"} for k in range(n)]}]}))
    ctx = Context(db=db, options=Options(grace=60.0), quiet=True)
    return ctx, runs_api.create_run(ctx, {"name": "r", "version_label": "v", "dataset_id": "ds"})


def test_unchanged_items_are_not_decoded_again(tmp_path: Path, monkeypatch) -> None:
    ctx, run_id = _ctx(tmp_path, 5)
    runs_api.load_run(ctx, run_id)
    decoded: list[str] = []
    real = run_records.decode_item

    def counting(row):
        decoded.append(row["item_id"])
        return real(row)

    monkeypatch.setattr(run_records, "decode_item", counting)
    runs_api.load_run(ctx, run_id)
    assert decoded == []
    runs_api.record_session(ctx, run_id, "i3", {"output": "a3 done"})
    _, items = runs_api.load_run(ctx, run_id)
    assert decoded == ["i3"]  # only the row that changed
    by_id = {i["item_id"]: i for i in items}
    assert by_id["i3"]["passed"] is True and by_id["i3"]["session"] == {"output": "a3 done"}
    assert by_id["i2"]["passed"] is None and by_id["i2"]["session"] is None
    items[0]["passed"] = "mutated"  # callers get copies: the cache is not theirs to change
    assert runs_api.load_run(ctx, run_id)[1][0]["passed"] is None


def test_start_answers_the_run_without_items_unless_asked(tmp_path: Path) -> None:
    ctx, run_id = _ctx(tmp_path, 3)
    started = runs_api.start_run(ctx, run_id)
    assert started["status"] == "running" and started["total"] == 3 and "items" not in started
    again = runs_api.start_run(ctx, run_id, items=True)
    assert [i["datasetVersionItemId"] for i in again["items"]] == ["i0", "i1", "i2"]


def test_the_seed_is_read_with_libyaml_when_present(tmp_path: Path) -> None:
    assert yaml.__with_libyaml__  # PyYAML wheels ship it; the sandbox extra needs nothing else
    assert seed._LOADER is yaml.CSafeLoader
    path = tmp_path / "seed.yaml"
    path.write_text("api_keys: [k]\ndatasets:\n  - id: ds\n    name: d\n    items:\n"
                    "      - {id: a, input: '1: x', expected_output: !!str 2}\n")
    loaded = seed.load_seed(path)
    assert "'1: x'" in repr(loaded.datasets) and "'2'" in repr(loaded.datasets)
    bad = tmp_path / "bad.yaml"
    bad.write_text("datasets: [\n")
    try:
        seed.load_seed(bad)
    except seed.SeedError as exc:
        assert "is not valid YAML" in str(exc)
    else:
        raise AssertionError("a broken seed was accepted")


def _span_body(run_id: str, item_id: str, output: str) -> bytes:
    attrs = [{"key": k, "value": {"stringValue": v}} for k, v in (
        ("neens.eval_run_id", run_id), ("neens.dataset_item_id", item_id))]
    span = {"traceId": "ab" * 16, "spanId": "cd" * 8, "name": "invoke_agent",
            "startTimeUnixNano": "1000000", "endTimeUnixNano": "2000000",
            "attributes": [{"key": "output.value", "value": {"stringValue": output}}]}
    return json.dumps({"resourceSpans": [{"resource": {"attributes": attrs}, "scopeSpans": [
        {"scope": {"name": "t"}, "spans": [span]}]}]}).encode()


def test_items_scored_on_ingest_are_decoded_as_they_are_scored(tmp_path: Path,
                                                               monkeypatch) -> None:
    ctx, run_id = _ctx(tmp_path, 5)
    runs_api.load_run(ctx, run_id)
    answer = traces.ingest(Request("POST", "/v1/traces", {}, {
        "content-type": "application/json"}, _span_body(run_id, "i2", "a2 here"), ctx))
    assert answer.status == 200
    decoded: list[str] = []
    real = run_records.decode_item
    monkeypatch.setattr(run_records, "decode_item",
                        lambda row: decoded.append(row["item_id"]) or real(row))
    _, items = runs_api.load_run(ctx, run_id)
    assert decoded == []  # the receiver handed it over decoded
    row = ctx.db.one("SELECT * FROM run_items WHERE run_id = ? AND item_id = 'i2'", (run_id,))
    assert items[2] == real(row)  # the same as decoding the stored row
    assert items[2]["passed"] is True and items[2]["session"]["output"] == "a2 here"


def test_the_finished_runs_figures_are_those_a_fresh_read_computes(tmp_path: Path) -> None:
    ctx, run_id = _ctx(tmp_path, 4)
    runs_api.record_session(ctx, run_id, "i0", {"output": "a0", "costUsd": 0.002})
    runs_api.record_session(ctx, run_id, "i1", {"output": "wrong", "latencyMs": 12.0})
    runs_api.start_run(ctx, run_id)
    runs_api.finish_run(ctx, run_id)  # i2, i3: no trace
    kept = runs_api.figures(ctx, run_id)[1]
    ctx.extras["run_figures"].clear()
    fresh = runs_api.figures(ctx, run_id)[1]
    assert kept == fresh
    assert fresh["aggregate"]["passed"] == 1 and fresh["aggregate"]["errored"] == 2


def test_a_poll_without_items_makes_no_item_views(tmp_path: Path, monkeypatch) -> None:
    ctx, run_id = _ctx(tmp_path, 3)
    runs_api.start_run(ctx, run_id)
    runs_api.finish_run(ctx, run_id)
    made: list[str] = []
    real = runs_api._item_view
    monkeypatch.setattr(runs_api, "_item_view",
                        lambda item: made.append(item["item_id"]) or real(item))
    view = runs_api.run_view(ctx, run_id, items=False)
    assert view["status"] == "completed" and "items" not in view and made == []
    assert len(runs_api.run_view(ctx, run_id)["items"]) == 3 and len(made) == 3
    runs_api.run_view(ctx, run_id)
    assert len(made) == 3  # made once, then kept with the terminal figures
