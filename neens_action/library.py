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

from collections.abc import Sequence
from typing import Any

from neens_action.outcome import Outcome
from neens_action.world import World


def run_eval(
    run_id: str,
    command: Sequence[str] | str,
    *,
    client: Any,
    per_item_timeout: float | None = None,
    concurrency: int = 1,
    policy: Any = None,
    report_ci_result: bool = True,
    version_label: str | None = None,
    poll_interval: float = 5.0,
    poll_timeout: float = 1800.0,
    no_gate: bool = False,
    world: World | None = None,
) -> Outcome:
    """Drive run ``run_id`` with ``command`` and gate it; see the module docstring."""
    from neens_action.errors import Interrupted, NeensError, UsageError
    from neens_action.flows.pull import DriveOptions, drive_run, handle_interrupt
    from neens_action.pipeline import conclude
    from neens_action.report.render.text import render

    if not run_id:
        raise UsageError("run_eval needs a run id")
    if not command:
        raise UsageError("run_eval needs a command")
    if concurrency < 1:
        raise UsageError("concurrency must be 1 or more")
    world = world or World()
    outcome = Outcome(mode="run", run_id=run_id, base_url=client.base_url,
                      enforced=not no_gate)
    if policy is not None:
        outcome.policy_identity = policy.identity()
    opts = DriveOptions(command=command, version_label=version_label,
                        per_item_timeout=per_item_timeout, concurrency=concurrency,
                        poll_interval=poll_interval, poll_timeout=poll_timeout, policy=policy)
    try:
        drive_run(client, outcome, opts, world=world)
    except (Interrupted, KeyboardInterrupt):
        handle_interrupt(client, outcome, world=world, command=command)
    except NeensError as exc:
        outcome.error = outcome.error or str(exc)
    report = conclude(outcome, world=world, client=client, report_ci=report_ci_result)
    text = render(report)
    if text:
        world.log(text)
    if outcome.interrupted:
        outcome.exit_code = 130
    return outcome


def run_push_eval(**kwargs: Any) -> Outcome:
    """PUSH model: create a push run and let Neens call the agent endpoint; see
    :func:`neens_action.flows.push.run_push_eval` for the parameters."""
    from neens_action.flows.push import run_push_eval as impl

    return impl(**kwargs)


__all__ = ["run_eval", "run_push_eval"]
