"""Sharding: stable balanced assignment, flag checks, and the create / shard / finish flows
with a fake client at the edge (agents are real processes)."""

from __future__ import annotations

import io
import itertools
import random
import sys

import pytest

from neens_action.api.answers import Gate, ItemRow, Run
from neens_action.api.json_stream import keep
from neens_action.errors import NeensApiError, UsageError
from neens_action.flows import shard
from neens_action.items import FrozenItem, frozen_item
from neens_action.report.build.shard import build_shard_report, decide_step, shard_document
from neens_action.settings import shard as settings_shard
from neens_action.settings.run import EvalRunSettings
from neens_action.world import World
from tests.fakes.clock import FakeClock

PY = sys.executable


def world() -> World:
    return World(environ={"PATH": "/usr/bin:/bin"}, err=io.StringIO(), out=io.StringIO(),
                 clock=FakeClock())


def rows(n: int) -> list[dict[str, str]]:
    return [{"item_id": f"it_{i}", "input": f"q{i}"} for i in range(n)]


def frozen(n: int) -> list[FrozenItem]:
    return [FrozenItem(f"it_{i}", f"q{i}") for i in range(n)]


# -- assignment ----------------------------------------------------------------------------------


@pytest.mark.parametrize(("n", "total"), [(0, 3), (1, 4), (6, 4), (7, 1), (100, 7), (1000, 8)])
def test_shards_are_disjoint_cover_everything_and_balanced(n, total):
    items = frozen(n)
    shares = [shard.shard_items(items, i, total) for i in range(1, total + 1)]
    ids = [r.item_id for share in shares for r in share]
    assert sorted(ids) == sorted(r.item_id for r in items)  # each item exactly once
    sizes = [len(s) for s in shares]
    assert max(sizes) - min(sizes) <= 1, sizes


def test_assignment_ignores_server_order_and_keeps_replay_order():
    items = frozen(50)
    shuffled = items[:]
    random.Random(3).shuffle(shuffled)
    for i in range(1, 5):
        a = shard.shard_items(items, i, 4)
        b = shard.shard_items(shuffled, i, 4)
        assert {r.item_id for r in a} == {r.item_id for r in b}
        positions = [shuffled.index(r) for r in b]
        assert positions == sorted(positions)  # the server's replay order is kept


def test_assignment_is_by_item_id_not_by_position():
    first = [r.item_id for r in shard.shard_items(frozen(10), 2, 3)]
    assert first == [r.item_id for r in shard.shard_items(frozen(10), 2, 3)]
    assert first != [r.item_id for r in frozen(10)[1::3]]  # not simply every third row


@pytest.mark.parametrize("text", ["", "2", "0/4", "5/4", "-1/4", "a/b", "1/0", "1/1001",
                                  "1/2/3", None])
def test_bad_shard_specs_are_usage_errors(text):
    with pytest.raises(UsageError) as exc:
        settings_shard.parse_shard(text)
    assert "--shard" in str(exc.value)


def test_shard_spec_parses():
    assert settings_shard.parse_shard(" 2 / 4 ") == (2, 4)
    assert settings_shard.parse_shard("1/1") == (1, 1)


# -- flags ---------------------------------------------------------------------------------------


def settings(**kw) -> EvalRunSettings:
    base = {"base_url": "http://neens.test", "command": ["agent"]}
    base.update(kw)
    s = EvalRunSettings(**{k: v for k, v in base.items()
                           if k not in ("shard", "no_start", "finish", "only_create")})
    for k in ("shard", "no_start", "finish", "only_create"):
        if k in kw:
            setattr(s, k, kw[k])
    return s


@pytest.mark.parametrize(("kw", "needle"), [
    ({"run_id": "r", "finish": True}, "drop the command"),
    ({"finish": True, "command": []}, "--finish needs --run-id"),
    ({"run_id": "r", "finish": True, "shard": "1/2", "command": []}, "cannot be combined"),
    ({"run_id": "r", "finish": True, "no_start": True, "command": []}, "cannot be combined"),
    ({"shard": "1/2"}, "--shard needs --run-id"),
    ({"only_create": True, "command": []}, "--only-create needs --create"),
    ({"only_create": True, "create": True, "command": []} | {"dataset": "d"},
     None),
    ({"only_create": True, "create": True, "dataset": "d", "version_label": "v"},
     "drop the command"),
    ({"only_create": True, "run_id": "r", "command": []}, "cannot be combined with --run-id"),
    ({"only_create": True, "create": True, "shard": "1/2", "command": []}, "cannot be combined"),
])
def test_flag_combinations(kw, needle):
    s = settings(**kw)
    if needle is None:
        settings_shard.check_flags(s)
        return
    with pytest.raises(UsageError) as exc:
        settings_shard.check_flags(s)
    assert needle in str(exc.value)


def test_shard_implies_no_start():
    s = settings(run_id="r", shard="3/4")
    settings_shard.check_flags(s)
    assert (s.shard_index, s.shard_total, s.no_start) == (3, 4, True)


# -- flows with a fake client --------------------------------------------------------------------


class FakeClient:
    base_url = "http://neens.test"

    def __init__(self, run: dict, items: list[dict] | None = None, runs: list[dict] | None = None,
                 gate: dict | None = None) -> None:
        self.run = run
        self.runs = list(runs or [])
        self.items = items or []
        self.gate = gate or {"passed": True, "passRate": 1.0, "regressions": 0, "reasons": []}
        self.calls: list[str] = []

    def get_run(self, run_id):
        self.calls.append("get_run")
        if self.runs:
            self.run = self.runs.pop(0)
        return Run.decode(self.run)

    def get_items(self, run_id, row=keep, restart=None):
        self.calls.append("get_items")
        return [kept for kept in map(row, self.items) if kept is not None]

    def start_run(self, run_id):
        self.calls.append("start_run")

    def get_gate(self, run_id):
        self.calls.append("get_gate")
        return Gate.decode(self.gate)

    def cancel_run(self, run_id, quick=False):
        self.calls.append("cancel_run")


def run_item(item_id: str, captured: bool) -> dict:
    return {"datasetVersionItemId": item_id, "passed": True if captured else None,
            "output": "x" if captured else None, "error": None}


def test_shard_replays_only_its_share_and_never_starts(tmp_path):
    out = tmp_path / "seen"
    items = rows(9)
    client = FakeClient({"id": "r1", "status": "awaiting_traces", "versionLabel": "v1"}, items)
    s = settings(run_id="r1", shard="2/3",
                 command=["sh", "-c", f'echo "$NEENS_DATASET_ITEM_ID" >> {out}'])
    settings_shard.check_flags(s)
    w = world()
    outcome = shard.run_shard(s, client=client, world=w)
    assert outcome.error is None
    assert "start_run" not in client.calls
    seen = out.read_text().split()
    mine = shard.shard_items([frozen_item(r) for r in items], 2, 3)
    assert sorted(seen) == sorted(r.item_id for r in mine)
    assert decide_step(outcome) == (0, "replayed")
    report = build_shard_report(outcome)
    doc = shard_document(outcome, report)
    assert doc["shard"] == {"index": 2, "total": 3, "items": 3, "totalItems": 9}
    assert doc["next"]["finish"] == "neens eval run --run-id r1 --finish"
    assert "--finish" in w.err.getvalue()
    assert not outcome.rerun and not report.hints  # nothing to re-run


def test_shard_where_every_agent_fails_is_a_run_error():
    client = FakeClient({"id": "r1", "status": "awaiting_traces", "versionLabel": "v"}, rows(4))
    s = settings(run_id="r1", shard="1/2", command=[PY, "-c", "raise SystemExit(3)"])
    settings_shard.check_flags(s)
    outcome = shard.run_shard(s, client=client, world=world())
    assert "every agent invocation of shard 1/2 failed (first: rc=3)" in outcome.error
    assert decide_step(outcome) == (2, "errored")
    # the report names the leg to re-run and how, on every surface
    report = build_shard_report(outcome)
    rerun = f"neens eval run --run-id r1 --shard 1/2 -- {PY} -c 'raise SystemExit(3)'"
    assert ("re-run", f"shard 1/2: {rerun}") in report.facts
    assert report.headline == "Replaying shard 1/2 failed; re-run shard 1/2."
    assert report.hints[0].startswith("Re-run shard 1/2 once the agent is fixed: re-run this "
                                      "job") and f"`{rerun}`" in report.hints[0]
    assert "`neens eval run --run-id r1 --finish`" in report.hints[1]
    from neens_action.report.render.markdown import render_summary
    from neens_action.report.render.text import render

    md = render_summary(report)
    assert "> **How to fix**" in md and "shard 1/2" in md
    assert "re-run:" in render(report) and "--shard 1/2" in render(report)


def test_shard_refuses_a_finished_run():
    client = FakeClient({"id": "r1", "status": "completed"}, rows(2))
    s = settings(run_id="r1", shard="1/2")
    settings_shard.check_flags(s)
    outcome = shard.run_shard(s, client=client, world=world())
    assert "already completed" in outcome.error
    assert "get_items" not in client.calls


def test_empty_share_is_not_an_error():
    client = FakeClient({"id": "r1", "status": "awaiting_traces", "versionLabel": "v"}, rows(1))
    s = settings(run_id="r1", shard="2/2")
    settings_shard.check_flags(s)
    w = world()
    outcome = shard.run_shard(s, client=client, world=w)
    assert outcome.error is None and outcome.invocations == []
    assert "Nothing to replay in shard 2/2" in w.err.getvalue()


def test_finish_refuses_naming_the_items_without_a_trace():
    run = {"id": "r1", "status": "awaiting_traces", "total": 3,
           "items": [run_item("a", True), run_item("b", False), run_item("c", False)]}
    client = FakeClient(run)
    s = settings(run_id="r1", finish=True, command=[])
    outcome = shard.run_finish(s, client=client, world=world())
    assert outcome.error.startswith("2 of 3 item(s) of run r1 have no trace")
    assert ": b, c." in outcome.error
    assert outcome.missing_items == ["b", "c"]
    assert "start_run" not in client.calls


def test_finish_waits_briefly_for_late_traces_then_starts_and_gates():
    late = {"id": "r1", "status": "awaiting_traces",
            "items": [run_item("a", True), run_item("b", False)]}
    ready = {"id": "r1", "status": "awaiting_traces",
             "items": [run_item("a", True), {"datasetVersionItemId": "b", "captured": True}]}
    done = {"id": "r1", "status": "completed", "completed": 2, "total": 2}
    client = FakeClient(late, runs=[late, ready, done])
    s = settings(run_id="r1", finish=True, command=[], poll_interval=1.0)
    outcome = shard.run_finish(s, client=client, world=world())
    assert outcome.error is None, outcome.error
    assert client.calls.count("start_run") == 1
    assert outcome.gate.passed is True and outcome.run.status == "completed"


def test_finish_of_an_already_finished_run_just_gates():
    client = FakeClient({"id": "r1", "status": "completed_with_regressions"},
                        gate={"passed": False, "reasons": ["1 regression"]})
    s = settings(run_id="r1", finish=True, command=[])
    outcome = shard.run_finish(s, client=client, world=world())
    assert "start_run" not in client.calls and outcome.gate.passed is False


def test_finish_api_error_is_recorded_not_raised():
    class Broken(FakeClient):
        def get_run(self, run_id):
            raise NeensApiError("GET /preprod-evals/r1 failed: HTTP 404: no such run",
                                status=404)

    outcome = shard.run_finish(settings(run_id="r1", finish=True, command=[]),
                               client=Broken({}), world=world())
    assert "HTTP 404" in outcome.error


@pytest.mark.parametrize(("row", "captured"), [
    ({"captured": False, "passed": True}, False),
    ({"captured": True}, True),
    ({"passed": False}, True),
    ({"passed": None, "output": None, "latencyMs": None, "scores": {}}, False),
    ({"passed": None, "latencyMs": 12}, True),
    ({"passed": None, "error": "no trace captured"}, False),
])
def test_captured_detection(row, captured):
    assert ItemRow.decode(row).captured is captured


def test_missing_items_none_without_an_items_list():
    assert shard.missing_items(Run.decode({"status": "awaiting_traces"})) is None
    combos = list(itertools.product([True, False], repeat=2))
    for a, b in combos:
        run = {"items": [run_item("a", a), run_item("b", b)]}
        assert shard.missing_items(Run.decode(run)) == [x for x, c in (("a", a), ("b", b)) if not c]
