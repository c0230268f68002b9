"""The sharding steps of ``neens eval run``: ``--only-create``, ``--shard I/N`` /
``--no-start`` and ``--finish`` (see ``neens_action/flows/shard.py``).

``commands/eval_run.py`` parses the flags and calls :func:`execute_step` when one of them is
given; this module picks the flow and the pipeline hooks. ``--only-create`` prints the run id
alone on stdout (with ``--json``, the create document instead) so a CI step can capture it.
"""

from __future__ import annotations

from typing import Any

from neens_action.world import World


def step_of(settings: Any) -> str | None:
    """``create`` | ``shard`` | ``finish`` | None (a plain ``eval run``)."""
    if getattr(settings, "finish", False):
        return "finish"
    if getattr(settings, "only_create", False):
        return "create"
    if getattr(settings, "no_start", False) or getattr(settings, "shard", None) is not None:
        return "shard"
    return None


def flow_for(step: str, settings: Any, *, client: Any, world: World, policy: Any) -> Any:
    from neens_action.flows import shard

    if step == "create":
        return lambda: shard.run_create_only(settings, client=client, world=world,
                                             policy=policy)
    if step == "shard":
        return lambda: shard.run_shard(settings, client=client, world=world, policy=policy)
    return lambda: shard.run_finish(settings, client=client, world=world, policy=policy)


def execute_step(step: str, settings: Any, *, client: Any, world: World, policy: Any) -> int:
    """Run one sharding step through ``pipeline.execute``; returns the exit code."""
    from neens_action import pipeline
    from neens_action.report.build.shard import execute_kwargs

    flow = flow_for(step, settings, client=client, world=world, policy=policy)
    seen: dict[str, Any] = {}

    def keep() -> Any:
        seen["outcome"] = outcome = flow()
        return outcome

    code = pipeline.execute(keep, world=world, json_out=settings.json,
                            junit_path=settings.junit if step == "finish" else None,
                            client=client,
                            report_ci=settings.report_ci_result and step == "finish",
                            **{k: v for k, v in execute_kwargs(step).items()
                               if k != "report_ci"})
    outcome = seen.get("outcome")
    if step == "create" and code == 0 and not settings.json and outcome is not None:
        print(outcome.run_id, file=world.out, flush=True)
    return code


__all__ = ["execute_step", "flow_for", "step_of"]
