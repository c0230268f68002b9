"""``sweep run`` flow with fakes at the edges: plan order, starts with retries, resume, errors."""

from __future__ import annotations

import io
import threading
from typing import ClassVar

from neens_action.api.sweep_comparison import SweepComparison
from neens_action.api.sweeps import Sweep
from neens_action.errors import NeensApiError
from neens_action.flows.sweep.runner import (
    ChildRun,
    SweepRunParams,
    is_runner_sweep,
    plan,
    run_flow,
    runs_to_drive,
)
from neens_action.outcome import Invocation, SweepOutcome
from neens_action.settings.sweep import Poll
from neens_action.verdict import decide_sweep
from neens_action.world import World
from tests.unit.flows.sweep.test_shared import FakeClock


def code(out: SweepOutcome) -> int:
    """The exit code the pipeline gives this outcome (``verdict.decide_sweep``)."""
    return decide_sweep(out)[0]

def runner_sweep(status="pending", arms=("a", "b"), k=2, run_status="awaiting_traces",
                 **kw):
    return {
        "id": "msw-1", "status": status, "passK": k, "versionLabel": "v1", "runnerMode": "runner",
        "arms": [
            {"label": label, "model": f"model-{label}", "runnerMode": "runner",
             "runs": [{"runId": f"ppr_{label}{rep}", "status": run_status, "rep": rep}
                      for rep in range(1, k + 1)]}
            for label in arms
        ],
        **kw,
    }


class RunClient:
    def __init__(self, sweep, *, final=None, comparison=None, items=None,
                 start_errors=None, fail=None):
        self.sweep = sweep
        self.final = final or {**sweep, "status": "completed"}
        self.comparison = comparison or {"status": "completed",
                                         "verdict": {"outcome": "winner", "reason": "a wins"}}
        self.items = items
        self.start_errors = dict(start_errors or {})  # run id -> list of errors to raise
        self.fail = fail or {}
        self.calls: list[tuple] = []
        self.lock = threading.Lock()
        self.base_url = "http://127.0.0.1:1"
        self.timeout = 30.0
        self.connect_timeout = 10.0
        self.retries = 3
        self.start_retries: list[int] = []  # shared with copies of this client
        self.gets = 0

    def _rec(self, *call):
        with self.lock:
            self.calls.append(call)
        if call[0] in self.fail:
            raise self.fail[call[0]]

    def create_sweep(self, body):
        self._rec("create", body)
        return Sweep.decode({"id": "msw-1", "status": "pending"})

    def get_sweep(self, sweep_id):
        self._rec("get", sweep_id)
        self.gets += 1
        return Sweep.decode(self.sweep if self.gets == 1 else self.final)

    def get_items(self, run_id):
        self._rec("items", run_id)
        if self.items is not None:
            return self.items(run_id)
        return [{"item_id": "it_1", "input": "q1"}, {"item_id": "it_2", "input": "q2"}]

    def start_run(self, run_id):
        self._rec("start", run_id)
        self.start_retries.append(self.retries)
        errors = self.start_errors.get(run_id)
        if errors:
            raise errors.pop(0)
        return {}

    def get_sweep_comparison(self, sweep_id, bar=None, baseline_arm=None):
        self._rec("comparison", sweep_id, bar, baseline_arm)
        return SweepComparison.decode(self.comparison)

    def cancel_sweep(self, sweep_id, quick=False):
        self._rec("cancel", sweep_id)
        return Sweep.decode({**self.sweep, "status": "cancelled"})

    def names(self, kind):
        return [c[1] for c in self.calls if c[0] == kind]


class FakeRunner:
    instances: ClassVar[list[FakeRunner]] = []

    def __init__(self, command, *, timeout, concurrency, output_cap, log, environ, fail=None):
        self.command, self.concurrency, self.log = command, concurrency, log
        self.environ = environ
        self.fail = fail or (lambda job: False)
        self.jobs = []
        self.killed = False
        FakeRunner.instances.append(self)

    def run(self, jobs, on_result=None):
        out = []
        for job in jobs:
            self.jobs.append(job)
            failed = self.fail(job)
            inv = Invocation(item_id=job.key, input=job.input, returncode=3 if failed else 0,
                             duration_s=0.5, error="rc=3" if failed else None,
                             output="secret agent output", **{k: job.meta[k] for k in (
                                 "arm", "model", "rep", "run_id")})
            self.log(f"item 1/{len(jobs)} [{job.key}] ok (0.5s)")
            if on_result:
                on_result(job, inv)
            out.append(inv)
        return out

    def kill_all(self):
        self.killed = True


def factory(fail=None):
    def make(command, **kw):
        return FakeRunner(command, fail=fail, **kw)
    return make


def world(environ=None):
    return World(environ=environ or {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://x"},
                 err=io.StringIO(), out=io.StringIO(), clock=FakeClock())


def params(**kw):
    base = dict(command=["agent", "--x"], sweep_id="msw-1", poll=Poll(interval=1, timeout=60),
                start_waits=(0.01, 0.02))
    base.update(kw)
    return SweepRunParams(**base)


def test_is_runner_sweep():
    def runner(answer):
        return is_runner_sweep(Sweep.decode(answer))

    assert runner({"runnerMode": "runner"})
    assert not runner({"runnerMode": "push", "arms": [{"runnerMode": "runner"}]})
    assert runner({"arms": [{"runnerMode": "runner"}, {"runnerMode": "runner"}]})
    assert not runner({"arms": [{"runnerMode": "runner"}, {}]})
    assert not runner({"arms": []})


def test_plan_is_rep_major_item_then_arms_round_robin():
    runs = []
    for rep in (2, 1):
        for label in ("a", "b", "c"):
            run = ChildRun(run_id=f"{label}{rep}", arm=label, model="m", rep=rep)
            run.items = [{"item_id": "i1"}, {"item_id": "i2"}]
            runs.append(run)
    order = [(r.arm, r.rep, i) for r, i in plan(sorted(runs, key=lambda r: r.arm))]
    assert order == [
        ("a", 1, 0), ("b", 1, 0), ("c", 1, 0), ("a", 1, 1), ("b", 1, 1), ("c", 1, 1),
        ("a", 2, 0), ("b", 2, 0), ("c", 2, 0), ("a", 2, 1), ("b", 2, 1), ("c", 2, 1),
    ]


def test_runs_to_drive_skips_runs_past_awaiting_traces():
    sweep = runner_sweep()
    sweep["arms"][0]["runs"][0]["status"] = "running"
    sweep["arms"][1]["runs"][1].pop("status")
    sweep["arms"][1]["runs"][1].pop("rep")
    todo, skipped = runs_to_drive(Sweep.decode(sweep))
    assert skipped == 1
    assert [(r.run_id, r.rep) for r in todo] == [("ppr_a2", 2), ("ppr_b1", 1), ("ppr_b2", 2)]


def test_full_run_env_order_starts_and_winner():
    client = RunClient(runner_sweep())
    w = world()
    out = run_flow(client, params(sweep_id=None, create_body={"arms": []}), world=w,
                   runner_factory=factory())
    assert code(out) == 0, out.error
    runner = FakeRunner.instances[-1]
    assert [(j.meta["arm"], j.meta["rep"], j.key) for j in runner.jobs] == [
        ("a", 1, "it_1"), ("b", 1, "it_1"), ("a", 1, "it_2"), ("b", 1, "it_2"),
        ("a", 2, "it_1"), ("b", 2, "it_1"), ("a", 2, "it_2"), ("b", 2, "it_2"),
    ]
    env = runner.jobs[1].env
    assert env["NEENS_EVAL_MODEL"] == "model-b" and env["NEENS_SWEEP_ARM"] == "b"
    assert env["NEENS_SWEEP_REP"] == "1" and env["NEENS_SWEEP_ID"] == "msw-1"
    assert env["NEENS_EVAL_RUN_ID"] == "ppr_b1" and env["NEENS_VERSION_LABEL"] == "v1"
    assert "neens.sweep_arm=b" in env["OTEL_RESOURCE_ATTRIBUTES"]
    assert sorted(client.names("start")) == ["ppr_a1", "ppr_a2", "ppr_b1", "ppr_b2"]
    assert [c[0] for c in client.calls][:2] == ["create", "get"]
    log = w.err.getvalue()
    assert log.startswith("Created sweep msw-1 (runner mode)\n")
    assert "Sweep msw-1 — 2 arm(s): a=model-a, b=model-b; k=2; version='v1'" in log
    assert ("Running 8 agent invocation(s) across 4 run(s) with concurrency=1 "
            "(interleaved: rep-major, arms round-robin)") in log
    assert "  [2/8] b rep 1 item 1/2 [it_1] ok (0.5s)" in log
    assert "  started run ppr_a1 (a rep 1) — all items executed" in log
    assert "Command finished for 8/8 invocation(s) with rc=0" in log
    assert "Waiting for the sweep to be scored ..." in log
    assert "item 1/8 [" not in log  # the runner's own per-item line is replaced by ours


def test_start_retries_transient_then_409_style_success():
    err = NeensApiError("POST /start failed: HTTP 503", status=503)
    client = RunClient(runner_sweep(arms=("a",), k=1), start_errors={"ppr_a1": [err, err]})
    w = world()
    out = run_flow(client, params(), world=w, runner_factory=factory())
    assert code(out) == 0
    assert client.names("start") == ["ppr_a1"] * 3
    assert client.start_retries == [0, 0, 0] and client.retries == 3  # only our loop retries
    assert "retrying in 0.01s (attempt 2/3)" in w.err.getvalue()


def test_failed_start_exits_2_with_resume_hint_no_cancel_no_poll():
    permanent = NeensApiError("POST /start failed: HTTP 404: gone", status=404)
    transient = NeensApiError("POST /start failed: connection reset", status=None)
    client = RunClient(runner_sweep(), start_errors={
        "ppr_a1": [permanent], "ppr_b2": [transient, transient, transient]})
    w = world()
    out = run_flow(client, params(), world=w, runner_factory=factory())
    assert code(out) == 2
    assert sorted(f.run_id for f in out.failed_starts) == ["ppr_a1", "ppr_b2"]
    assert "neens sweep run --sweep-id msw-1 -- agent --x" in out.error
    assert client.names("cancel") == [] and client.names("comparison") == []
    assert client.gets == 1
    assert client.names("start").count("ppr_a1") == 1  # a 404 is not retried


def test_every_invocation_failed_cancels_and_exits_2():
    client = RunClient(runner_sweep(arms=tuple("abcdefghijk"), k=1))
    out = run_flow(client, params(), world=world(), runner_factory=factory(lambda job: True))
    kept = [inv for inv in out.invocations if inv.output]
    assert len(kept) == 20 and len(out.invocations) == 22  # bounded output tails
    assert code(out) == 2 and "every agent invocation failed" in out.error
    assert client.names("cancel") == ["msw-1"]
    assert out.sweep.status == "cancelled"  # the report shows the cancelled state


def test_one_failing_invocation_still_starts_its_run():
    client = RunClient(runner_sweep(arms=("a",), k=1))
    out = run_flow(client, params(), world=world(),
                   runner_factory=factory(lambda job: job.key == "it_1"))
    assert code(out) == 0 and client.names("start") == ["ppr_a1"]


def test_push_sweep_is_refused_without_cancel():
    sweep = runner_sweep()
    sweep["runnerMode"] = "push"
    client = RunClient(sweep)
    out = run_flow(client, params(), world=world(), runner_factory=factory())
    assert code(out) == 2 and "push sweep" in out.error
    assert client.names("cancel") == [] and client.names("items") == []


def test_empty_items_is_fatal_and_cancels():
    client = RunClient(runner_sweep(), items=lambda run_id: [] if run_id == "ppr_b1" else [
        {"item_id": "x", "input": "y"}])
    out = run_flow(client, params(), world=world(), runner_factory=factory())
    assert code(out) == 2 and "ppr_b1" in out.error and "no items" in out.error
    assert client.names("cancel") == ["msw-1"]


def test_api_error_while_polling_does_not_cancel():
    client = RunClient(runner_sweep(arms=("a",), k=1),
                       fail={"comparison": NeensApiError("GET failed: HTTP 500", status=500)})
    out = run_flow(client, params(), world=world(), runner_factory=factory())
    assert code(out) == 2 and client.names("cancel") == []


def test_resume_runs_only_awaiting_runs():
    sweep = runner_sweep()
    for run in sweep["arms"][0]["runs"]:
        run["status"] = "completed"
    client = RunClient(sweep)
    w = world()
    out = run_flow(client, params(), world=w, runner_factory=factory())
    assert code(out) == 0
    assert {j.meta["arm"] for j in FakeRunner.instances[-1].jobs} == {"b"}
    assert sorted(client.names("start")) == ["ppr_b1", "ppr_b2"]
    assert "Attaching to sweep msw-1" in w.err.getvalue()
    assert "2 run(s) already past awaiting_traces" in w.err.getvalue()


def test_nothing_left_to_run_just_decides():
    client = RunClient(runner_sweep(run_status="completed"),
                       comparison={"status": "completed", "verdict": {"outcome": "none_clear"}})
    out = run_flow(client, params(bar=0.5, baseline_arm="arm_x"), world=world(),
                   runner_factory=factory())
    assert code(out) == 1 and client.names("start") == []
    assert ("comparison", "msw-1", 0.5, "arm_x") in client.calls


def test_poll_timeout_exits_2_without_cancel():
    sweep = runner_sweep(arms=("a",), k=1)
    client = RunClient(sweep, final={**sweep, "status": "running"})
    out = run_flow(client, params(poll=Poll(interval=1, timeout=2)), world=world(),
                   runner_factory=factory())
    assert code(out) == 2 and "--poll-timeout" in out.error
    assert client.names("cancel") == []


def test_void_sweep_exits_2():
    client = RunClient(runner_sweep(arms=("a",), k=1), comparison={
        "status": "void", "comparable": False, "voidReason": "judges differ",
        "verdict": {"outcome": "unavailable"}})
    out = run_flow(client, params(), world=world(), runner_factory=factory())
    assert code(out) == 2 and "judges differ" in out.error


def test_missing_otlp_endpoint_is_warned():
    w = world(environ={"PATH": "/usr/bin"})
    run_flow(RunClient(runner_sweep(arms=("a",), k=1)), params(), world=w,
             runner_factory=factory())
    assert "WARNING: no OTLP endpoint" in w.err.getvalue()
    assert FakeRunner.instances[-1].environ is w.environ  # where NEENS_LAUNCHER is read


def test_interrupt_kills_agents_cancels_the_sweep_and_exits_130():
    from neens_action.errors import Interrupted

    class Interrupting(FakeRunner):
        def run(self, jobs, on_result=None):
            raise Interrupted()

    client = RunClient(runner_sweep())
    w = world()
    out = run_flow(client, params(), world=w,
                   runner_factory=lambda command, **kw: Interrupting(command, **kw))
    assert code(out) == 130 and out.interrupted and out.error == "interrupted"
    assert FakeRunner.instances[-1].killed
    assert client.names("cancel") == ["msw-1"]
    assert "Cancelled sweep msw-1" in w.err.getvalue()
