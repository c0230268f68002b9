"""``mode: sweep``: a multi-model sweep over ``dataset`` / ``dataset-version-id`` / ``suite-id``.

``sweep-mode: runner`` (default): ``arms`` are ``LABEL=MODEL`` and ``command`` runs for every
arm x rep x item with ``$NEENS_EVAL_MODEL``; ``sweep-mode: push``: ``arms`` are
``LABEL=CONNECTION_ID`` and Neens calls them. Then the server's verdict (``bar``,
``baseline-arm``): exit 0, or 1 with ``require-winner`` and no clearing arm, 2 for a void,
failed or unfinished sweep (``verdict.decide_sweep``). Outputs ``sweep-id`` and ``winner``.
"""

from __future__ import annotations

from neens_action.ci.context import CiContext, Plan
from neens_action.ci.inputs import InputError
from neens_action.ci.modes import common
from neens_action.settings.sweep import SweepSettings


def plan_sweep(ctx: CiContext) -> Plan:
    """``mode: sweep``: a runner or push sweep, then the server's verdict."""
    common.check_mode_inputs(ctx, "sweep")
    inp = ctx.inputs
    push = inp.get("sweep-mode", "runner") == "push"
    what = "LABEL=CONNECTION_ID" if push else "LABEL=MODEL"
    if not inp.get("arms"):
        raise InputError("arms", f"is required for mode sweep: one arm per line, {what}")
    command = inp.get("command")
    if push and command:
        raise InputError("command", "does not apply to sweep-mode push: Neens calls each "
                                    "arm's connection")
    if push and inp.get("workers"):
        raise InputError("workers", "does not apply to sweep-mode push: Neens calls each "
                                    "arm's connection")
    if not push and not command:
        raise InputError("command", "is required for a runner sweep: your agent command, run "
                                    "once per arm x rep x item with $NEENS_EVAL_MODEL set to "
                                    "the arm's model (or set sweep-mode: push)")
    targets = [n for n in ("dataset", "dataset-version-id", "suite-id") if inp.get(n)]
    if len(targets) != 1:
        raise InputError(targets[1] if targets else "dataset",
                         "a sweep replays exactly one target: set one of dataset, "
                         "dataset-version-id or suite-id")
    label = inp.get("version-label") or common.short_sha(ctx)
    if not label:
        raise InputError("version-label", "is required for mode sweep (no commit was detected "
                                          "to label the candidate)")
    settings = SweepSettings(
        base_url=inp.get("base-url", ""), api_key=inp.get("api-key"),
        project_id=ctx.environ.get("NEENS_PROJECT_ID", "").strip() or None,
        create=True, push=push, runner=not push, arms=list(inp["arms"]),
        dataset_id=inp.get("dataset"), dataset_version_id=inp.get("dataset-version-id"),
        scenario_suite_id=inp.get("suite-id"), pass_k=inp.get("k"),
        name=inp.get("name") or f"sweep {label}", version_label=label,
        budget_usd=inp.get("budget-usd"), command=list(command or []),
        concurrency=inp.get("concurrency", 1), workers=inp.get("workers"),
        timeout=inp.get("timeout"), bar=inp.get("bar"),
        poll_interval=inp.get("poll-interval", 5.0), poll_timeout=inp.get("poll-timeout", 1800.0),
        baseline_arm=inp.get("baseline-arm"), require_winner=bool(inp.get("require-winner")),
    )
    return Plan("sweep", settings.validate("mode"))
