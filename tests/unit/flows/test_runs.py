"""Run lifecycle helpers (flows/runs.py): waiting for a run's verdict through the one loop."""

from __future__ import annotations

import io

import pytest

from neens_action.api.answers import Run
from neens_action.errors import RunError
from neens_action.flows import runs
from neens_action.items import ItemDigest
from neens_action.world import World
from tests.fakes.clock import FakeClock


def world() -> World:
    return World(environ={}, err=io.StringIO(), out=io.StringIO(), clock=FakeClock())


class Client:
    def __init__(self, status: str = "completed"):
        self.status = status
        self.calls: list[str] = []

    def get_run_summary(self, run_id):
        self.calls.append("summary")
        return Run.decode({"status": self.status, "completed": 1, "total": 1}, items=False)

    def get_run(self, run_id, digest=None):
        self.calls.append(f"full digest={digest is not None}")
        rows = [{"datasetVersionItemId": "a", "passed": True},
                {"datasetVersionItemId": "b", "passed": False}]
        if digest is None:
            return Run.decode({"status": "completed", "items": rows})
        for row in rows:
            digest.add(row)
        return Run.decode({"status": "completed"}, items=False)


def test_poll_run_reads_the_items_once_at_the_end():
    client = Client()
    run = runs.poll_run(client, "r", world=world(), interval=1, timeout=10)
    assert len(run.items) == 2 and client.calls == ["summary", "full digest=False"]
    client, digest = Client(), ItemDigest()
    run = runs.poll_run(client, "r", world=world(), interval=1, timeout=10, digest=digest)
    assert run.items is None and client.calls == ["summary", "full digest=True"]
    assert (digest.total, digest.passed, [r.item_id for r in digest.rows]) == (
        2, 1, ["b"])


def test_poll_run_logs_the_run_status_and_times_out_as_a_run_error():
    w = world()
    with pytest.raises(RunError, match=r"^scoring did not finish within 3s \(last status: "
                                       r"running \(1/1 scored\)\)"):
        runs.poll_run(Client("running"), "r", world=w, interval=1.0, timeout=3)
    assert w.err.getvalue() == "  run status: running (1/1 scored)\n"
    assert w.clock.sleeps[0] == 0.5 and set(w.clock.sleeps[1:]) == {0.5}  # all scored: fast
