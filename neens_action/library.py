"""Library use (the spec's "Library use", under our package name)::

    from neens_action import NeensEvalClient, run_eval

    client = NeensEvalClient("https://neens.example.com", api_key="nk_live_...")
    outcome = run_eval("ppr_123", ["python", "-m", "my_agent"], client=client,
                       per_item_timeout=120, concurrency=4)
    raise SystemExit(outcome.exit_code)

``run_eval`` drives an existing run: runs the command once per frozen prompt (a list runs
without a shell, a string with one), starts the run, polls, fetches the gate, evaluates the
optional policy (``outcome.policy_eval``), reports the build verdict to Neens unless
``report_ci_result=False``, logs to stderr and returns the Outcome with ``exit_code`` and
``build_verdict`` set. It installs no signal handlers (that is the caller's process): a
KeyboardInterrupt kills the agents and returns an outcome with exit code 130.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from neens_action.outcome import Outcome
from neens_action.policy import GatePolicy
from neens_action.world import World

if TYPE_CHECKING:
    from neens_action.api.client import NeensClient


def run_eval(
    run_id: str,
    command: Sequence[str] | str,
    *,
    client: NeensClient,
    per_item_timeout: float | None = None,
    concurrency: int = 1,
    policy: GatePolicy | None = None,
    report_ci_result: bool = True,
    version_label: str | None = None,
    poll_interval: float = 5.0,
    poll_timeout: float = 1800.0,
    no_gate: bool = False,
    world: World | None = None,
) -> Outcome:
    """Drive run ``run_id`` with ``command`` and gate it; see the module docstring."""
    from neens_action.errors import UsageError
    from neens_action.jobs import job
    from neens_action.pipeline import run_job
    from neens_action.settings.run import EvalRunSettings

    if not run_id:
        raise UsageError("run_eval needs a run id")
    if not command:
        raise UsageError("run_eval needs a command")
    if concurrency < 1:
        raise UsageError("concurrency must be 1 or more")
    world = world or World()
    settings = EvalRunSettings(
        base_url=client.base_url, run_id=run_id, command=command,  # type: ignore[arg-type]
        version_label=version_label, timeout=per_item_timeout, concurrency=concurrency,
        poll_interval=poll_interval, poll_timeout=poll_timeout, no_gate=no_gate,
        full_run_items=True)
    # the one front door: the pull flow (with its cancel-on-error), the policy, the
    # verdict, the ci-result and the console report; signals stay the caller's
    finished = run_job(job("run"), settings, world=world, policy=policy, client=client,
                       report_ci=report_ci_result, handle_signals=False)
    outcome = finished.outcome
    if outcome.interrupted:
        outcome.exit_code = 130
    return outcome


def run_push_eval(
    *,
    client: NeensClient,
    version_label: str | None,
    agent_connection_id: str,
    dataset_id: str | None = None,
    dataset_version_id: str | None = None,
    baseline: Mapping[str, Any] | str | None = None,
    gate: Mapping[str, Any] | None = None,
    policy: GatePolicy | None = None,
    gates: str | list[str] | None = None,
    name: str | None = None,
    git_sha: str | None = None,
    branch: str | None = None,
    pr_number: int | None = None,
    pr_url: str | None = None,
    repo: str | None = None,
    poll_interval: float = 5.0,
    poll_timeout: float = 1800.0,
    no_gate: bool = False,
    report_ci_result: bool = True,
    world: World | None = None,
) -> Outcome:
    """Library use of the push model: create + trigger + gate, then the verdict.

    ``baseline`` is a wire object (``{"kind": "prod_window", "range": "7d"}``) or a CLI
    spec (``"branch:main"``); ``gate`` a server-gate object (merged over the policy's
    ``gate`` block). Bad arguments raise UsageError / PolicyError; anything that goes wrong
    once the run exists is on ``outcome.error`` with ``outcome.exit_code == 2``. The
    ci-result is reported unless ``report_ci_result=False``.
    """
    from neens_action.flows.push import guarded, push_body
    from neens_action.jobs import job
    from neens_action.pipeline import conclude
    from neens_action.settings.policy_file import Checker, parse_gate
    from neens_action.settings.push import EvalPushSettings

    world = world or World()
    settings = EvalPushSettings(
        base_url=client.base_url, agent_connection=agent_connection_id, dataset=dataset_id,
        dataset_version_id=dataset_version_id, version_label=version_label, name=name,
        gates=gates, git_sha=git_sha, branch=branch, pr_number=pr_number, pr_url=pr_url,
        repo=repo, poll_interval=poll_interval, poll_timeout=poll_timeout, no_gate=no_gate,
        baseline=baseline if isinstance(baseline, str) else None,
    )
    settings.validate(policy_gates=policy is not None and policy.gates_block() is not None)
    if isinstance(baseline, Mapping):
        settings.baseline_wire = dict(baseline)
    extra_gate = parse_gate(dict(gate) if gate else None,
                            Checker("gate=", prefix="invalid gate argument"))
    outcome = Outcome(mode="push", base_url=client.base_url, enforced=not no_gate)
    if policy is not None:
        outcome.policy_identity = policy.identity()
    prov = settings.resolve_provenance(world.environ)
    body = push_body(settings, prov, policy)
    if extra_gate:
        merged = {**(body.get("gate") or {}), **extra_gate}
        body["gate"] = merged
    guarded(client, body, outcome, world=world, policy=policy, poll_interval=poll_interval,
            poll_timeout=poll_timeout)
    push_job = job("push")
    report = conclude(outcome, job=push_job, world=world, client=client, policy=policy,
                      report_ci=report_ci_result)
    text = push_job.render_text(report)
    if text:
        world.log(text)
    return outcome
