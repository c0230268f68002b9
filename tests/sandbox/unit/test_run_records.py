"""A run's items are decoded once and reused while their rows are unchanged; the seed is read
with libyaml's safe loader when PyYAML has it."""

from __future__ import annotations

from pathlib import Path

import yaml

from neens_sandbox import run_records, runs_api, seed
from neens_sandbox.app import load_routes
from neens_sandbox.context import Context, Options
from neens_sandbox.db import Database


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
