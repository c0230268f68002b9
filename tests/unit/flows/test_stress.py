"""The stress flow's pure parts and its orchestration with a fake client at the edge."""

from __future__ import annotations

import io
from typing import Any

import pytest

from neens_action.api.answers import Gate, Run
from neens_action.api.comparison import Comparison, Metrics
from neens_action.api.suites import Suite
from neens_action.errors import NeensApiError, RunError, UsageError
from neens_action.flows import stress
from neens_action.outcome import Outcome
from neens_action.policy import apply_policy
from neens_action.settings import stress as stress_settings
from neens_action.settings.provenance import Provenance
from neens_action.world import World
from tests.fakes.clock import FakeClock

GOOD = {"failure_modes": ["fm_a"], "version_label": "v1", "base_url": "http://n.test",
        "command": ["agent"]}


def world() -> World:
    return World(environ={}, err=io.StringIO(), out=io.StringIO(), clock=FakeClock())


def settings(**kw: Any) -> stress_settings.StressSettings:
    return stress_settings.StressSettings(**{**GOOD, **kw})


def test_bodies_omit_what_was_not_given() -> None:
    assert stress.suite_body("n", ["fm_a"]) == {"name": "n", "failure_mode_ids": ["fm_a"]}
    assert stress.suite_body("n", ["fm_a"], per_mode=3, strategies=["escalate"], replay=False,
                             connection="llm") == {
        "name": "n", "failure_mode_ids": ["fm_a"], "per_mode": 3, "strategies": ["escalate"],
        "include_replay": False, "connection_id": "llm"}
    assert stress.regenerate_body() == {}
    assert stress.regenerate_body(replay=True, per_mode=1) == {"per_mode": 1,
                                                               "include_replay": True}


def test_strategies_and_ids_are_parsed_and_checked() -> None:
    assert stress_settings.parse_strategies(["Escalate, boundary", "escalate"]) == ["escalate",
                                                                           "boundary"]
    with pytest.raises(UsageError, match="replay is always on"):
        stress_settings.parse_strategies(["replay"])
    with pytest.raises(UsageError, match="is not a strategy"):
        stress_settings.parse_strategies(["sideways"])
    assert stress_settings.ids(["fm_a,fm_b", " fm_a "], "--failure-mode") == ["fm_a", "fm_b"]
    with pytest.raises(UsageError, match="is not an id"):
        stress_settings.ids(["fm\ta"], "--failure-mode")
    stress_settings.check_per_mode(25)
    with pytest.raises(UsageError, match="1 to 25"):
        stress_settings.check_per_mode(26)


@pytest.mark.parametrize(
    ("kw", "needle"),
    [
        ({"failure_modes": []}, "nothing to attack"),
        ({"command": []}, "no agent"),
        ({"agent_connection": "c"}, "exclude each other"),
        ({"suite_id": "sts_1", "per_mode": 2}, "--suite-id reuses"),
        ({"version_label": None}, "needs --version-label"),
        ({"version_label": " "}, "--version-label is empty"),
        ({"runner_mode": "fast"}, "--runner-mode must be push or runner"),
        ({"ready_timeout": -1}, "--ready-timeout"),
        ({"base_url": ""}, "no Neens base URL"),
        ({"baseline": "nope"}, "is not a baseline"),
    ],
)
def test_run_settings_refuse_bad_input(kw: dict, needle: str) -> None:
    with pytest.raises(UsageError, match=needle):
        settings(**kw).validate_stress({})


def test_run_settings_defaults_and_ci_label() -> None:
    s = settings(version_label=None, gates="active").validate_stress(
        {"GITHUB_ACTIONS": "true", "GITHUB_SHA": "abcdef0123456789"})
    assert s.version_label == "abcdef012345"
    assert s.gates is None and s.gates_wire is None  # a stress test never selects eval gates
    assert s.dataset is None and s.create is False
    push = settings(command=[], agent_connection=" conn ").validate_stress({})
    assert push.push and push.agent_connection == "conn"
    launch_only = settings(command=[], failure_modes=[]).validate_stress({}, drive=False)
    assert launch_only.version_label == "v1"


def test_launch_body_carries_the_preprod_knobs() -> None:
    s = settings(agent_connection="conn", command=[], judges=["j_1"], max_regressions=0,
                 min_pass_rate=0.9, baseline="prod:30d", name="my run").validate_stress({})
    prov = Provenance(git_sha="abcdef0", branch="feat")
    body = stress.launch_body(s, prov)
    assert body == {
        "version_label": "v1", "name": "my run", "runner_mode": "push",
        "agent_connection_id": "conn", "judge_deployment_ids": ["j_1"],
        "baseline": {"kind": "prod_window", "range": "30d"},
        "gate": {"max_regressions": 0, "min_pass_rate": 0.9},
        "git_sha": "abcdef0", "branch": "feat", "source": "manual",
    }
    pull = stress.launch_body(settings().validate_stress({}), Provenance())
    assert pull == {"version_label": "v1"}  # the server defaults the runner mode


def progress(answer: dict) -> str:
    return stress.suite_progress(Suite.decode(answer))


def test_suite_progress_lines() -> None:
    assert progress({"status": "generating",
                                  "progress": {"done": 2, "total": 8}}) == "generating (2/8)"
    assert progress({"status": "generating"}) == "generating"
    assert progress({"status": "ready", "scenarioCount": 1}) == "ready (1 scenario)"
    assert progress({"status": "ready", "scenarios": [{}, {}]}) == "ready (2 scenarios)"
    assert progress({"status": "failed", "error": "boom"}) == "failed: boom"


class FakeClient:
    """The client surface the stress flow uses; records the calls."""

    base_url = "http://n.test"
    timeout = 30.0

    def __init__(self, suites: list[dict], *, launch_error: NeensApiError | None = None,
                 run_status: str = "completed") -> None:
        self.suites = suites
        self.launch_error = launch_error
        self.run_status = run_status
        self.calls: list[tuple[str, Any]] = []

    def create_suite(self, body: dict) -> Suite:
        self.calls.append(("create_suite", body))
        return Suite.decode({"id": "sts_1", "status": "generating"})

    def get_suite(self, suite_id: str) -> Suite:
        self.calls.append(("get_suite", suite_id))
        return Suite.decode(self.suites.pop(0) if len(self.suites) > 1 else self.suites[0])

    def launch_suite(self, suite_id: str, body: dict) -> Run:
        self.calls.append(("launch_suite", body))
        if self.launch_error:
            raise self.launch_error
        return Run.decode({"id": "ppr_1", "status": "awaiting_traces", "runnerMode": body.get(
            "runner_mode", "runner"), "versionLabel": body["version_label"]})

    def trigger_push(self, run_id: str) -> Run:
        self.calls.append(("trigger_push", run_id))
        return Run.decode({"id": run_id, "status": self.run_status, "completed": 1, "total": 1})

    def get_gate(self, run_id: str) -> Gate:
        self.calls.append(("get_gate", run_id))
        return Gate.decode({"passed": True, "reasons": []})

    def get_comparison(self, run_id: str, baseline: str | None = None) -> Comparison:
        self.calls.append(("get_comparison", run_id))
        return Comparison.decode({"baseline": {"compared": None}, "regressions": [],
                                  "candidate": {}})

    def get_metrics(self, run_id: str) -> Metrics:
        self.calls.append(("get_metrics", run_id))
        return Metrics.decode({"metrics": []})

    def cancel_run(self, run_id: str, *, quick: bool = False) -> None:
        self.calls.append(("cancel_run", run_id))


READY = {"id": "sts_1", "status": "ready", "scenarioCount": 2, "scenarios": [{}, {}],
         "skippedStrategies": [{"strategy": "boundary", "reason": "no LLM"}]}


def push_settings(**kw: Any) -> stress_settings.StressSettings:
    return settings(command=[], agent_connection="conn", poll_interval=1.0,
                    **kw).validate_stress({})


def test_run_stress_push_generates_waits_launches_and_gates() -> None:
    client = FakeClient([{"id": "sts_1", "status": "generating",
                          "progress": {"done": 0, "total": 2}}, READY])
    w = world()
    out = stress.run_stress(push_settings(), client=client, world=w)
    assert out.error is None and out.mode == "stress"
    assert out.run_id == "ppr_1" and out.suite.raw == READY
    assert out.gate == Gate.decode({"passed": True, "reasons": []})
    names = [c[0] for c in client.calls]
    assert names == ["create_suite", "get_suite", "get_suite", "launch_suite", "trigger_push",
                     "get_gate"]
    assert client.calls[0][1] == {"name": "stress v1", "failure_mode_ids": ["fm_a"]}
    assert client.calls[3][1]["runner_mode"] == "push"
    log = w.err.getvalue()
    assert "suite status: generating (0/2)" in log and "suite status: ready (2 scenarios)" in log
    assert "neens: warning: strategy boundary skipped: no LLM" in log


def test_a_failed_generation_is_a_run_error_with_the_reason() -> None:
    client = FakeClient([{"id": "sts_1", "status": "failed", "error": "no exemplars"}])
    out = stress.run_stress(push_settings(), client=client, world=world())
    assert out.error == "scenario generation failed for suite sts_1: no exemplars"
    assert out.run_id == "" and "launch_suite" not in [c[0] for c in client.calls]
    assert out.suite is not None and out.suite.status == "failed"  # the last state read


def test_a_suite_that_never_gets_ready_times_out() -> None:
    client = FakeClient([{"id": "sts_1", "status": "generating"}])
    out = stress.run_stress(push_settings(ready_timeout=30, suite_id=None), client=client,
                            world=world())
    assert out.error is not None
    assert "was not ready within 30s" in out.error and "--ready-timeout" in out.error


def test_launching_a_non_ready_suite_is_one_clear_error() -> None:
    err = NeensApiError("POST ... failed: HTTP 409", status=409,
                        detail="scenario suite sts_1 is generating, not ready")
    client = FakeClient([READY], launch_error=err)
    with pytest.raises(RunError, match="cannot launch scenario suite sts_1: scenario suite "
                                       "sts_1 is generating, not ready"):
        stress.launch(client, "sts_1", {"version_label": "v"}, world=world())
    out = stress.run_stress(push_settings(suite_id="sts_1", failure_modes=[]), client=client,
                            world=world())
    assert out.error is not None and out.error.startswith("cannot launch scenario suite")
    assert "create_suite" not in [c[0] for c in client.calls]  # --suite-id reuses it


def test_a_failed_run_is_a_run_error_but_the_gate_is_still_read() -> None:
    client = FakeClient([READY], run_status="failed")
    out = stress.run_stress(push_settings(), client=client, world=world())
    assert out.error == "run ppr_1 ended with status 'failed'"
    assert out.gate is not None


def test_policy_gates_block_is_ignored_with_a_warning() -> None:
    from neens_action.policy import GatePolicy

    policy = GatePolicy.from_dict({"gate": {"max_regressions": 0},
                                   "gates": {"enforce": ["gate-a"]},
                                   "rules": [{"min_pass_rate": 0.5, "severity": "block"}]})
    client = FakeClient([READY])
    out: Outcome = stress.run_stress(push_settings(), client=client, world=world(),
                                     policy=policy)
    assert any("gates block is ignored" in w for w in out.warnings)
    launch = next(body for name, body in client.calls if name == "launch_suite")
    assert launch["gate"] == {"max_regressions": 0}
    assert "gates" not in launch and "gates_policy" not in launch
    apply_policy(policy, out)  # the pipeline evaluates the rules after the flow, as for push
    assert out.policy_eval is not None
    assert {"get_comparison", "get_metrics"} <= {c[0] for c in client.calls}
