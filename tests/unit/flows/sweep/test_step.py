"""The sweep of a CI step (`flows/sweep/step.py`) against a fake client, concluded by the
pipeline with the `sweep` job: waits, verdicts, exit codes."""

from __future__ import annotations

import io
from typing import Any

import pytest

from neens_action.api.sweep_comparison import SweepComparison
from neens_action.api.sweeps import Sweep
from neens_action.errors import Interrupted, NeensApiError
from neens_action.flows.sweep.step import sweep_step
from neens_action.jobs import JOBS
from neens_action.outcome import SweepOutcome
from neens_action.pipeline import conclude
from neens_action.report.model import Report
from neens_action.settings.sweep import Poll, SweepSettings
from neens_action.world import World
from tests.fakes.clock import FakeClock

# ---------------------------------------------------------------- the sweep flow


class FakeSweepClient:
    base_url = "http://neens.test"

    def __init__(self, sweeps: list[dict[str, Any]], comparison: dict[str, Any] | None = None,
                 raise_on_get: Exception | None = None) -> None:
        self.sweeps = sweeps
        self.comparison = comparison
        self.raise_on_get = raise_on_get
        self.calls: list[tuple[Any, ...]] = []

    def create_sweep(self, body: dict[str, Any]) -> Sweep:
        self.calls.append(("create", body))
        return Sweep.decode({"id": "msw-1", "status": "pending", "passK": body.get("passK")})

    def get_sweep(self, sweep_id: str) -> Sweep:
        self.calls.append(("get", sweep_id))
        if self.raise_on_get is not None:
            raise self.raise_on_get
        return Sweep.decode(self.sweeps.pop(0) if len(self.sweeps) > 1 else self.sweeps[0])

    def get_sweep_comparison(self, sweep_id: str, bar: float | None = None,
                             baseline_arm: str | None = None) -> SweepComparison:
        self.calls.append(("comparison", sweep_id, bar, baseline_arm))
        return SweepComparison.decode(dict(self.comparison or {}))

    def cancel_sweep(self, sweep_id: str, quick: bool = False) -> Sweep:
        self.calls.append(("cancel", sweep_id, quick))
        return Sweep.decode({"id": sweep_id, "status": "cancelled"})


def _world() -> World:
    return World(environ={}, err=io.StringIO(), out=io.StringIO(), clock=FakeClock())


def _comparison(outcome: str) -> dict[str, Any]:
    winner = {"label": "mini"} if outcome == "winner" else None
    return {"sweepId": "msw-1", "status": "completed", "comparable": True,
            "verdict": {"outcome": outcome, "reason": f"{outcome} reason", "winner": winner},
            "arms": [{"armId": "a1", "label": "mini", "model": "gpt-4o-mini",
                      "quality": {"rate": 1.0, "n": 4}, "passK": {"greens": 1, "k": 1,
                                                                  "passed": True},
                      "cost": {"priced": True, "costPerCaseUsd": 0.0001}}]}


def _plan(**kw: Any) -> SweepSettings:
    body = {"arms": [{"label": "mini", "agentConnectionId": "c1"}], "datasetId": "ds",
            "passK": 1}
    kw.setdefault("require_winner", False)
    return SweepSettings(base_url="http://neens.test", body=body, push=True,
                         poll=Poll(interval=1.0, timeout=30.0), **kw)


def _run(client: FakeSweepClient, settings: SweepSettings) -> tuple[SweepOutcome, Report]:
    """The flow, then the pipeline's conclusion with the ``sweep`` job (verdict + report)."""
    world = _world()
    out = sweep_step(settings, client=client, world=world)  # type: ignore[arg-type]
    return out, conclude(out, job=JOBS["sweep"], world=world)


@pytest.mark.parametrize(("verdict", "require", "code"), [
    ("winner", False, 0), ("winner", True, 0), ("none_clear", False, 0),
    ("none_clear", True, 1)])
def test_push_sweep_waits_then_reads_the_servers_verdict(verdict: str, require: bool,
                                                         code: int) -> None:
    client = FakeSweepClient([{"id": "msw-1", "status": "running"},
                              {"id": "msw-1", "status": "completed"}], _comparison(verdict))
    out, report = _run(client, _plan(bar=0.8, baseline_arm="a1", require_winner=require))
    assert (out.exit_code, out.error, out.command) == (code, None, "run")
    assert ("comparison", "msw-1", 0.8, "a1") in client.calls
    assert ("require-winner: no arm clears the bar" in report.warnings) == (code == 1)
    assert report.outputs["winner"] == ("mini" if verdict == "winner" else "")
    assert report.outputs["sweep-id"] == "msw-1" and report.outputs["run-id"] == ""
    assert out.build_verdict == ("passed" if code == 0 else "blocked")
    doc = JOBS["sweep"].to_json(out, report)
    assert doc["mode"] == "sweep" and doc["sweepId"] == "msw-1"
    assert doc["winner"] == (report.outputs["winner"] or None)


def test_push_sweep_not_finished_in_time_is_an_error_not_a_pass() -> None:
    client = FakeSweepClient([{"id": "msw-1", "status": "running"}])
    out, _ = _run(client, _plan())
    assert out.exit_code == 2 and out.error.startswith("sweep msw-1 did not finish within "
                                                       "poll-timeout 30s (status=running)")
    assert not any("poll timeout" in w for w in out.warnings)
    assert not any(c[0] in ("comparison", "cancel") for c in client.calls)


def test_void_push_sweep_exits_2_without_reading_a_verdict() -> None:
    client = FakeSweepClient([{"id": "msw-1", "status": "void"}], _comparison("winner"))
    out, report = _run(client, _plan(require_winner=True))
    assert out.exit_code == 2 and "void" in out.error
    assert not any(c[0] == "comparison" for c in client.calls)
    assert report.outputs["winner"] == ""


def test_interrupted_push_sweep_is_cancelled() -> None:
    client = FakeSweepClient([], raise_on_get=Interrupted("interrupted by SIGTERM"))
    out, _ = _run(client, _plan())
    assert out.interrupted and (out.exit_code, out.build_verdict) == (130, "errored")
    assert ("cancel", "msw-1", True) in client.calls


def test_api_error_on_create_is_exit_2() -> None:
    class Refusing(FakeSweepClient):
        def create_sweep(self, body: dict[str, Any]) -> dict[str, Any]:
            raise NeensApiError("POST /model-sweeps failed: HTTP 422: over budget", status=422)

    out, _ = _run(Refusing([]), _plan())
    assert out.exit_code == 2 and "over budget" in out.error


@pytest.mark.parametrize(("require", "code"), [(False, 0), (True, 1)])
def test_runner_sweep_without_a_winner_passes_unless_required(require: bool,
                                                              code: int) -> None:
    out = SweepOutcome(command="run", sweep_id="msw-2",
                       comparison=SweepComparison.decode(_comparison("none_clear")),
                       require_winner=require)
    conclude(out, job=JOBS["sweep"], world=_world())
    assert out.exit_code == code
    errored = SweepOutcome(command="run", error="sweep msw-2 is void", require_winner=require,
                           comparison=SweepComparison.decode({"status": "void"}))
    conclude(errored, job=JOBS["sweep"], world=_world())
    assert errored.exit_code == 2


def test_a_sweep_that_never_ran_renders_as_an_error() -> None:
    failed = JOBS["sweep"].blank("the install command failed with exit code 3")
    report = conclude(failed, job=JOBS["sweep"], world=_world())
    assert (failed.exit_code, failed.build_verdict) == (2, "errored")
    assert report.error == "the install command failed with exit code 3"
    assert report.verdict == "errored" and report.outputs["winner"] == ""
    stopped = JOBS["sweep"].blank("interrupted")
    stopped.interrupted = True
    conclude(stopped, job=JOBS["sweep"], world=_world())
    assert (stopped.exit_code, stopped.build_verdict) == (130, "errored")
