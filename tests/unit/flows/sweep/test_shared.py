"""Push-sweep flows (preview/start/get/decide) and their settings: parsing, bodies, polling,
and the exit code ``verdict.decide_sweep`` gives what they record."""

from __future__ import annotations

import io

import pytest

from neens_action import verdict
from neens_action.api.sweep_comparison import SweepComparison
from neens_action.api.sweeps import Estimate, Sweep
from neens_action.errors import NeensApiError, UsageError
from neens_action.flows.sweep import shared as flows
from neens_action.outcome import SweepOutcome
from neens_action.settings import sweep as settings_sweep
from neens_action.settings.sweep import Poll
from neens_action.world import World
from tests.fakes.clock import FakeClock


def code(out: SweepOutcome) -> int:
    """The exit code the pipeline gives this outcome (``verdict.decide_sweep``)."""
    return verdict.decide_sweep(out)[0]


class FakeClient:
    """Answers from queues; records every call."""

    def __init__(self, *, sweeps=None, comparison=None, preview=None, created=None,
                 fail: dict[str, NeensApiError] | None = None) -> None:
        self.sweeps = list(sweeps or [])
        self.comparison = comparison
        self.preview = preview
        self.created = created
        self.fail = fail or {}
        self.calls: list[tuple] = []

    def _maybe_fail(self, name: str) -> None:
        if name in self.fail:
            raise self.fail[name]

    def preview_sweep(self, body):
        self.calls.append(("preview", body))
        self._maybe_fail("preview")
        return Estimate.unwrap(self.preview)

    def create_sweep(self, body):
        self.calls.append(("create", body))
        self._maybe_fail("create")
        return Sweep.decode(self.created)

    def get_sweep(self, sweep_id):
        self.calls.append(("get", sweep_id))
        self._maybe_fail("get")
        return Sweep.decode(self.sweeps.pop(0) if len(self.sweeps) > 1 else self.sweeps[0])

    def get_sweep_comparison(self, sweep_id, bar=None, baseline_arm=None):
        self.calls.append(("comparison", sweep_id, bar, baseline_arm))
        self._maybe_fail("comparison")
        return SweepComparison.decode(self.comparison)

    def cancel_sweep(self, sweep_id, quick=False):
        self.calls.append(("cancel", sweep_id))


def world() -> World:
    return World(environ={}, err=io.StringIO(), out=io.StringIO(), clock=FakeClock())


def arm(label, passed=True, **kw):
    return {"label": label, "model": "m-" + label, "status": "completed", "passed": passed,
            "greens": 3 if passed else 1, "k": 3, "runsTerminal": 3, "runsTotal": 3, **kw}


# ---------------------------------------------------------------- parsing


def test_parse_arms_push_and_runner():
    assert settings_sweep.parse_arms(["sonnet=conn_s", " haiku = conn_h=x "], runner=False) == [
        {"label": "sonnet", "agentConnectionId": "conn_s"},
        {"label": "haiku", "agentConnectionId": "conn_h=x"},
    ]
    assert settings_sweep.parse_arms(["a=openai/gpt-oss-20b"], runner=True) == [
        {"label": "a", "model": "openai/gpt-oss-20b", "runnerMode": "runner"}]


@pytest.mark.parametrize("arms,runner,needle", [
    ([], False, "no arms"),
    (["noequals"], False, "LABEL=CONNECTION_ID"),
    (["=conn"], False, "LABEL=CONNECTION_ID"),
    (["a="], True, "LABEL=MODEL"),
    (["a=c1", "a=c2"], False, "duplicate arm label"),
    (["a=c1", "b=c1"], False, "same model twice"),
    (["a=m", "b=m"], True, "one model"),
])
def test_parse_arms_refusals(arms, runner, needle):
    with pytest.raises(UsageError, match=needle):
        settings_sweep.parse_arms(arms, runner=runner)


def test_targets_and_body_omit_unset_fields():
    assert settings_sweep.target_fields("ds_1", None, "") == {"datasetId": "ds_1"}
    with pytest.raises(UsageError, match="no sweep target"):
        settings_sweep.target_fields(None, None, None)
    with pytest.raises(UsageError, match="only one"):
        settings_sweep.target_fields("ds_1", "dv_1", None)
    body = settings_sweep.sweep_body(arms=[{"label": "a"}], target={"datasetId": "d"})
    assert body == {"arms": [{"label": "a"}], "datasetId": "d"}
    body = settings_sweep.sweep_body(arms=[], target={"scenarioSuiteId": "s"}, pass_k=3,
                                     judges=["j"],
                                     name="n", version_label="v", budget_usd=5.0)
    assert body == {"arms": [], "scenarioSuiteId": "s", "name": "n", "versionLabel": "v",
                    "passK": 3, "judgeDeploymentIds": ["j"], "budgetUsd": 5.0}


def test_value_checks():
    for bad in (-0.1, 1.5, float("nan")):
        with pytest.raises(UsageError, match="--bar"):
            settings_sweep.check_bar(bad)
    settings_sweep.check_bar(0.0)
    settings_sweep.check_bar(1.0)
    with pytest.raises(UsageError, match="--poll-interval"):
        settings_sweep.check_poll(Poll(interval=0))
    with pytest.raises(UsageError, match="--poll-interval"):
        settings_sweep.check_poll(Poll(interval=float("nan")))
    with pytest.raises(UsageError, match="--pass-k"):
        settings_sweep.check_pass_k(0)
    with pytest.raises(UsageError, match="--budget-usd"):
        settings_sweep.check_budget(-1)


# ---------------------------------------------------------------- exit codes (8.4 / 8.5)


@pytest.mark.parametrize("status,arms,require,code", [
    ("void", [arm("a")], False, 2),
    ("failed", [arm("a")], False, 2),
    ("completed", [arm("a", passed=False)], False, 0),
    ("cancelled", [], False, 0),
    ("running", [], False, 0),
    ("running", [arm("a")], True, 1),
    ("completed", [arm("a"), arm("b")], True, 0),
    ("completed", [arm("a"), arm("b", passed=False)], True, 1),
    ("completed", [arm("a"), arm("b", passed=None)], True, 1),
    ("completed", [], True, 1),
    ("void", [arm("a")], True, 2),
])
def test_state_exit_code(status, arms, require, code):
    sweep = {"status": status, "arms": arms}
    assert verdict.sweep_state_code(Sweep.decode(sweep), require_all_arms=require) == code


@pytest.mark.parametrize("comparison,require,code", [
    ({"status": "void", "comparable": False, "verdict": {"outcome": "winner"}}, False, 2),
    ({"status": "completed", "comparable": False, "verdict": {"outcome": "winner"}}, True, 2),
    ({"status": "failed", "comparable": True}, False, 2),
    ({"status": "completed", "verdict": {"outcome": "none_clear"}}, False, 0),
    ({"status": "cancelled", "verdict": {"outcome": "none_clear"}}, False, 0),
    ({"status": "running", "verdict": {"outcome": "winner"}}, True, 1),
    ({"status": "completed", "verdict": {"outcome": "winner"}}, True, 0),
    ({"status": "completed", "verdict": {"outcome": "none_clear"}}, True, 1),
    ({"status": "completed", "verdict": None}, True, 1),
])
def test_decide_exit_code(comparison, require, code):
    assert verdict.sweep_decide_code(SweepComparison.decode(comparison),
                                     require_winner=require) == code


@pytest.mark.parametrize("comparison,code", [
    ({"status": "completed", "verdict": {"outcome": "winner"}}, 0),
    ({"status": "completed_with_failures", "verdict": {"outcome": "winner"}}, 0),
    ({"status": "completed", "verdict": {"outcome": "none_clear"}}, 1),
    ({"status": "completed", "verdict": {"outcome": "unavailable"}}, 1),
    ({"status": "completed"}, 1),
    ({"status": "void", "comparable": False, "verdict": {"outcome": "winner"}}, 2),
    ({"status": "completed", "comparable": False}, 2),
    ({"status": "failed"}, 2),
    ({"status": "cancelled", "verdict": {"outcome": "winner"}}, 2),
    ({"status": "running", "verdict": {"outcome": "winner"}}, 2),
])
def test_run_exit_code(comparison, code):
    assert verdict.sweep_run_code(SweepComparison.decode(comparison)) == code


# ---------------------------------------------------------------- flows


def test_preview_flow_refusals_still_exit_0():
    client = FakeClient(preview={"estimate": {"totalRuns": 1, "perArm": []},
                                 "refusals": ["budget"]})
    out = flows.preview_flow(client, {"arms": []}, world=world())
    assert code(out) == 0 and out.refusals == ["budget"] and out.estimate.total_runs == 1


def test_preview_flow_api_error_exit_2():
    err = NeensApiError("POST /model-sweeps/preview failed: HTTP 404: no such dataset",
                        status=404)
    out = flows.preview_flow(FakeClient(fail={"preview": err}), {}, world=world())
    assert code(out) == 2 and "no such dataset" in out.error


def test_start_without_wait_judges_the_create_response():
    created = {"id": "msw-1", "status": "pending", "passK": 3, "arms": [arm("a", passed=None)]}
    client = FakeClient(created=created)
    w = world()
    out = flows.start_flow(client, {"arms": [{}, {}]}, wait=False, require_all_arms=False,
                           poll=Poll(), world=w)
    assert code(out) == 0 and out.sweep_id == "msw-1"
    assert [c[0] for c in client.calls] == ["create"]
    log = w.err.getvalue()
    assert "Created sweep msw-1 (2 arms x k=3)" in log and "neens sweep get msw-1" in log


def test_start_inline_void_exits_2_without_wait():
    created = {"id": "msw-1", "status": "void", "voidReason": "x", "arms": []}
    out = flows.start_flow(FakeClient(created=created), {"arms": []}, wait=False,
                           require_all_arms=False, poll=Poll(), world=world())
    assert code(out) == 2 and "void" in out.error


def test_start_budget_refusal_is_exit_2_with_server_sentence():
    err = NeensApiError("POST /model-sweeps failed: HTTP 422: the estimate $12.00 is above "
                        "the budget $5.00", status=422)
    out = flows.start_flow(FakeClient(fail={"create": err}), {"arms": []}, wait=True,
                           require_all_arms=False, poll=Poll(), world=world())
    assert code(out) == 2 and "above the budget $5.00" in out.error


def test_require_all_arms_polls_with_backoff_and_judges_arms():
    running = {"id": "msw-1", "status": "running", "arms": [arm("a", passed=None)]}
    done = {"id": "msw-1", "status": "completed", "arms": [arm("a"), arm("b", passed=False)]}
    client = FakeClient(created=running, sweeps=[running, running, running, done])
    w = world()
    out = flows.start_flow(client, {"arms": [{}]}, wait=False, require_all_arms=True,
                           poll=Poll(interval=1.0, timeout=100), world=w)
    assert code(out) == 1
    assert w.clock.sleeps == [0.25, 0.5, 1.0]  # 4 polls: the first is immediate


def test_poll_timeout_is_not_an_error_for_get_but_fails_require_all_arms():
    running = {"id": "msw-1", "status": "running", "arms": [arm("a", passed=None)]}
    out = flows.get_flow(FakeClient(sweeps=[running]), "msw-1", wait=True,
                         require_all_arms=False, poll=Poll(interval=1, timeout=3),
                         world=world())
    assert code(out) == 0 and out.error is None
    assert any("poll timeout" in w for w in out.warnings)
    out = flows.get_flow(FakeClient(sweeps=[running]), "msw-1", wait=False,
                         require_all_arms=True, poll=Poll(interval=1, timeout=3), world=world())
    assert code(out) == 1


def test_decide_passes_bar_and_baseline_and_never_reranks():
    comparison = {"sweepId": "msw-1", "status": "completed",
                  "verdict": {"outcome": "none_clear", "reason": "no arm clears"}}
    client = FakeClient(comparison=comparison)
    out = flows.decide_flow(client, "msw-1", bar=0.8, baseline_arm="arm_2", wait=False,
                            require_winner=False, poll=Poll(), world=world())
    assert code(out) == 0
    assert client.calls == [("comparison", "msw-1", 0.8, "arm_2")]
    out = flows.decide_flow(FakeClient(comparison=comparison, sweeps=[{"status": "completed"}]),
                            "msw-1", bar=None, baseline_arm=None, wait=False,
                            require_winner=True, poll=Poll(), world=world())
    assert code(out) == 1


def test_decide_void_exits_2_before_reading_the_verdict():
    comparison = {"sweepId": "msw-1", "status": "completed", "comparable": False,
                  "voidReason": "judges differ", "verdict": {"outcome": "winner"}}
    out = flows.decide_flow(FakeClient(comparison=comparison), "msw-1", bar=None,
                            baseline_arm=None, wait=False, require_winner=False, poll=Poll(),
                            world=world())
    assert code(out) == 2 and "void" in out.error


def test_interrupt_while_polling_exits_130():
    from neens_action.errors import Interrupted

    class Boom(FakeClient):
        def get_sweep(self, sweep_id):
            raise Interrupted()

    out = flows.get_flow(Boom(), "msw-1", wait=True, require_all_arms=False, poll=Poll(),
                         world=world())
    assert code(out) == 130 and out.interrupted and out.error == "interrupted"
