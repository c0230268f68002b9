"""The watch session's decisions, with fakes at the edges (client, file watcher, drive_run)."""

from __future__ import annotations

import io
import json
from datetime import datetime, timezone

import pytest

from neens_action import watch_session as watch_mod
from neens_action.api.answers import Gate, Run
from neens_action.api.json_stream import keep
from neens_action.errors import Interrupted, NeensApiError, NeensError, RunError
from neens_action.settings.run import EvalRunSettings
from neens_action.watch_session import WatchLoop, WatchOptions
from neens_action.world import Clock, World


class FixedClock(Clock):
    def __init__(self) -> None:
        self.slept: list[float] = []

    def utcnow(self) -> datetime:
        return datetime(2025, 3, 4, 5, 6, 7, tzinfo=timezone.utc)

    def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)


class FakeWatcher:
    """Scripted changes: ``during`` per iteration end, ``idle`` for each wait."""

    file_count = 3
    capped = False

    def __init__(self, during: list[list[str]] | None = None,
                 idle: list[list[str]] | None = None) -> None:
        self.during = list(during or [])
        self.idle = list(idle or [])
        self.settled: list[list[str]] = []

    def poll(self) -> list[str]:
        return self.during.pop(0) if self.during else []

    def settle(self, changed: list[str]) -> list[str]:
        self.settled.append(list(changed))
        return sorted(changed)

    def wait_for_change(self) -> list[str]:
        if not self.idle:
            raise Interrupted("interrupted by SIGINT")  # the user stops the session
        return self.idle.pop(0)


class FakeClient:
    base_url = "http://neens.test"

    def __init__(self, creates: list[object]) -> None:
        self.creates = list(creates)
        self.bodies: list[dict] = []
        self.cancelled: list[tuple[str, bool]] = []
        self.items_calls: list[str] = []

    def create_run(self, body: dict) -> Run:
        self.bodies.append(body)
        nxt = self.creates.pop(0)
        if isinstance(nxt, Exception):
            raise nxt
        return Run.decode(nxt, items=False)

    def cancel_run(self, run_id: str, *, quick: bool = False) -> None:
        self.cancelled.append((run_id, quick))

    def get_items(self, run_id: str, row=keep) -> list:
        self.items_calls.append(run_id)
        return [row({"item_id": "a", "input": "A"})]


def run_obj(run_id: str, passed: dict[str, bool | None], status: str = "completed") -> dict:
    items = [{"datasetVersionItemId": k, "input": k.upper(), "passed": v}
             for k, v in passed.items()]
    n_pass = sum(1 for v in passed.values() if v is True)
    return {"id": run_id, "status": status, "items": items,
            "aggregate": {"passRate": n_pass / len(passed), "avgScore": 0.5,
                          "passed": n_pass, "failed": len(passed) - n_pass, "errored": 0}}


def fake_drive(script: list[object]):
    """A drive_run stand-in: each call pops (run, gate) or an exception."""
    calls = []

    def drive(client, outcome, settings, *, world, policy=None, run=None, label=None,
              every_item=None):
        calls.append((outcome.run_id, label))
        drive.settings.append(settings)
        nxt = script.pop(0)
        if isinstance(nxt, BaseException):
            raise nxt
        run, gate = nxt
        outcome.run, outcome.gate = Run.decode(run), Gate.decode(gate)
        if outcome.run.status == "failed":
            outcome.error = f"run {outcome.run_id} ended with status 'failed'"
        return outcome

    drive.calls = calls
    drive.settings = []
    return drive


def make(monkeypatch, creates, drives, *, watcher=None, json_out=True, **opts):
    fields = {"base_url": "http://neens.test", "dataset": "ds_1", "version_label": "local",
              "create": True, "command": ["agent"], "json": json_out,
              **opts.pop("settings", {})}
    settings = EvalRunSettings(**fields).validate()
    drive = fake_drive(drives)
    monkeypatch.setattr(watch_mod, "drive_run", drive)
    client = FakeClient(creates)
    world = World(environ={}, err=io.StringIO(), out=io.StringIO(), clock=FixedClock())
    loop = WatchLoop(settings, WatchOptions(**opts), client=client, world=world,
                     watcher=watcher or FakeWatcher())
    return loop, client, world, drive


def records(world: World) -> list[dict]:
    return [json.loads(line) for line in world.out.getvalue().splitlines()]


def test_once_returns_the_iteration_code_and_sends_a_watch_body(monkeypatch):
    loop, client, world, drive = make(
        monkeypatch, [{"id": "ppr_1"}], [(run_obj("ppr_1", {"a": True, "b": False}),
                                          {"passed": False, "passRate": 0.5})],
        once=True, settings={"min_pass_rate": 0.9, "baseline": "prod:30d"},
    )
    assert loop.run() == 1
    assert client.bodies == [{
        "name": "local (watch #1)", "version_label": "local-watch.20250304T050607.1",
        "dataset_id": "ds_1", "baseline": {"kind": "prod_window", "range": "30d"},
        "gate": {"min_pass_rate": 0.9},
    }]
    assert drive.calls == [("ppr_1", "local-watch.20250304T050607.1")]
    [rec] = records(world)
    assert rec["exitCode"] == 1 and rec["gatePassed"] is False and rec["runId"] == "ppr_1"
    assert rec["metrics"]["passRate"] == 0.5
    log = world.err.getvalue()
    assert "── iteration 1 · local-watch.20250304T050607.1 " in log
    assert "  created run ppr_1" in log
    assert "  2 item(s), 1 not passing — baseline for the next diff" in log


def test_follow_up_after_saves_during_the_run_then_max_iterations(monkeypatch):
    watcher = FakeWatcher(during=[["src/a.py", "src/b.py"]], idle=[["mode.txt"]])
    loop, client, world, _ = make(
        monkeypatch, [{"id": "r1"}, {"id": "r2"}, {"id": "r3"}],
        [(run_obj("r1", {"a": True, "b": True}), {"passed": True}),
         (run_obj("r2", {"a": False, "b": True}), {"passed": False}),
         (run_obj("r3", {"a": True, "b": True}), {"passed": True})],
        watcher=watcher, max_iterations=3,
    )
    assert loop.run() == 0
    assert watcher.settled == [["src/a.py", "src/b.py"]]
    recs = records(world)
    assert [r["trigger"] for r in recs] == [[], ["src/a.py", "src/b.py"], ["mode.txt"]]
    assert [r["exitCode"] for r in recs] == [0, 1, 0]
    assert [c["itemId"] for c in recs[1]["diff"]["newlyFailing"]] == ["a"]
    assert [c["itemId"] for c in recs[2]["diff"]["newlyPassing"]] == ["a"]
    assert [b["name"] for b in client.bodies] == [f"local (watch #{n})" for n in (1, 2, 3)]
    log = world.err.getvalue()
    assert "2 file(s) changed during iteration 1: one follow-up run" in log
    assert log.count("watching for changes") == 1


@pytest.mark.parametrize("status", [401, 403, 404, 422])
def test_unrecoverable_create_stops_the_watcher(monkeypatch, status):
    err = NeensApiError(f"POST /preprod-evals failed: HTTP {status}", status=status)
    loop, _, world, _ = make(monkeypatch, [err], [])
    with pytest.raises(NeensError, match="no file save can fix this") as info:
        loop.run()
    assert info.value.exit_code == 2
    [rec] = records(world)
    assert rec["exitCode"] == 2 and rec["runId"] == "" and str(status) in rec["error"]
    assert "errored" not in world.err.getvalue()  # the CLI prints the one error line


def test_transient_create_error_is_an_iteration_error_and_the_loop_goes_on(monkeypatch):
    watcher = FakeWatcher(idle=[["app.py"]])
    loop, client, world, _ = make(
        monkeypatch,
        [NeensApiError("POST /preprod-evals failed: HTTP 503", status=503), {"id": "r2"}],
        [(run_obj("r2", {"a": True}), {"passed": True})],
        watcher=watcher, max_iterations=2,
    )
    assert loop.run() == 0
    log = world.err.getvalue()
    assert "  ✗ iteration 1 errored: POST /preprod-evals failed: HTTP 503" in log
    assert "    (the watcher keeps going — save a file to retry)" in log
    assert "  gate: PASSED (was ERROR at #1) · exit 0" in log
    assert client.cancelled == []  # nothing was created


def test_run_error_cancels_the_run_and_is_not_diffed(monkeypatch):
    watcher = FakeWatcher(idle=[["app.py"], ["app.py"]])
    loop, client, world, _ = make(
        monkeypatch, [{"id": "r1"}, {"id": "r2"}, {"id": "r3"}],
        [(run_obj("r1", {"a": True}), {"passed": True}),
         RunError("scoring did not finish within 5s"),
         (run_obj("r3", {"a": False}), {"passed": False})],
        watcher=watcher, max_iterations=3,
    )
    assert loop.run() == 1
    assert client.cancelled == [("r2", False)]
    recs = records(world)
    assert recs[1]["exitCode"] == 2 and recs[1]["diff"] is None
    assert recs[1]["error"] == "scoring did not finish within 5s"
    # iteration 3 is compared with iteration 1, the last one that had verdicts
    assert recs[2]["comparedTo"] == 1
    assert [c["itemId"] for c in recs[2]["diff"]["newlyFailing"]] == ["a"]


@pytest.mark.parametrize("status", ["failed", "cancelled"])
def test_terminal_failed_or_cancelled_iteration_is_an_error(monkeypatch, status):
    loop, client, world, _ = make(
        monkeypatch, [{"id": "r1"}], [(run_obj("r1", {"a": None}, status), {"passed": False})],
        once=True,
    )
    assert loop.run() == 2
    assert client.cancelled == []  # already terminal: nothing to cancel
    assert records(world)[0]["diff"] is None
    assert "✗ iteration 1 errored" in world.err.getvalue()


def test_interrupt_during_an_iteration_cancels_the_run_and_returns_130(monkeypatch):
    loop, client, world, _ = make(monkeypatch, [{"id": "r1"}],
                                  [Interrupted("interrupted by SIGINT")])
    assert loop.run() == 130
    assert client.cancelled == [("r1", True)]
    assert records(world) == []


def test_interrupt_while_idle_returns_130_without_cancelling(monkeypatch):
    loop, client, world, _ = make(monkeypatch, [{"id": "r1"}],
                                  [(run_obj("r1", {"a": True}), {"passed": True})])
    assert loop.run() == 130  # FakeWatcher raises Interrupted when nothing is scripted
    assert client.cancelled == []
    assert world.err.getvalue().rstrip().endswith("neens: interrupted")


def test_agent_written_paths_stop_retriggering(monkeypatch):
    watcher = FakeWatcher(during=[["out.log"], ["out.log"]])
    loop, _, world, _ = make(
        monkeypatch, [{"id": "r1"}, {"id": "r2"}],
        [(run_obj("r1", {"a": True}), {"passed": True}),
         (run_obj("r2", {"a": True}), {"passed": True})],
        watcher=watcher,
    )
    assert loop.run() == 130  # after iteration 2 it waits (and the fake user presses Ctrl-C)
    assert len(records(world)) == 2
    assert "ignoring during-run changes to out.log" in world.err.getvalue()


def test_items_fall_back_to_e3_when_the_run_has_none(monkeypatch):
    run = {"id": "r1", "status": "completed", "aggregate": {"passed": 0}}
    loop, client, world, _ = make(monkeypatch, [{"id": "r1"}], [(run, {"passed": False})],
                                  once=True)
    assert loop.run() == 1
    assert client.items_calls == ["r1"]
    assert "  1 item(s), 1 not passing" in world.err.getvalue()
    assert '    ✗ a  unscored  "A"' in world.err.getvalue()


def test_custom_label_and_name(monkeypatch):
    loop, client, _, _ = make(monkeypatch, [{"id": "r1"}],
                              [(run_obj("r1", {"a": True}), {"passed": True})], once=True,
                              settings={"version_label": "feat-x", "name": "My loop"})
    assert loop.run() == 0
    assert client.bodies[0]["version_label"] == "feat-x-watch.20250304T050607.1"
    assert client.bodies[0]["name"] == "My loop"


def test_watch_options_validation(tmp_path):
    from neens_action.errors import UsageError

    assert WatchOptions(paths=[str(tmp_path)]).validate().paths == [str(tmp_path)]
    for bad in (dict(debounce=-0.1), dict(debounce=float("nan")), dict(max_iterations=0),
                dict(paths=[str(tmp_path / "missing")])):
        with pytest.raises(UsageError):
            WatchOptions(**bad).validate()


def test_each_iteration_is_driven_with_the_session_settings_workers_included(monkeypatch):
    loop, _, _, drive = make(
        monkeypatch, [{"id": "ppr_1"}], [(run_obj("ppr_1", {"a": True}), {"passed": True})],
        once=True, settings={"workers": 2},
    )
    assert loop.run() == 0
    assert [s.workers for s in drive.settings] == [2]  # no copy that drops a field
