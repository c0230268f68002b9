"""The one poll loop (flows/polling.py) with a fake clock: back-off, logging, timeouts, the
hooks its callers use, outage tolerance, and every caller (sweeps, scenario suites, shard
capture) polling through a 60 s server outage to its verdict."""

from __future__ import annotations

import io
import itertools
from collections.abc import Callable

import pytest

from neens_action.api.answers import Gate, Run
from neens_action.errors import NeensApiError, RunError
from neens_action.flows import polling, runs, shard, stress
from neens_action.flows.polling import PollTimeout, poll_delays, poll_until
from neens_action.flows.sweep import shared as sweeps
from neens_action.flows.sweep.runner import run_flow
from neens_action.flows.sweep.shared import Poll
from neens_action.verdict import decide_sweep
from neens_action.world import World
from tests.fakes.clock import FakeClock
from tests.unit.flows import test_shard as shard_fakes
from tests.unit.flows import test_stress as stress_fakes
from tests.unit.flows.sweep import test_runner as runner_fakes
from tests.unit.flows.sweep import test_shared as sweep_fakes


def world() -> World:
    return World(environ={}, err=io.StringIO(), out=io.StringIO(), clock=FakeClock())


def transient() -> NeensApiError:
    return NeensApiError("GET /preprod-evals/r failed: connection reset", status=None)


def run_loop(fetch: Callable[[], dict], w: World, **kw) -> dict:
    """poll_until with the run defaults of poll_run (each answer decoded as the client does);
    the last run as the server sent it."""
    opts = {"interval": 1.0, "timeout": 60, "is_done": runs.is_terminal,
            "describe": runs.progress_text, "prefix": "  run status: ", "what": "scoring"}
    return poll_until(lambda: Run.decode(fetch()), world=w, **{**opts, **kw}).raw


# -- the loop ------------------------------------------------------------------------------------


def test_poll_delays_back_off_to_interval():
    d = poll_delays(5.0)
    assert [next(d) for _ in range(6)] == [0.5, 1.0, 2.0, 4.0, 5.0, 5.0]
    small = poll_delays(0.2)
    assert [next(small) for _ in range(3)] == [0.2, 0.2, 0.2]
    early = poll_delays(1.0, first=0.25)
    assert [next(early) for _ in range(4)] == [0.25, 0.5, 1.0, 1.0]


def test_poll_until_logs_changes_and_times_out():
    w = world()
    states = iter(["a", "a", "b"] + ["b"] * 100)
    with pytest.raises(RunError, match="did not finish within 10s") as caught:
        poll_until(lambda: {"status": next(states)}, world=w, interval=2.0, timeout=10.0,
                   describe=lambda o: o["status"], is_done=lambda o: False,
                   prefix="  run status: ")
    assert w.err.getvalue().splitlines() == ["  run status: a", "  run status: b"]
    assert sum(w.clock.sleeps) == pytest.approx(10.0)
    assert w.clock.sleeps[:3] == [0.5, 1.0, 2.0]
    assert isinstance(caught.value, PollTimeout) and caught.value.last == {"status": "b"}
    assert "(last status: b)" in str(caught.value)


def test_without_describe_the_loop_is_silent():
    w = world()
    answers = iter([{"status": "x"}, {"status": "y"}, {"status": "done"}])
    obj = poll_until(lambda: next(answers), world=w, interval=1.0, timeout=10,
                     is_done=lambda o: o["status"] == "done")
    assert obj == {"status": "done"} and w.err.getvalue() == ""


def test_first_object_replaces_the_first_fetch_and_first_delay_is_honoured():
    w = world()
    fetched = []

    def fetch():
        fetched.append(w.clock.now)
        return {"status": "done" if len(fetched) == 3 else "running"}

    poll_until(fetch, world=w, interval=1.0, timeout=10, is_done=lambda o: o["status"] == "done",
               first={"status": "running"}, first_delay=0.25)
    assert fetched == [0.25, 0.75, 1.75]  # no fetch at t=0: ``first`` stood in for it
    assert w.clock.sleeps == [0.25, 0.5, 1.0]


def test_stop_ends_the_wait_like_a_timeout_with_the_last_object():
    w = world()
    polls = itertools.count(1)
    with pytest.raises(PollTimeout) as caught:
        poll_until(lambda: {"status": "running", "n": next(polls)}, world=w, interval=1.0,
                   timeout=600, is_done=lambda o: False, stop=lambda: w.clock.now >= 2)
    assert caught.value.last == {"status": "running", "n": 4}  # polled at 0, 0.5, 1.5, 2.5
    assert w.clock.now == pytest.approx(2.5)


def test_polling_survives_transient_faults():
    answers = [transient(), NeensApiError("x failed: HTTP 503", status=503),
               {"status": "running"}, transient(), {"status": "completed"}]

    def fetch():
        answer = answers.pop(0)
        if isinstance(answer, Exception):
            raise answer
        return answer

    w = world()
    run = run_loop(fetch, w)
    assert run["status"] == "completed" and not answers
    log = w.err.getvalue()
    assert log.count("(still polling)") == 2 and "run status: completed" in log


def test_polling_gives_up_at_the_budget_or_after_a_long_outage():
    def down():
        raise transient()

    w = world()
    with pytest.raises(NeensApiError):
        run_loop(down, w, interval=5.0, timeout=30)
    assert 30 <= w.clock.now < 36
    w = world()
    with pytest.raises(NeensApiError):
        run_loop(down, w, interval=5.0, timeout=3600)
    assert polling.MAX_OUTAGE <= w.clock.now < polling.MAX_OUTAGE + 6


def test_outage_budget_lets_an_outage_outlast_a_short_wait():
    w = world()

    def fetch():
        if w.clock.now < 1:
            return {"status": "running"}
        if w.clock.now < 41:
            raise transient()
        return {"status": "completed"}

    with pytest.raises(NeensApiError):  # the outage outlasts the 10 s budget: it is fatal
        run_loop(fetch, w, timeout=10)
    w = world()
    assert run_loop(fetch, w, timeout=10, outage_budget=300)["status"] == "completed"
    assert 41 <= w.clock.now < 43


def test_polling_stops_at_once_on_a_permanent_error():
    calls = []

    def gone():
        calls.append(1)
        raise NeensApiError("GET /preprod-evals/r failed: HTTP 404: no such run", status=404)

    with pytest.raises(NeensApiError):
        run_loop(gone, world())
    assert len(calls) == 1


def test_polling_is_fast_once_every_item_is_scored():
    states = [{"status": "running", "completed": 1, "total": 3}] * 3 + \
             [{"status": "running", "completed": 3, "total": 3}] * 4 + [{"status": "completed"}]
    answers = iter(states)
    w = world()
    starts = []

    def fetch():
        starts.append(w.clock.now)
        return next(answers)

    run_loop(fetch, w, interval=5.0, timeout=600, nearly_done=runs.all_scored)
    gaps = [b - a for a, b in itertools.pairwise(starts)]
    assert gaps[:3] == [0.5, 1.0, 2.0]  # backing off while items are being scored
    assert gaps[3:] == [polling.FIRST_DELAY] * 4  # then fast: the verdict is imminent


# -- every caller polls through a 60 s outage ----------------------------------------------------

OUTAGE = 60.0


class Outage:
    """Once armed (after ``after`` good answers), every call fails transiently for 60
    simulated seconds; then the server answers again."""

    def __init__(self, clock: FakeClock, after: int) -> None:
        self.clock, self.after = clock, after
        self.began: float | None = None
        self.failures = 0

    def check(self) -> None:
        if self.after > 0:
            self.after -= 1
            return
        if self.began is None:
            self.began = self.clock.now
        if self.clock.now - self.began < OUTAGE:
            self.failures += 1
            raise NeensApiError("GET /x failed: HTTP 503: down for maintenance", status=503)


def outage_sweep_decide(w: World) -> tuple[int, str | None]:
    running = {"id": "msw-1", "status": "running", "arms": [sweep_fakes.arm("a", passed=None)]}
    done = {"id": "msw-1", "status": "completed", "arms": [sweep_fakes.arm("a")]}
    comparison = {"sweepId": "msw-1", "status": "completed",
                  "verdict": {"outcome": "winner", "reason": "a wins"}}
    outage = Outage(w.clock, after=1)

    class Client(sweep_fakes.FakeClient):
        def get_sweep(self, sweep_id):
            outage.check()
            return super().get_sweep(sweep_id)

    client = Client(sweeps=[running, done], comparison=comparison)
    out = sweeps.decide_flow(client, "msw-1", bar=None, baseline_arm=None, wait=True,
                             require_winner=True, poll=Poll(interval=10, timeout=600), world=w)
    assert outage.failures > 1
    return decide_sweep(out)[0], out.error  # the code the pipeline gives it


def outage_sweep_run(w: World) -> tuple[int, str | None]:
    outage = Outage(w.clock, after=1)  # the attach read answers; the poll meets the outage

    class Client(runner_fakes.RunClient):
        def get_sweep(self, sweep_id):
            outage.check()
            return super().get_sweep(sweep_id)

    client = Client(runner_fakes.runner_sweep(arms=("a",), k=1))
    out = run_flow(client, runner_fakes.params(poll=Poll(interval=5, timeout=600)), world=w,
                   runner_factory=runner_fakes.factory())
    assert outage.failures > 1 and client.names("comparison") == ["msw-1"]
    return decide_sweep(out)[0], out.error


def outage_stress(w: World) -> tuple[int, str | None]:
    outage = Outage(w.clock, after=1)

    class Client(stress_fakes.FakeClient):
        def get_suite(self, suite_id):
            outage.check()
            return super().get_suite(suite_id)

    client = Client([{"id": "sts_1", "status": "generating"}, stress_fakes.READY])
    out = stress.run_stress(stress_fakes.push_settings(), client=client, world=w)
    assert outage.failures > 1 and out.suite.raw == stress_fakes.READY
    return (0 if out.gate == Gate.decode({"passed": True, "reasons": []}) else 1), out.error


def outage_shard_finish(w: World) -> tuple[int, str | None]:
    late = {"id": "r1", "status": "awaiting_traces",
            "items": [shard_fakes.run_item("a", True), shard_fakes.run_item("b", False)]}
    ready = {"id": "r1", "status": "awaiting_traces",
             "items": [shard_fakes.run_item("a", True), shard_fakes.run_item("b", True)]}
    done = {"id": "r1", "status": "completed", "completed": 2, "total": 2}
    outage = Outage(w.clock, after=1)  # run_finish's first read answers; the re-check fails

    class Client(shard_fakes.FakeClient):
        def get_run(self, run_id):
            outage.check()
            return super().get_run(run_id)

    client = Client(late, runs=[late, ready, done])
    s = shard_fakes.settings(run_id="r1", finish=True, command=[], poll_interval=1.0)
    out = shard.run_finish(s, client=client, world=w)
    assert outage.failures > 1 and client.calls.count("start_run") == 1
    assert out.run is not None and out.run.status == "completed"
    return (0 if out.gate and out.gate.passed else 1), out.error


@pytest.mark.parametrize("flow", [outage_sweep_decide, outage_sweep_run, outage_stress,
                                  outage_shard_finish],
                         ids=["sweep-decide", "sweep-run", "stress-wait-ready",
                              "shard-wait-for-capture"])
def test_every_poll_survives_a_60s_outage_and_reaches_the_verdict(flow):
    w = world()
    exit_code, error = flow(w)
    assert (exit_code, error) == (0, None)
    assert w.clock.now >= OUTAGE  # the outage was really waited out
    assert w.err.getvalue().count("(still polling)") == 1  # one line per outage, not per poll


def test_wait_for_capture_polls_through_an_outage_and_returns_the_settled_run():
    w = world()
    outage = Outage(w.clock, after=0)
    ready = {"id": "r1", "status": "awaiting_traces", "items": [shard_fakes.run_item("a", True)]}

    class Client(shard_fakes.FakeClient):
        def get_run(self, run_id):
            outage.check()
            return super().get_run(run_id)

    missing = {"id": "r1", "status": "awaiting_traces",
               "items": [shard_fakes.run_item("a", False)]}
    run, still = shard.wait_for_capture(Client(ready), "r1", Run.decode(missing), world=w,
                                        budget=10, outage_budget=600)
    assert still == [] and run.raw["items"] == ready["items"] and w.clock.now >= OUTAGE
    # a short wait for late traces still ends at its budget when the server answers
    w = world()
    run, still = shard.wait_for_capture(shard_fakes.FakeClient(missing), "r1",
                                        Run.decode(missing), world=w, budget=10)
    assert still == ["a"] and 10 <= w.clock.now < 12
