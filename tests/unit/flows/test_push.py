"""The push flow (spec 7.2) against a fake client at the HTTP edge: call order, E1 body,
inline vs polled trigger, error paths, cancellation, policy evaluation, library entry."""

from __future__ import annotations

import io
from typing import Any

import pytest

from neens_action.api.answers import Gate, Run
from neens_action.api.comparison import Comparison, Metrics
from neens_action.errors import Interrupted, NeensApiError, PolicyError, UsageError
from neens_action.flows.push import push_body, run_push
from neens_action.library import run_push_eval
from neens_action.policy import GatePolicy, apply_policy
from neens_action.settings.provenance import Provenance
from neens_action.settings.push import EvalPushSettings
from neens_action.world import World
from tests.fakes.clock import FakeClock


def make_world(environ: dict[str, str] | None = None) -> World:
    return World(environ=environ or {}, err=io.StringIO(), out=io.StringIO(), clock=FakeClock())


def terminal(status: str = "completed", **extra: Any) -> dict[str, Any]:
    return {"id": "ppr_1", "status": status, "completed": 6, "total": 6,
            "aggregate": {"passRate": 1.0, "avgScore": 0.9, "failed": 0, "regressions": 0,
                          "baselineCompared": True}, **extra}


class FakeClient:
    base_url = "http://neens.test"

    def __init__(self, *, created: dict[str, Any] | None = None, trigger: Any = None,
                 polls: list[dict[str, Any]] | None = None, gate: Any = None,
                 comparison: Any = None, metrics: Any = None) -> None:
        self.timeout = 30.0
        self.calls: list[tuple[str, Any]] = []
        self.created = created if created is not None else {"id": "ppr_1",
                                                            "status": "awaiting_traces",
                                                            "datasetId": "ds_1"}
        self.trigger = trigger if trigger is not None else terminal()
        self.polls = list(polls or [])
        self.gate = gate if gate is not None else {"passed": True, "reasons": [],
                                                   "regressions": 0, "passRate": 1.0}
        self.comparison = comparison if comparison is not None else {"regressions": []}
        self.metrics = metrics if metrics is not None else {"metrics": []}

    def _answer(self, value: Any) -> Any:
        if isinstance(value, BaseException):
            raise value
        return value

    def create_run(self, body: dict[str, Any]) -> Run:
        self.calls.append(("create", body))
        return Run.decode(self._answer(self.created), items=False)

    def trigger_push(self, run_id: str) -> Run:
        self.calls.append(("trigger", self.timeout))
        return Run.decode(self._answer(self.trigger))

    def get_run(self, run_id: str) -> Run:
        self.calls.append(("get_run", run_id))
        return Run.decode(self._answer(self.polls.pop(0)))

    def get_gate(self, run_id: str) -> Gate:
        self.calls.append(("gate", run_id))
        return Gate.decode(self._answer(self.gate))

    def get_comparison(self, run_id: str) -> Comparison:
        self.calls.append(("comparison", run_id))
        return Comparison.decode(self._answer(self.comparison))

    def get_metrics(self, run_id: str) -> Metrics:
        self.calls.append(("metrics", run_id))
        return Metrics.decode(self._answer(self.metrics))

    def cancel_run(self, run_id: str, *, quick: bool = False) -> None:
        self.calls.append(("cancel", quick))

    def post_ci_result(self, run_id: str, body: dict[str, Any], *, quick: bool = False) -> None:
        self.calls.append(("ci_result", body))

    def names(self) -> list[str]:
        return [name for name, _ in self.calls]


def settings(**kw: Any) -> EvalPushSettings:
    base = {"base_url": "http://neens.test", "dataset": "ds_1", "version_label": "v2",
            "agent_connection": "conn_local"}
    base.update(kw)
    return EvalPushSettings(**base)


# --- settings ----------------------------------------------------------------------------------


@pytest.mark.parametrize(("kw", "message"), [
    ({"agent_connection": None}, "neens eval push needs --agent-connection ID"),
    ({"agent_connection": "  "}, "neens eval push needs --agent-connection ID"),
    ({"dataset": None}, "neens eval push needs --dataset ID (or eval gates"),
    ({"version_label": None}, "neens eval push needs --version-label LABEL"),
    ({"version_label": " "}, "--version-label is empty"),
    ({"base_url": ""}, "no Neens base URL"),
    ({"min_pass_rate": 2.0}, "--min-pass-rate must be at most 1"),
    ({"baseline": "main"}, "is not a baseline"),
    ({"poll_interval": 0.0}, "--poll-interval must be greater than 0"),
    ({"gates": ","}, "names no gate"),
])
def test_settings_errors(kw: dict[str, Any], message: str) -> None:
    with pytest.raises(UsageError, match=message.replace("(", r"\(").replace(")", r"\)")):
        settings(**kw).validate()


def test_settings_gates_make_dataset_and_label_optional() -> None:
    s = settings(dataset=None, version_label=None, gates="active").validate()
    assert s.gates_wire == "active" and s.creates_run
    s = settings(dataset=None, version_label=None).validate(policy_gates=True)
    assert s.declared_gates
    with pytest.raises(UsageError, match="cannot be combined with the policy"):
        settings(gates="g1").validate(policy_gates=True)


def test_settings_from_flags_reads_env() -> None:
    env = {"NEENS_BASE_URL": "http://x.test/", "NEENS_API_KEY": "nk_live_secret",
           "NEENS_GATE_POLICY": "pol.json"}
    s = EvalPushSettings.from_flags({"agent_connection": "c", "dataset": "d",
                                     "version_label": "v", "poll_timeout": 60.0}, env)
    s.validate()
    assert (s.base_url, s.gate_policy, s.poll_timeout) == ("http://x.test", "pol.json", 60.0)
    assert "nk_live_secret" not in repr(s)


# --- body --------------------------------------------------------------------------------------


def test_push_body_fields_and_gate_merge() -> None:
    pol = GatePolicy.from_dict({"gate": {"max_regressions": 3, "cost": None},
                                "rules": [{"max_regressions": 0}]})
    s = settings(max_regressions=0, min_pass_rate=0.9, baseline="prod:30d", name="nightly",
                 dataset_version_id="dsv_2").validate()
    prov = Provenance(git_sha="abcdef1234567", branch="feat", in_ci=True)
    body = push_body(s, prov, pol)
    assert body == {
        "name": "nightly", "version_label": "v2", "dataset_id": "ds_1",
        "dataset_version_id": "dsv_2", "baseline": {"kind": "prod_window", "range": "30d"},
        "gate": {"max_regressions": 0, "min_pass_rate": 0.9}, "git_sha": "abcdef1234567",
        "branch": "feat", "source": "ci", "runner_mode": "push",
        "agent_connection_id": "conn_local",
    }


def test_push_body_ci_default_baseline_and_gates_policy() -> None:
    pol = GatePolicy.from_dict({"gates": {"enforce": ["gate-refund"]}})
    s = settings(version_label=None, dataset=None).validate(policy_gates=True)
    prov = Provenance(git_sha="abcdef1234567890", default_branch="main", in_ci=True)
    body = push_body(s, prov, pol)
    assert body["version_label"] == "abcdef123456"
    assert body["gates_policy"] == {"mode": "exact", "severity": "block",
                                    "enforce": [{"id": "gate-refund"}]}
    assert "baseline" not in body  # no dataset: gates are graded on their own thresholds
    assert "gate" not in body
    body = push_body(settings().validate(), prov, None)
    assert body["baseline"] == {"kind": "branch", "value": "main"}


# --- flow --------------------------------------------------------------------------------------


def test_inline_trigger_skips_polling() -> None:
    client = FakeClient()
    world = make_world()
    outcome = run_push(settings(poll_timeout=120.0).validate(), client=client, world=world)
    assert client.names() == ["create", "trigger", "gate"]
    assert client.calls[1] == ("trigger", 120.0)  # the trigger's deadline is the poll budget
    assert client.timeout == 30.0  # the shared client is untouched
    assert outcome.error is None and outcome.run_id == "ppr_1" and outcome.mode == "push"
    assert outcome.run.status == "completed"
    assert outcome.gate == Gate.decode(client.gate) and outcome.policy_eval is None
    log = world.err.getvalue()
    assert "Created run ppr_1" in log and "inline: nothing to poll" in log


def test_async_trigger_polls_until_terminal() -> None:
    running = {"id": "ppr_1", "status": "running", "completed": 0, "total": 6}
    client = FakeClient(trigger=running, polls=[running, dict(running, completed=3),
                                                terminal("completed_with_regressions")])
    pol = GatePolicy.from_dict({"rules": [{"min_pass_rate": 0.5}]})
    outcome = run_push(settings().validate(), client=client, world=make_world(), policy=pol)
    assert client.names() == ["create", "trigger", "get_run", "get_run", "get_run", "gate",
                              "comparison", "metrics"]
    assert outcome.run.status == "completed_with_regressions"
    apply_policy(pol, outcome)  # what the pipeline does after the flow
    assert outcome.policy_eval is not None and not outcome.policy_eval.blocked
    assert outcome.policy_identity is None  # a dict policy has no file identity


def test_poll_timeout_is_a_run_error() -> None:
    running = {"id": "ppr_1", "status": "running"}
    client = FakeClient(trigger=running, polls=[running] * 100)
    outcome = run_push(settings(poll_timeout=3.0, poll_interval=1.0).validate(), client=client,
                       world=make_world())
    assert outcome.error is not None and "did not finish within" in outcome.error
    assert "cancel" not in client.names()  # it was triggered: Neens owns it now


def test_failed_run_is_an_error_but_the_gate_is_fetched() -> None:
    failed = terminal("failed", error="every call to the agent failed: connection refused")
    client = FakeClient(trigger=failed, gate={"passed": False, "reasons": ["run failed"]})
    outcome = run_push(settings().validate(), client=client, world=make_world())
    assert outcome.error == ("run ppr_1 ended with status 'failed': every call to the agent "
                             "failed: connection refused")
    assert client.names() == ["create", "trigger", "gate"]


def test_trigger_transport_failure_recovers_when_the_run_moved_on() -> None:
    lost = NeensApiError("POST /preprod-evals/ppr_1/run failed: no response within 30s")
    client = FakeClient(trigger=lost, polls=[{"id": "ppr_1", "status": "running"},
                                             terminal()])
    world = make_world()
    outcome = run_push(settings().validate(), client=client, world=world)
    assert outcome.error is None
    assert client.names() == ["create", "trigger", "get_run", "get_run", "gate"]
    assert "the trigger took effect: polling it" in world.err.getvalue()


def test_trigger_transport_failure_before_it_took_effect() -> None:
    lost = NeensApiError("POST /preprod-evals/ppr_1/run failed: connection reset")
    client = FakeClient(trigger=lost, polls=[{"id": "ppr_1", "status": "awaiting_traces"}])
    outcome = run_push(settings().validate(), client=client, world=make_world())
    assert outcome.error == "POST /preprod-evals/ppr_1/run failed: connection reset"
    assert client.names() == ["create", "trigger", "get_run", "cancel"]


def test_trigger_http_error_cancels_the_untriggered_run() -> None:
    conflict = NeensApiError("POST /preprod-evals/ppr_1/run failed: HTTP 409", status=409)
    client = FakeClient(trigger=conflict)
    outcome = run_push(settings().validate(), client=client, world=make_world())
    assert outcome.error is not None and "HTTP 409" in outcome.error
    assert client.names() == ["create", "trigger", "cancel"]


def test_create_error_leaves_no_run() -> None:
    client = FakeClient(created=NeensApiError("POST /preprod-evals failed: HTTP 404: dataset "
                                              "ds_1 not found", status=404))
    outcome = run_push(settings().validate(), client=client, world=make_world())
    assert outcome.run_id == "" and "HTTP 404" in (outcome.error or "")
    assert client.names() == ["create"]


def test_missing_run_id_in_create_response() -> None:
    client = FakeClient(created={"status": "awaiting_traces"})
    outcome = run_push(settings().validate(), client=client, world=make_world())
    assert outcome.error == "the server created no run (the response carried no 'id')"


def test_gates_policy_not_acknowledged_is_an_error_with_a_run() -> None:
    pol = GatePolicy.from_dict({"gates": {"enforce": ["gate-refund"]}})
    client = FakeClient(created={"id": "ppr_1", "status": "awaiting_traces", "gates": []})
    s = settings().validate(policy_gates=True)
    outcome = run_push(s, client=client, world=make_world(), policy=pol)
    assert outcome.run_id == "ppr_1"
    assert "gatesPolicy" in (outcome.error or "")
    assert client.names() == ["create", "cancel"]


def test_drift_from_create_response_reaches_the_policy() -> None:
    drift = [{"gateId": "gate-x", "kind": "missing", "message": "gate-x is not in Neens"}]
    created = {"id": "ppr_1", "status": "awaiting_traces", "datasetId": "ds_1", "gates": [],
               "gatesPolicy": {"mode": "exact"}, "gateDrift": drift}
    pol = GatePolicy.from_dict({"gates": {"enforce": ["gate-x"]}})
    client = FakeClient(created=created)  # the terminal run carries no drift keys
    world = make_world()
    outcome = run_push(settings().validate(policy_gates=True), client=client, world=world,
                       policy=pol)
    assert "gate drift (BLOCKING): gate-x is not in Neens" in world.err.getvalue()
    apply_policy(pol, outcome)
    assert outcome.policy_eval.blocked
    assert [r.dimension for r in outcome.policy_eval.results] == ["gate_drift:gate-x"]


def test_interrupt_cancels_the_run() -> None:
    client = FakeClient(trigger=Interrupted("interrupted by SIGTERM"))
    outcome = run_push(settings().validate(), client=client, world=make_world())
    assert outcome.interrupted and outcome.error
    assert client.names() == ["create", "trigger", "cancel"]
    assert client.calls[-1] == ("cancel", True)


def test_policy_fetch_failures_degrade() -> None:
    client = FakeClient(comparison=NeensApiError("GET comparison failed: HTTP 500", status=500))
    pol = GatePolicy.from_dict({"rules": [{"max_regressions": 0}], "on_missing_baseline": "block"})
    outcome = run_push(settings().validate(), client=client, world=make_world(), policy=pol)
    assert outcome.error is None
    apply_policy(pol, outcome)
    r = outcome.policy_eval.results[0]
    assert (r.dimension, r.status, r.observed) == ("regressions", "pass", 0)  # run aggregate


# --- library -----------------------------------------------------------------------------------


def test_run_push_eval_reports_and_returns_exit_code(tmp_path: Any) -> None:
    path = tmp_path / "gate.json"
    path.write_text('{"rules": [{"min_avg_score": 0.95}], "gate": {"min_pass_rate": 0.5}}')
    pol = GatePolicy.from_file(path)
    client = FakeClient()
    world = make_world()
    outcome = run_push_eval(client=client, dataset_id="ds_1", version_label="v2",
                            agent_connection_id="conn_local",
                            baseline={"kind": "prod_window", "range": "7d"},
                            gate={"max_regressions": 0, "min_pass_rate": 0.9}, policy=pol,
                            world=world)
    body = client.calls[0][1]
    assert body["baseline"] == {"kind": "prod_window", "range": "7d"}
    assert body["gate"] == {"min_pass_rate": 0.9, "max_regressions": 0}
    assert (outcome.exit_code, outcome.build_verdict) == (1, "blocked")
    assert outcome.policy_eval.blocked
    assert outcome.policy_eval.reasons() == ["avg_score 0.9 < 0.95"]
    assert outcome.ci_result_reported
    report = client.calls[-1]
    assert report[0] == "ci_result"
    assert report[1]["verdict"] == "blocked" and report[1]["exit_code"] == 1
    assert report[1]["policy"] == {"name": "gate.json", "sha256": pol.sha256,
                                   "overridden": False}
    assert report[1]["rules"] == [{"rule": "avg_score", "observed": 0.9, "threshold": 0.95,
                                   "severity": "block", "outcome": "fail",
                                   "message": "avg_score 0.9 < 0.95"}]
    assert "Pre-prod eval ppr_1" in world.err.getvalue()


def test_run_push_eval_opt_out_and_errors() -> None:
    client = FakeClient()
    outcome = run_push_eval(client=client, dataset_id="ds_1", version_label="v2",
                            agent_connection_id="conn_local", baseline="branch:main",
                            report_ci_result=False, world=make_world())
    assert (outcome.exit_code, outcome.build_verdict) == (0, "passed")
    assert "ci_result" not in client.names()
    assert client.calls[0][1]["baseline"] == {"kind": "branch", "value": "main"}
    with pytest.raises(UsageError, match="--agent-connection"):
        run_push_eval(client=client, dataset_id="ds_1", version_label="v",
                      agent_connection_id="", world=make_world())
    with pytest.raises(PolicyError, match=r"^invalid gate argument: gate.cost.max_avg: unknown"):
        run_push_eval(client=client, dataset_id="ds_1", version_label="v",
                      agent_connection_id="c", gate={"cost": {"max_avg": 1}},
                      world=make_world())


def test_run_push_eval_errored_run_is_reported() -> None:
    client = FakeClient(trigger=terminal("failed"))
    outcome = run_push_eval(client=client, dataset_id="ds_1", version_label="v2",
                            agent_connection_id="conn_down", world=make_world())
    assert (outcome.exit_code, outcome.build_verdict) == (2, "errored")
    assert client.calls[-1][0] == "ci_result"
    assert client.calls[-1][1]["verdict"] == "errored"
