"""The Neens HTTP client: the only place URLs live.

:class:`NeensClient` is one method per endpoint of the Neens API. How each
call is made (timeouts, retries with backoff, the idempotent run create, one-line errors,
streamed bodies, the key kept out of every message) is :mod:`neens_action.api.transport`.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from neens_action.api.answers import Gate, Run
from neens_action.api.comparison import Comparison, Metrics
from neens_action.api.http_util import (
    WITHOUT_ITEMS,
    backoff_delay,
    error_detail,
    parse_retry_after,
    path_segment,
    rows_reader,
)
from neens_action.api.json_stream import keep
from neens_action.api.transport import USER_AGENT, Transport
from neens_action.items import ItemDigest
from neens_action.spill import RunRows

if TYPE_CHECKING:  # decoded where they are asked for: an eval run never imports them
    from neens_action.api.suites import Suite
    from neens_action.api.sweep_comparison import SweepComparison
    from neens_action.api.sweeps import Estimate, Sweep

CI_RESULT_RETRIES = 8  # within a 15 s budget (post_ci_result)


class NeensClient(Transport):
    """A Neens API client. Methods return the answer decoded into its typed object
    (:mod:`neens_action.api.answers`) or raise NeensApiError; an answer that is not a JSON
    object where one is expected is an "unreadable server answer" (NeensApiError)."""

    spills_rows = True  # ``get_run(rows=)`` spills the item rows to disk

    # -- pre-prod runs -------------------------------------------------------------

    def create_run(self, body: Mapping[str, Any]) -> Run:
        """``POST /preprod-evals`` with an ``Idempotency-Key``: never repeated blindly
        (see the module docstring). The items are not kept: ``get_items`` lists the frozen ones."""
        key = f"neens-action-{uuid.uuid4().hex}"
        return Run.decode(self._object("POST", "/preprod-evals",
                                       self.request("POST", "/preprod-evals", body=body,
                                                    idempotency_key=key, reader=WITHOUT_ITEMS)),
                          items=False)

    def get_run(self, run_id: str, *, digest: ItemDigest | None = None,
                rows: RunRows | None = None) -> Run:
        """``GET /preprod-evals/{id}``, streamed. ``digest``: the item rows are folded
        into it as they are decoded and the run comes back without ``items``, so a
        10,000-item run is never held whole. ``rows``: they are spilled to it instead (the
        run's ``raw`` keeps an empty ``items`` list where the rows were)."""
        path = f"/preprod-evals/{path_segment(run_id)}"
        if digest is None and rows is None:
            return Run.decode(self._get_object(path))
        sink = digest if digest is not None else rows
        assert sink is not None
        return Run.decode(self._object("GET", path, self.request(
            "GET", path, safe=True, reader=rows_reader(sink.add, sink.reset))),
            items=digest is None)

    def get_run_summary(self, run_id: str) -> Run:
        """``GET /preprod-evals/{id}?items=false``: the run without its per-item list, for
        polling: a 10,000-item run is polled without moving 10,000 items each time. From a
        server that ignores the parameter, the items are dropped as they stream in (the poll
        never holds them)."""
        path = f"/preprod-evals/{path_segment(run_id)}"
        return Run.decode(self._object("GET", path, self.request(
            "GET", path, query="items=false", safe=True, reader=WITHOUT_ITEMS)), items=False)

    def get_items(self, run_id: str, row: Callable[[Any], Any] = keep,
                  restart: Callable[[], None] | None = None) -> list[Any]:
        """``GET /preprod-evals/{id}/items``, envelope unwrapped (missing => []).
        ``row`` turns each row into what is kept, as the body streams in (None: dropped);
        ``restart`` is called before each read of the body (a retry reads it again)."""
        data = self.request("GET", f"/preprod-evals/{path_segment(run_id)}/items", safe=True,
                            reader=rows_reader(row, restart))
        if isinstance(data, list):  # a bare list (no envelope)
            return [kept for kept in map(row, data) if kept is not None]
        rows = data.get("items") if isinstance(data, dict) else None
        return rows if isinstance(rows, list) else []

    def start_run(self, run_id: str) -> None:
        """``POST /preprod-evals/{id}/start``; a 409 (already terminal) is fine. The
        answer (the whole run) is not read, so it is not decoded either."""
        self.request("POST", f"/preprod-evals/{path_segment(run_id)}/start", safe=True,
                     conflict_ok=True, decode=False)

    def trigger_push(self, run_id: str) -> Run:
        """``POST /preprod-evals/{id}/run`` (push trigger): never retried. The answer is
        the run (terminal under an inline queue)."""
        return Run.decode(self._post_object(f"/preprod-evals/{path_segment(run_id)}/run"))

    def cancel_run(self, run_id: str, *, quick: bool = False) -> dict | None:
        """``POST /preprod-evals/{id}/cancel``; 409 (already terminal) => None.

        ``quick`` (the interrupt path): one attempt, at most 5 s.
        """
        return self.request("POST", f"/preprod-evals/{path_segment(run_id)}/cancel", safe=True,
                            conflict_ok=True, **self.quick(quick))

    def get_gate(self, run_id: str) -> Gate:
        """``GET /preprod-evals/{id}/gate``."""
        return Gate.decode(self._get_object(f"/preprod-evals/{path_segment(run_id)}/gate"))

    def get_comparison(self, run_id: str, baseline: str | None = None) -> Comparison:
        """``GET /preprod-evals/{id}/comparison[?baseline=SPEC]``."""
        query = f"baseline={path_segment(baseline)}" if baseline else ""
        return Comparison.decode(
            self._get_object(f"/preprod-evals/{path_segment(run_id)}/comparison", query))

    def get_metrics(self, run_id: str) -> Metrics:
        """``GET /preprod-evals/{id}/metrics``."""
        return Metrics.decode(self._get_object(f"/preprod-evals/{path_segment(run_id)}/metrics"))

    def post_ci_result(self, run_id: str, body: Mapping[str, Any], *,
                       quick: bool = False) -> Any:
        """``POST /preprod-evals/{id}/ci-result``: retried briefly (at most 10 s per
        attempt, up to 8 retries but none starting after 15 s: five faults in a row must
        not lose the verdict, and a slow report cannot hold a build); ``quick`` (the
        interrupt path): one attempt, 5 s."""
        kw = self.quick(quick) if quick else {
            "timeout": min(self.timeout, 10.0), "retries": CI_RESULT_RETRIES if self.retries else 0,
            "budget": 15.0}
        return self.request("POST", f"/preprod-evals/{path_segment(run_id)}/ci-result", body=body,
                            safe=True, **kw)

    def list_ci_gates(self) -> list[dict]:
        """``GET /flywheel/gates/ci``, envelope unwrapped."""
        data = self._get("/flywheel/gates/ci")
        if isinstance(data, dict):
            data = data.get("gates")
        return list(data) if isinstance(data, list) else []

    # -- model sweeps ---------------------------------------------------------------

    def preview_sweep(self, body: Mapping[str, Any]) -> tuple[Estimate | None, tuple[str, ...]]:
        """``POST /model-sweeps/preview``: the estimate (bare or enveloped; None when the
        answer holds none) and the refusals."""
        from neens_action.api.sweeps import Estimate

        return Estimate.unwrap(self._post_object("/model-sweeps/preview", body))

    def create_sweep(self, body: Mapping[str, Any]) -> Sweep:
        """``POST /model-sweeps`` with an ``Idempotency-Key``: never repeated blindly
        (lookup ``GET /model-sweeps?idempotency_key=``)."""
        from neens_action.api.sweeps import Sweep

        return Sweep.decode(self._create("/model-sweeps", body, ("/model-sweeps", "sweeps")))

    def get_sweep(self, sweep_id: str) -> Sweep:
        """``GET /model-sweeps/{id}``."""
        from neens_action.api.sweeps import Sweep

        return Sweep.decode(self._get_object(f"/model-sweeps/{path_segment(sweep_id)}"))

    def get_sweep_comparison(self, sweep_id: str, bar: float | None = None,
                             baseline_arm: str | None = None) -> SweepComparison:
        """``GET /model-sweeps/{id}/comparison[?bar=&baselineArm=]``."""
        from neens_action.api.sweep_comparison import SweepComparison

        parts = []
        if bar is not None:
            parts.append(f"bar={path_segment(repr(float(bar)))}")
        if baseline_arm:
            parts.append(f"baselineArm={path_segment(baseline_arm)}")
        return SweepComparison.decode(self._get_object(
            f"/model-sweeps/{path_segment(sweep_id)}/comparison", "&".join(parts)))

    def cancel_sweep(self, sweep_id: str, *, quick: bool = False) -> Sweep | None:
        """``POST /model-sweeps/{id}/cancel``: the cancelled sweep; 409 (already
        terminal) => None. ``quick`` (the interrupt path): one attempt, at most 5 s."""
        from neens_action.api.sweeps import Sweep

        answer = self.request("POST", f"/model-sweeps/{path_segment(sweep_id)}/cancel",
                              safe=True, conflict_ok=True, **self.quick(quick))
        return None if answer is None else Sweep.decode(answer)

    # -- scenario suites -------------------------------------------------------------

    def create_suite(self, body: Mapping[str, Any]) -> Suite:
        """``POST /scenario-suites`` with an ``Idempotency-Key``: never repeated blindly
        (lookup ``GET /scenario-suites?idempotency_key=``)."""
        from neens_action.api.suites import Suite

        return Suite.decode(self._create("/scenario-suites", body,
                                         ("/scenario-suites", "suites")))

    def get_suite(self, suite_id: str) -> Suite:
        """``GET /scenario-suites/{id}``."""
        from neens_action.api.suites import Suite

        return Suite.decode(self._get_object(f"/scenario-suites/{path_segment(suite_id)}"))

    def regenerate_suite(self, suite_id: str, body: Mapping[str, Any] | None = None) -> Suite:
        """``POST /scenario-suites/{id}/regenerate``: never retried."""
        from neens_action.api.suites import Suite

        return Suite.decode(self._post_object(
            f"/scenario-suites/{path_segment(suite_id)}/regenerate", dict(body or {})))

    def launch_suite(self, suite_id: str, body: Mapping[str, Any]) -> Run:
        """``POST /scenario-suites/{id}/launch`` (creates a run) with an
        ``Idempotency-Key``: never repeated blindly (the run lookup of ``create_run`` finds it)."""
        return Run.decode(self._create(f"/scenario-suites/{path_segment(suite_id)}/launch",
                                       body, ("/preprod-evals", "runs")))

    def _create(self, path: str, body: Mapping[str, Any], created_in: tuple[str, str]) -> dict:
        key = f"neens-action-{uuid.uuid4().hex}"
        return self._object("POST", path, self.request(
            "POST", path, body=body, idempotency_key=key, created_in=created_in))


NeensEvalClient = NeensClient

__all__ = ["USER_AGENT", "NeensClient", "NeensEvalClient", "backoff_delay",
           "error_detail", "parse_retry_after"]
