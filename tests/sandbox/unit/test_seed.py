from __future__ import annotations

import pytest
import yaml

from neens_sandbox.db import Database
from neens_sandbox.seed import (
    SeedError,
    apply_seed,
    create_dataset_version,
    expand_env,
    load_seed,
    parse_age,
    parse_seed,
)
from tests.helpers import SEED


def _db(tmp_path) -> Database:
    from neens_sandbox.app import load_routes

    load_routes()  # registers every table
    return Database.open(tmp_path / "s.db")


def test_example_seed_loads_every_section():
    seed = load_seed(SEED)
    assert seed.api_keys == ["nk_live_sandbox"]
    assert seed.pricing["gpt-4o-mini"] == {"input": 0.15, "output": 0.60}
    assert {j["id"] for j in seed.judges} >= {"j_answer", "j_safe"}
    ds = {d["id"]: d for d in seed.datasets}
    assert [v["golden"] for v in ds["ds_refunds"]["versions"]] == [False, True]
    assert len(ds["ds_refunds"]["versions"][1]["items"]) == 6
    assert not any(v["golden"] for v in ds["ds_drafts"]["versions"])
    assert ds["ds_empty"]["versions"][0]["items"] == []
    assert {c["id"] for c in seed.connections} == {"conn_local", "conn_down"}
    assert {g["status"] for g in seed.gates} == {"active", "paused"}
    assert seed.failure_modes[1]["exemplars"][0]["expected_output"].startswith(
        "A correct response must not exhibit")
    assert seed.production[0]["age_s"] == 2 * 86400


def test_apply_is_idempotent_and_keeps_runtime_versions(tmp_path):
    db = _db(tmp_path)
    seed = load_seed(SEED)
    apply_seed(db, seed)
    create_dataset_version(db, version_id="suite-v1", dataset_id=None,
                           items=[{"id": "s1", "input": "hi"}])
    counts = {t: db.one(f"SELECT COUNT(*) AS n FROM {t}")["n"] for t in (
        "datasets", "dataset_versions", "dataset_items", "eval_gates", "production", "judges")}
    apply_seed(db, seed)
    again = {t: db.one(f"SELECT COUNT(*) AS n FROM {t}")["n"] for t in counts}
    assert again == counts
    assert db.one("SELECT golden_version_id FROM datasets WHERE id='ds_refunds'")[0] == (
        "dsv_refunds_2")
    assert db.one("SELECT golden_version_id FROM datasets WHERE id='ds_drafts'")[0] is None
    assert db.one("SELECT COUNT(*) FROM dataset_items WHERE version_id='suite-v1'")[0] == 1
    db.close()


@pytest.mark.parametrize("doc, needle", [
    ("[1]", "top level"),
    ("colours: []", "unknown section"),
    ("api_keys: ['']", "api_keys[0]"),
    ("pricing: {m: {input: -1, output: 1}}", "pricing.m"),
    ("judges: [{id: j, kind: bogus}]", "judges[0]"),
    ("datasets: [{id: d, judges: [nope]}]", "unknown judge"),
    ("datasets: [{id: d, items: [{id: a}]}]", "text 'input'"),
    ("datasets: [{id: d, items: [{id: a, input: x}, {id: a, input: y}]}]", "duplicate item"),
    ("datasets: [{id: d, items: [], versions: []}]", "not both"),
    ("datasets: [{id: d, versions: [{id: a, golden: true}, {id: b, golden: true}]}]",
     "more than one golden"),
    ("connections: [{id: c, url: ftp://x}]", "http(s)"),
    ("gates: [{id: g, status: maybe, judges: []}]", "active or paused"),
    ("judges: [{id: j, kind: contains}]\ngates: [{id: g, threshold: 2, judges: [j]}]",
     "threshold"),
    ("gates: [{id: g, judges: []}]", "at least one judge"),
    ("production: [{input: x, age: soon}]", "'age'"),
    ("judges: [{id: j, kind: llm}]", "'llm' section"),
])
def test_malformed_seeds_name_the_place(doc, needle):
    with pytest.raises(SeedError, match=needle.replace("(", r"\(").replace(")", r"\)")
                       .replace("[", r"\[").replace("]", r"\]")):
        parse_seed(yaml.safe_load(doc))


def test_unreadable_and_invalid_yaml(tmp_path):
    with pytest.raises(SeedError, match="cannot read"):
        load_seed(tmp_path / "missing.yaml")
    bad = tmp_path / "bad.yaml"
    bad.write_text("a: [", encoding="utf-8")
    with pytest.raises(SeedError, match="not valid YAML"):
        load_seed(bad)


def test_ages_and_env_expansion():
    assert parse_age("2d") == 172800 and parse_age("30m") == 1800 and parse_age("1w") == 604800
    assert parse_age("") is None and parse_age("7") is None
    assert expand_env("http://h:${P:-9000}/a", {}) == "http://h:9000/a"
    assert expand_env("http://h:${P:-9000}/a", {"P": "81"}) == "http://h:81/a"
