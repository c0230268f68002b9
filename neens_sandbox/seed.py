"""The seed file (YAML, docs/sandbox.md): validate, then load into SQLite.

:func:`load_seed` reads and validates a file into a :class:`Seed` (raising :class:`SeedError`
with the section and entry at fault); :func:`apply_seed` writes it in one transaction. Loading
the same seed again is idempotent: seeded rows are upserted, seeded rows no longer in the
file are removed (rows created at run time, e.g. by scenario suites, have another ``origin``
and are kept), and runs are never touched. API keys are kept in memory only, never stored.

Sections: ``api_keys``, ``pricing``, ``judges``, ``datasets`` (``items:`` = one golden
version ``<id>-v1``; or ``versions: [{id, label?, golden?, items}]``; neither = a dataset
with no version), ``connections`` (``${VAR:-default}`` is expanded in ``url`` and header
values), ``llm``, ``failure_modes``, ``gates`` (items frozen as version ``<gate id>-golden``)
and ``production`` (sessions with ``age`` like ``2d``).
"""

from __future__ import annotations

import os
import re
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from neens_sandbox.db import Database, dumps
from neens_sandbox.judges import JudgeConfigError, validate_judge

SECTIONS = (
    "api_keys", "pricing", "judges", "datasets", "connections", "llm", "failure_modes",
    "gates", "production",
)
_AGE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([smhdw])\s*$")
_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}
# libyaml's loader (same safe constructor, about 2x faster on a large seed) when PyYAML was
# built with it; the pure-Python one otherwise.
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_ENV = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")


class SeedError(ValueError):
    """The seed file is unreadable or malformed; the message names the place."""


def parse_age(text: Any) -> float | None:
    """``"2d"`` -> seconds; None when malformed. Also used for ``prod:<range>``."""
    if isinstance(text, (int, float)) and not isinstance(text, bool):
        return float(text) * 86400
    m = _AGE.match(str(text)) if isinstance(text, str) else None
    return float(m.group(1)) * _UNITS[m.group(2)] if m else None


def expand_env(text: str, environ: dict[str, str] | None = None) -> str:
    env = os.environ if environ is None else environ
    return _ENV.sub(lambda m: env.get(m.group(1)) or (m.group(2) or ""), text)


@dataclass
class Seed:
    api_keys: list[str] = field(default_factory=list)
    pricing: dict[str, dict[str, float]] = field(default_factory=dict)
    judges: list[dict[str, Any]] = field(default_factory=list)
    datasets: list[dict[str, Any]] = field(default_factory=list)
    connections: list[dict[str, Any]] = field(default_factory=list)
    llm: dict[str, Any] | None = None
    failure_modes: list[dict[str, Any]] = field(default_factory=list)
    gates: list[dict[str, Any]] = field(default_factory=list)
    production: list[dict[str, Any]] = field(default_factory=list)


def _list(data: dict, key: str) -> list:
    value = data.get(key)
    if value is None:
        return []
    if not isinstance(value, list):
        raise SeedError(f"seed: '{key}' must be a list")
    return value


def _entry(section: str, raw: Any, idx: int) -> tuple[dict, str]:
    if not isinstance(raw, dict):
        raise SeedError(f"seed: {section}[{idx}] must be a mapping")
    eid = raw.get("id")
    if not isinstance(eid, str) or not eid.strip():
        raise SeedError(f"seed: {section}[{idx}] needs a non-empty string 'id'")
    return raw, eid


def _items(where: str, raw: Any) -> list[dict[str, Any]]:
    if raw is None:
        return []
    if not isinstance(raw, list):
        raise SeedError(f"seed: {where}: 'items' must be a list")
    seen: set[str] = set()
    out = []
    for i, item in enumerate(raw):
        item, iid = _entry(f"{where}.items", item, i)
        if iid in seen:
            raise SeedError(f"seed: {where}: duplicate item id {iid}")
        seen.add(iid)
        if not isinstance(item.get("input"), str):
            raise SeedError(f"seed: {where}: item {iid} needs a text 'input'")
        exp = item.get("expected_output")
        if exp is not None and not isinstance(exp, str):
            raise SeedError(f"seed: {where}: item {iid}: 'expected_output' must be text")
        out.append({"id": iid, "input": item["input"], "expected_output": exp})
    return out


def _judge_refs(where: str, raw: Any, known: set[str]) -> list[str]:
    refs = raw if raw is not None else []
    if not isinstance(refs, list) or not all(isinstance(r, str) for r in refs):
        raise SeedError(f"seed: {where}: 'judges' must be a list of judge ids")
    missing = [r for r in refs if r not in known]
    if missing:
        raise SeedError(f"seed: {where}: unknown judge(s) {', '.join(missing)}")
    return refs


def parse_seed(data: Any) -> Seed:
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise SeedError("seed: the top level must be a mapping")
    unknown = sorted(set(data) - set(SECTIONS))
    if unknown:
        raise SeedError(f"seed: unknown section(s) {', '.join(map(str, unknown))}")
    seed = Seed()
    for i, key in enumerate(_list(data, "api_keys")):
        if not isinstance(key, str) or not key.strip():
            raise SeedError(f"seed: api_keys[{i}] must be a non-empty string")
        seed.api_keys.append(key.strip())
    pricing = data.get("pricing") or {}
    if not isinstance(pricing, dict):
        raise SeedError("seed: 'pricing' must map model names to {input, output}")
    for model, rate in pricing.items():
        ok = isinstance(rate, dict) and all(
            isinstance(rate.get(k), (int, float)) and not isinstance(rate.get(k), bool)
            and rate[k] >= 0 for k in ("input", "output")
        )
        if not ok:
            raise SeedError(f"seed: pricing.{model} needs numbers 'input' and 'output' >= 0")
        seed.pricing[str(model)] = {"input": float(rate["input"]), "output": float(rate["output"])}
    for i, raw in enumerate(_list(data, "judges")):
        try:
            seed.judges.append(validate_judge(raw))
        except JudgeConfigError as exc:
            raise SeedError(f"seed: judges[{i}]: {exc}") from None
    judge_ids = {j["id"] for j in seed.judges}
    if len(judge_ids) != len(seed.judges):
        raise SeedError("seed: duplicate judge id")
    llm = data.get("llm")
    if llm is not None:
        if not isinstance(llm, dict) or not isinstance(llm.get("base_url"), str):
            raise SeedError("seed: 'llm' needs a 'base_url' (OpenAI-compatible endpoint)")
        seed.llm = {k: llm[k] for k in ("base_url", "model", "api_key_env") if k in llm}
    if any(j["kind"] == "llm" for j in seed.judges) and seed.llm is None:
        raise SeedError("seed: an 'llm' judge needs the 'llm' section")
    seen_ds: set[str] = set()
    for i, raw in enumerate(_list(data, "datasets")):
        raw, dsid = _entry("datasets", raw, i)
        if dsid in seen_ds:
            raise SeedError(f"seed: duplicate dataset id {dsid}")
        seen_ds.add(dsid)
        judges = _judge_refs(f"datasets.{dsid}", raw.get("judges"), judge_ids)
        versions = []
        if "items" in raw and "versions" in raw:
            raise SeedError(f"seed: datasets.{dsid}: use 'items' or 'versions', not both")
        if "items" in raw:
            items = _items(f"datasets.{dsid}", raw["items"])
            versions.append({"id": f"{dsid}-v1", "label": "v1", "golden": True, "items": items})
        for j, ver in enumerate(_list(raw, "versions")):
            ver, vid = _entry(f"datasets.{dsid}.versions", ver, j)
            items = _items(f"datasets.{dsid}.versions.{vid}", ver.get("items"))
            versions.append({
                "id": vid, "label": str(ver.get("label") or vid),
                "golden": bool(ver.get("golden", False)), "items": items,
            })
        if sum(v["golden"] for v in versions) > 1:
            raise SeedError(f"seed: datasets.{dsid}: more than one golden version")
        seed.datasets.append({
            "id": dsid, "name": str(raw.get("name") or dsid), "judges": judges,
            "versions": versions,
        })
    for i, raw in enumerate(_list(data, "connections")):
        raw, cid = _entry("connections", raw, i)
        url = raw.get("url")
        if not isinstance(url, str) or not url.startswith(("http://", "https://", "${")):
            raise SeedError(f"seed: connections.{cid} needs an http(s) 'url'")
        headers = raw.get("headers") or {}
        if not isinstance(headers, dict):
            raise SeedError(f"seed: connections.{cid}: 'headers' must be a mapping")
        timeout = raw.get("timeout_s", 60)
        if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or timeout <= 0:
            raise SeedError(f"seed: connections.{cid}: 'timeout_s' must be a positive number")
        seed.connections.append({
            "id": cid, "url": url, "model": raw.get("model"), "kind": "agent_http",
            "headers": {str(k): str(v) for k, v in headers.items()}, "timeout_s": timeout,
        })
    fm_names: dict[str, str] = {}
    for i, raw in enumerate(_list(data, "failure_modes")):
        raw, fid = _entry("failure_modes", raw, i)
        name = str(raw.get("name") or fid)
        fm_names[fid] = name
        exemplars = []
        for j, ex in enumerate(_list(raw, "exemplars")):
            if not isinstance(ex, dict) or not isinstance(ex.get("input"), str):
                raise SeedError(f"seed: failure_modes.{fid}.exemplars[{j}] needs text 'input'")
            exp = ex.get("expected_output") or (
                f"A correct response must not exhibit the '{name}' failure mode."
            )
            exemplars.append({"input": ex["input"], "expected_output": str(exp)})
        seed.failure_modes.append({
            "id": fid, "name": name, "exemplars": exemplars,
            "judges": _judge_refs(f"failure_modes.{fid}", raw.get("judges"), judge_ids),
            "description": raw.get("description"),
        })
    for i, raw in enumerate(_list(data, "gates")):
        raw, gid = _entry("gates", raw, i)
        status = raw.get("status", "active")
        if status not in ("active", "paused"):
            raise SeedError(f"seed: gates.{gid}: status must be active or paused")
        threshold = raw.get("threshold", 0.7)
        if isinstance(threshold, bool) or not isinstance(threshold, (int, float)) or not (
            0 <= threshold <= 1
        ):
            raise SeedError(f"seed: gates.{gid}: threshold must be a number in [0, 1]")
        fm = raw.get("failure_mode")
        if fm is not None and fm not in fm_names:
            raise SeedError(f"seed: gates.{gid}: unknown failure mode {fm}")
        judges = _judge_refs(f"gates.{gid}", raw.get("judges"), judge_ids)
        if not judges:
            raise SeedError(f"seed: gates.{gid} needs at least one judge")
        seed.gates.append({
            "id": gid, "name": str(raw.get("name") or gid), "status": status,
            "threshold": float(threshold), "judges": judges, "failure_mode": fm,
            "failure_mode_name": fm_names.get(fm) if fm else None,
            "items": _items(f"gates.{gid}", raw.get("items")),
        })
    for i, raw in enumerate(_list(data, "production")):
        if not isinstance(raw, dict) or not isinstance(raw.get("input"), str):
            raise SeedError(f"seed: production[{i}] needs text 'input'")
        age = parse_age(raw.get("age", "1d"))
        if age is None:
            raise SeedError(f"seed: production[{i}]: 'age' must look like 2d, 12h or 30m")
        passed = raw.get("passed")
        if passed is not None and not isinstance(passed, bool):
            raise SeedError(f"seed: production[{i}]: 'passed' must be true or false")
        seed.production.append({**raw, "age_s": age})
    return seed


def load_seed(path: str | Path) -> Seed:
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise SeedError(f"cannot read seed file {path}: {exc}") from None
    try:
        data = yaml.load(text, Loader=_LOADER)
    except yaml.YAMLError as exc:
        first = " ".join(str(exc).split())[:200]
        raise SeedError(f"seed file {path} is not valid YAML: {first}") from None
    return parse_seed(data)


def apply_seed(db: Database, seed: Seed) -> None:
    """Write the seed (idempotent). Runs and run-time rows are left alone."""
    now = time.time()
    with db.tx() as con:
        for table in ("pricing", "judges", "connections", "failure_modes", "eval_gates",
                      "production"):
            con.execute(f"DELETE FROM {table}")
        con.execute("DELETE FROM settings WHERE key = 'llm'")
        old = [r[0] for r in con.execute("SELECT id FROM dataset_versions WHERE origin='seed'")]
        for vid in old:
            con.execute("DELETE FROM dataset_items WHERE version_id = ?", (vid,))
        con.execute("DELETE FROM dataset_versions WHERE origin = 'seed'")
        con.execute("DELETE FROM datasets WHERE origin = 'seed'")
        for model, rate in seed.pricing.items():
            con.execute("INSERT INTO pricing VALUES (?,?,?)",
                        (model, rate["input"], rate["output"]))
        for judge in seed.judges:
            con.execute("INSERT INTO judges VALUES (?,?)", (judge["id"], dumps(judge)))
        for ds in seed.datasets:
            golden = next((v["id"] for v in ds["versions"] if v["golden"]), None)
            con.execute(
                "INSERT OR REPLACE INTO datasets (id, name, judges, golden_version_id, origin,"
                " body) VALUES (?,?,?,?,'seed',?)",
                (ds["id"], ds["name"], dumps(ds["judges"]), golden, dumps({})),
            )
            for ver in ds["versions"]:
                _insert_version(con, ver["id"], ds["id"], ver["label"], ver["golden"],
                                ver["items"], now)
        for conn in seed.connections:
            con.execute("INSERT INTO connections VALUES (?,?)", (conn["id"], dumps(conn)))
        if seed.llm:
            con.execute("INSERT INTO settings VALUES ('llm', ?)", (dumps(seed.llm),))
        for fm in seed.failure_modes:
            con.execute("INSERT INTO failure_modes VALUES (?,?,?)",
                        (fm["id"], fm["name"], dumps(fm)))
        for gate in seed.gates:
            vid = f"{gate['id']}-golden"
            _insert_version(con, vid, None, "golden", True, gate["items"], now)
            con.execute(
                "INSERT INTO eval_gates VALUES (?,?,?,?,?,?,?,?)",
                (gate["id"], gate["name"], gate["status"], gate["threshold"],
                 dumps(gate["judges"]), gate["failure_mode"], vid, dumps(gate)),
            )
        for prod in seed.production:
            passed = prod.get("passed")
            score = prod.get("score")
            con.execute(
                "INSERT INTO production (input, passed, score, age_s, body) VALUES (?,?,?,?,?)",
                (prod["input"], None if passed is None else int(passed),
                 score if isinstance(score, (int, float)) else None, prod["age_s"], dumps(prod)),
            )
    db.forget()  # the pricing, judges and LLM setting kept by Database.memo


def _insert_version(con: Any, vid: str, dsid: str | None, label: str, golden: bool,
                    items: list[dict[str, Any]], now: float, origin: str = "seed") -> None:
    con.execute("DELETE FROM dataset_items WHERE version_id = ?", (vid,))
    con.execute(
        "INSERT OR REPLACE INTO dataset_versions (id, dataset_id, label, golden, origin,"
        " created_at) VALUES (?,?,?,?,?,?)",
        (vid, dsid, label, int(golden), origin, now),
    )
    for pos, item in enumerate(items):
        con.execute(
            "INSERT INTO dataset_items (version_id, position, item_id, input, expected_output,"
            " body) VALUES (?,?,?,?,?,?)",
            (vid, pos, item["id"], item["input"], item.get("expected_output"), dumps(item)),
        )


def create_dataset_version(
    db: Database, *, version_id: str, dataset_id: str | None, items: list[dict[str, Any]],
    label: str = "v1", golden: bool = True, origin: str = "runtime",
) -> str:
    """Materialise an immutable dataset version at run time (scenario suites, tests).

    ``items``: ``[{id, input, expected_output?}]``. Seeding never removes it. When
    ``golden`` and ``dataset_id`` is set, the dataset's golden version is moved to it.
    """
    with db.tx() as con:
        _insert_version(con, version_id, dataset_id, label, golden, items, time.time(), origin)
        if golden and dataset_id:
            con.execute("UPDATE dataset_versions SET golden = 0 WHERE dataset_id = ? AND id != ?",
                        (dataset_id, version_id))
            con.execute("UPDATE datasets SET golden_version_id = ? WHERE id = ?",
                        (version_id, dataset_id))
    return version_id
