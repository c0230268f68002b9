"""The pull flow and the pipeline with a fake client at the edge (agents are real processes)."""

from __future__ import annotations

import io
import json
import sys

import pytest

from neens_action import pipeline
from neens_action.api.answers import Baseline, Gate, Resolution, Run, describe_baseline
from neens_action.api.comparison import Comparison, Metrics
from neens_action.api.json_stream import keep
from neens_action.errors import NeensApiError, UsageError
from neens_action.flows.pull import create_body, run_pull
from neens_action.jobs import JOBS
from neens_action.policy import apply_policy
from neens_action.settings.provenance import resolve
from neens_action.settings.run import EvalRunSettings
from neens_action.world import World
from tests.fakes.clock import FakeClock

PY = sys.executable
SHA = "c" * 40


def world(env: dict | None = None) -> World:
    return World(environ={"PATH": "/usr/bin:/bin", **(env or {})}, err=io.StringIO(),
                 out=io.StringIO(), clock=FakeClock())


class FakeClient:
    base_url = "http://neens.test"

    def __init__(self, items=None, statuses=("running", "completed"), gate=None,
                 create=None, fail: dict | None = None) -> None:
        self.calls: list[tuple] = []
        self.items = [{"item_id": "it_1", "input": "q1"}, {"item_id": "it_2", "input": "q2"}] \
            if items is None else items
        self.statuses = list(statuses)
        self.gate = gate if gate is not None else {"passed": True, "passRate": 1.0,
                                                   "regressions": 0, "reasons": []}
        self.create = create
        self.fail = fail or {}

    def _maybe_fail(self, name):
        if name in self.fail:
            raise self.fail[name]

    def create_run(self, body):
        self.calls.append(("create_run", body))
        self._maybe_fail("create_run")
        return Run.decode(self.create if self.create is not None else {
            "id": "ppr_1", "status": "awaiting_traces", "datasetId": body.get("dataset_id"),
            "baseline": {"kind": "prod_window", "range": "7d"}, "gates": []}, items=False)

    def get_run(self, run_id):
        self.calls.append(("get_run", run_id))
        status = self.statuses.pop(0) if len(self.statuses) > 1 else self.statuses[0]
        return Run.decode({"id": run_id, "status": status, "completed": 2, "total": 2,
                           "versionLabel": "from-run", "items": [
                               {"datasetVersionItemId": "it_1", "input": "q1", "passed": True},
                               {"datasetVersionItemId": "it_2", "input": "q2", "passed": True}]})

    def get_items(self, run_id, row=keep, restart=None):
        self.calls.append(("get_items", run_id))
        self._maybe_fail("get_items")
        return [kept for kept in map(row, self.items) if kept is not None]

    def start_run(self, run_id):
        self.calls.append(("start_run", run_id))

    def cancel_run(self, run_id, quick=False):
        self.calls.append(("cancel_run", run_id))

    def get_gate(self, run_id):
        self.calls.append(("get_gate", run_id))
        self._maybe_fail("get_gate")
        return Gate.decode(self.gate)

    def get_comparison(self, run_id, baseline=None):
        self.calls.append(("get_comparison", run_id))
        self._maybe_fail("get_comparison")
        return Comparison.decode({"regressions": [], "baseline": {"compared": True}})

    def get_metrics(self, run_id):
        self.calls.append(("get_metrics", run_id))
        return Metrics.decode({"metrics": [{"metricKey": "correctness", "avgScore": 0.5}]})

    def post_ci_result(self, run_id, body, quick=False):
        self.calls.append(("post_ci_result", body))
        self._maybe_fail("post_ci_result")

    def names(self) -> list[str]:
        return [c[0] for c in self.calls]


def settings(**kw) -> EvalRunSettings:
    flags = {"base_url": "http://neens.test", "command": [PY, "-c", "pass"], **kw}
    return EvalRunSettings.from_flags(flags, {}).validate()


def test_create_body_in_github_ci(tmp_path):
    event = tmp_path / "event.json"
    event.write_text(json.dumps({"repository": {"default_branch": "main"}}))
    env = {"GITHUB_ACTIONS": "true", "GITHUB_EVENT_PATH": str(event), "GITHUB_SHA": SHA,
           "GITHUB_REF_NAME": "feature", "GITHUB_REPOSITORY": "acme/agent"}
    s = settings(create=True, dataset="ds_1", version_label="v1", max_regressions=0,
                 min_pass_rate=0.9)
    body = create_body(s, resolve(env), None)
    assert body == {"name": "v1", "version_label": "v1", "dataset_id": "ds_1",
                    "baseline": {"kind": "branch", "value": "main"},
                    "gate": {"max_regressions": 0, "min_pass_rate": 0.9},
                    "repo": "acme/agent", "git_sha": SHA, "branch": "feature", "source": "ci"}
    explicit = settings(create=True, dataset="ds_1", version_label="v1", baseline="prod:30d",
                        name="nightly")
    body2 = create_body(explicit, resolve(env), None)
    assert body2["baseline"] == {"kind": "prod_window", "range": "30d"}
    assert body2["name"] == "nightly"


def test_gates_only_label_from_sha_and_no_default_baseline():
    s = settings(gates="active", git_sha=SHA)
    body = create_body(s, resolve({"GITLAB_CI": "true", "CI_DEFAULT_BRANCH": "main"},
                                  git_sha=SHA), None)
    assert body["version_label"] == SHA[:12] and body["gates"] == "active"
    assert "baseline" not in body and "dataset_id" not in body
    with pytest.raises(UsageError, match="--gates needs a version label"):
        create_body(settings(gates="g1"), resolve({}), None)


def test_policy_gate_block_and_overrides_in_body():
    from neens_action.policy import build_policy

    policy = build_policy(None, {"min_avg_score": 0.5})
    s = settings(create=True, dataset="ds", version_label="v", max_regressions=1)
    body = create_body(s, resolve({}), policy)
    assert body["gate"] == {"max_regressions": 1}


def test_run_id_flow_happy_path():
    c = FakeClient(statuses=("awaiting_traces", "running", "completed"))
    w = world({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://neens.test"})
    o = run_pull(settings(run_id="ppr_9"), client=c, world=w)
    assert o.error is None and o.gate.passed is True
    assert c.names() == ["get_run", "get_items", "start_run", "get_run", "get_run", "get_gate"]
    assert o.version_label == "from-run"
    # a console-only run keeps no record of a good item and folds the terminal items
    assert o.invocations == [] and o.run.items is None
    assert (o.item_digest.total, o.item_digest.passed, o.item_digest.rows) == (2, 2, [])
    full = run_pull(settings(run_id="ppr_9", json=True), client=FakeClient(), world=world())
    assert [i.ok for i in full.invocations] == [True, True] and full.item_digest is None
    assert len(full.run.items) == 2
    log = w.err.getvalue()
    assert "Running 2 item(s) with concurrency=1 (version='from-run')" in log
    assert "Command finished for 2/2 item(s) with rc=0" in log
    assert "  run status: completed (2/2 scored)" in log
    assert "no OTLP endpoint" not in log


def test_otlp_warning_before_first_item():
    c = FakeClient()
    w = world()
    run_pull(settings(run_id="ppr_9", version_label="v"), client=c, world=w)
    log = w.err.getvalue()
    warn = log.index("neens: warning: no OTLP endpoint")
    assert warn < log.index("item 1/2")
    assert "OTEL_EXPORTER_OTLP_ENDPOINT=http://neens.test" in log


def test_create_flow_no_items_cancels_the_created_run():
    c = FakeClient(items=[])
    o = run_pull(settings(create=True, dataset="ds", version_label="v"), client=c, world=world())
    assert o.error.startswith("no items to replay")
    assert c.names() == ["create_run", "get_items", "cancel_run"]


def test_create_api_error_has_no_run():
    c = FakeClient(fail={"create_run": NeensApiError("POST /preprod-evals failed: HTTP 404",
                                                     status=404)})
    w = world()
    o = run_pull(settings(create=True, dataset="ds", version_label="v"), client=c, world=w)
    assert o.run_id == "" and "HTTP 404" in o.error
    assert w.err.getvalue() == ""


def test_gates_acknowledgement():
    c = FakeClient(create={"id": "ppr_1", "status": "awaiting_traces"})
    o = run_pull(settings(gates="g1", version_label="v"), client=c, world=world())
    assert "predates eval gates" in o.error
    c2 = FakeClient(create={"id": "ppr_1", "gates": []})
    o2 = run_pull(settings(gates="g1,g2", version_label="v"), client=c2, world=world())
    assert "none of the requested eval gates exist: g1, g2" in o2.error
    c3 = FakeClient(create={"id": "ppr_1", "gates": []})
    w = world()
    o3 = run_pull(settings(gates="active", version_label="v"), client=c3, world=w)
    assert o3.error is None and "no active eval gate" in w.err.getvalue()
    c4 = FakeClient(create={"id": "ppr_1", "gates": [{"gateId": "g1", "name": "FM one"}]})
    w4 = world()
    run_pull(settings(gates="g1", version_label="v"), client=c4, world=w4)
    assert "Enforcing 1 eval gate(s): FM one" in w4.err.getvalue()


def test_failed_status_is_an_error_but_gate_is_fetched():
    c = FakeClient(statuses=("failed",))
    o = run_pull(settings(run_id="r", version_label="v"), client=c, world=world())
    assert "ended with status 'failed'" in o.error
    assert c.names()[-1] == "get_gate" and o.gate is not None


def test_cancelled_status_is_left_to_the_gate():
    c = FakeClient(statuses=("cancelled",), gate={"passed": False, "reasons": ["x"]})
    o = run_pull(settings(run_id="r", version_label="v"), client=c, world=world())
    assert o.error is None and o.gate.passed is False


def test_policy_fetches_comparison_and_metrics_and_degrades():
    from neens_action.policy import build_policy

    policy = build_policy(None, {"min_avg_score": 0.5})
    c = FakeClient(fail={"get_comparison": NeensApiError("GET failed: HTTP 500", status=500)})
    w = world()
    o = run_pull(settings(run_id="r", version_label="v"), client=c, world=w, policy=policy)
    assert o.error is None
    assert "get_comparison" in c.names() and "get_metrics" in c.names()
    assert "could not fetch the comparison" in w.err.getvalue()
    assert o.policy_eval is None  # the flow fetches; the pipeline evaluates
    apply_policy(policy, o)
    assert o.policy_eval is not None
    assert o.policy_identity == {"name": None, "sha256": None, "overridden": True}


def test_a_failing_item_fetches_the_comparison_without_a_policy():
    """Not for the verdict: the evidence tells regressed from failing-as-before items."""
    ok = FakeClient()
    run_pull(settings(run_id="r", version_label="v"), client=ok, world=world())
    assert "get_comparison" not in ok.names()  # every item passed: nothing to explain
    failing = FakeClient(gate={"passed": True, "passRate": 0.5, "regressions": 0})
    o = run_pull(settings(run_id="r", version_label="v"), client=failing, world=world())
    assert "get_comparison" in failing.names() and "get_metrics" not in failing.names()
    assert o.comparison == Comparison.decode({"regressions": [], "baseline": {"compared": True}})
    down = FakeClient(gate={"passed": False, "passRate": 0.5, "regressions": None},
                      fail={"get_comparison": NeensApiError("GET failed: HTTP 503", status=503)})
    w = world()
    o = run_pull(settings(run_id="r", version_label="v"), client=down, world=w)
    assert o.error is None and o.comparison is None
    assert ("neens: warning: could not fetch the comparison (GET failed: HTTP 503); failing "
            "items are not told apart as regressed or failing as before") in w.err.getvalue()
    assert o.warnings[-1].startswith("could not fetch the comparison")


def test_agent_failures_do_not_stop_the_run():
    c = FakeClient()
    s = settings(run_id="r", version_label="v")
    s.command = [PY, "-c", "import sys; sys.exit(4)"]
    o = run_pull(s, client=c, world=world())
    assert o.error is None and [i.returncode for i in o.invocations] == [4, 4]
    assert "start_run" in c.names()


def test_execute_reports_ci_result_and_prints_json():
    c = FakeClient(gate={"passed": False, "reasons": ["pass rate 50.00% < 90.00%"],
                         "passRate": 0.5, "regressions": 0})
    w = world()
    s = settings(run_id="r", version_label="v")
    code = pipeline.execute(JOBS["run"], s, world=w, json_out=True, client=c,
                            handle_signals=False)
    assert code == 1
    body = next(b for n, b in c.calls if n == "post_ci_result")
    assert body["verdict"] == "blocked" and body["exit_code"] == 1
    assert body["sdk"]["name"] == "neens-action"
    doc = json.loads(w.out.getvalue())
    assert doc["exitCode"] == 1 and doc["buildVerdict"] == {"verdict": "blocked",
                                                            "reported": True}
    err = w.err.getvalue()
    assert "  gate:        FAILED" in err and "    - pass rate 50.00% < 90.00%" in err
    assert "{" not in err  # the JSON goes to stdout only


def test_execute_ci_result_failure_is_one_warning():
    c = FakeClient(fail={"post_ci_result": NeensApiError("POST x failed: HTTP 503 " + "y" * 400,
                                                         status=503)})
    w = world({"OTEL_EXPORTER_OTLP_ENDPOINT": "x"})
    s = settings(run_id="r", version_label="v")
    code = pipeline.execute(JOBS["run"], s, world=w, client=c, handle_signals=False)
    assert code == 0
    warnings = [line for line in w.err.getvalue().splitlines() if "could not report" in line]
    assert len(warnings) == 1
    assert warnings[0].endswith("; the exit code is unaffected")
    assert len(warnings[0]) < 320


def test_execute_no_ci_result_without_a_run():
    c = FakeClient(fail={"create_run": NeensApiError("POST /preprod-evals failed: HTTP 401",
                                                     status=401)})
    w = world()
    s = settings(create=True, dataset="ds", version_label="v")
    code = pipeline.execute(JOBS["run"], s, world=w, client=c, handle_signals=False)
    assert code == 2
    assert "post_ci_result" not in c.names()
    assert w.err.getvalue().splitlines() == ["neens: error: POST /preprod-evals failed: HTTP 401"]


def test_describe_baseline_shapes():
    assert describe_baseline(None) == "server default"
    assert describe_baseline(Baseline.decode({"kind": "preprod_run", "runId": "ppr_0"}),
                             Resolution.decode({"requested": "branch:main",
                                                "resolved": "preprod_run", "detail": "newest"})
                             ) == "run ppr_0 — branch:main: newest"
    assert describe_baseline(Baseline.decode({"kind": "prod_window", "range": "7d"}),
                             Resolution.decode({"requested": "branch:main",
                                                "resolved": "prod_window", "detail": "no run"})
                             ) == \
        "production window (7d) — branch:main fell back: no run"


def test_a_timed_out_agent_hint_names_the_deadline_in_force():
    """The run's per-item deadline reaches the report: the hint says what to raise from."""
    from neens_action.report.build.eval import build_eval_report

    # it_1 hangs, it_2 answers: not every agent failed, so the run is judged, not errored
    sleepy = [PY, "-c", "import sys, time; time.sleep(30 if 'q1' in sys.stdin.read() else 0)"]
    o = run_pull(settings(run_id="r", version_label="v", command=sleepy, timeout=1.0),
                 client=FakeClient(items=[{"item_id": "it_1", "input": "q1"},
                                          {"item_id": "it_2", "input": "q2"}]), world=world())
    timed_out = {inv.item_id for inv in o.invocations if inv.timed_out}
    assert o.agent_timeout == 1.0 and timed_out == {"it_1"}
    hints = build_eval_report(o).hints
    assert "Raise the `timeout` input (now 1 s) or make the agent answer faster." in hints
