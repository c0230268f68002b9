"""Settings of the sweep commands (``neens sweep preview|start|get|decide|run``) and of
``mode: sweep``: one typed object, plus the arm, target and body parsing (spec 7.4, 8.4, 8.5).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from neens_action.errors import UsageError
from neens_action.settings.connection import Connection


@dataclass(frozen=True)
class Poll:
    interval: float = 10.0
    timeout: float = 3600.0


def parse_arms(values: list[str] | tuple[str, ...], *, runner: bool) -> list[dict[str, str]]:
    """``LABEL=CONNECTION_ID`` (push) or ``LABEL=MODEL`` (runner) arms, validated.

    Split on the first ``=``; both halves required; labels distinct; connections (push) or
    models (runner) distinct, because two arms on one connection is the same model twice.
    """
    what = "MODEL" if runner else "CONNECTION_ID"
    arms: list[dict[str, str]] = []
    labels: set[str] = set()
    targets: set[str] = set()
    for raw in values:
        label, sep, target = raw.partition("=")
        label, target = label.strip(), target.strip()
        if not sep or not label or not target:
            raise UsageError(f"invalid --arm {raw!r}: expected LABEL={what}")
        if label in labels:
            raise UsageError(f"duplicate arm label {label!r}: every --arm needs its own label")
        if target in targets:
            thing = "model" if runner else "connection"
            raise UsageError(
                f"two arms on one {thing} ({target!r}): that is the same model twice, "
                "not a comparison"
            )
        labels.add(label)
        targets.add(target)
        if runner:
            arms.append({"label": label, "model": target, "runnerMode": "runner"})
        else:
            arms.append({"label": label, "agentConnectionId": target})
    if not arms:
        raise UsageError(f"no arms: pass at least one --arm LABEL={what}")
    return arms


def target_fields(dataset_id: str | None, dataset_version_id: str | None,
                  scenario_suite_id: str | None) -> dict[str, str]:
    """Exactly one of the three sweep targets, as camelCase request fields."""
    given = {
        key: value.strip()
        for key, value in (("datasetId", dataset_id), ("datasetVersionId", dataset_version_id),
                           ("scenarioSuiteId", scenario_suite_id))
        if value and value.strip()
    }
    if not given:
        raise UsageError(
            "no sweep target: give one of --dataset-id, --dataset-version-id, --scenario-suite-id"
        )
    if len(given) > 1:
        raise UsageError(
            "give only one of --dataset-id, --dataset-version-id, --scenario-suite-id"
        )
    return given


def sweep_body(
    *,
    arms: list[dict[str, str]],
    target: dict[str, str],
    pass_k: int | None = None,
    judges: list[str] | tuple[str, ...] = (),
    name: str | None = None,
    version_label: str | None = None,
    budget_usd: float | None = None,
) -> dict[str, Any]:
    """The E12/E13 body (camelCase; unset fields omitted, never null)."""
    body: dict[str, Any] = {"arms": arms, **target}
    if name is not None:
        body["name"] = name
    if version_label is not None:
        body["versionLabel"] = version_label
    if pass_k is not None:
        body["passK"] = int(pass_k)
    if judges:
        body["judgeDeploymentIds"] = list(judges)
    if budget_usd is not None:
        body["budgetUsd"] = budget_usd
    return body


def check_pass_k(value: int | None) -> None:
    if value is not None and value < 1:
        raise UsageError(f"--pass-k must be at least 1 (got {value})")


def check_bar(value: float | None) -> None:
    if value is not None and (math.isnan(value) or not 0.0 <= value <= 1.0):
        raise UsageError(f"--bar must be a pass rate between 0 and 1 (got {value})")


def check_poll(poll: Poll) -> None:
    if math.isnan(poll.interval) or poll.interval <= 0:
        raise UsageError(f"--poll-interval must be > 0 seconds (got {poll.interval})")
    if math.isnan(poll.timeout) or poll.timeout <= 0:
        raise UsageError(f"--poll-timeout must be > 0 seconds (got {poll.timeout})")


def check_budget(value: float | None) -> None:
    if value is not None and (math.isnan(value) or value < 0):
        raise UsageError(f"--budget-usd must be a non-negative amount (got {value})")


@dataclass
class SweepSettings(Connection):
    """Everything one sweep command needs. ``body`` is the E12/E13 body (preview, start,
    ``run --create``, ``mode: sweep``); ``sweep_id`` names an existing sweep (get, decide,
    ``run --sweep-id``)."""

    body: dict[str, Any] | None = None
    sweep_id: str | None = None
    push: bool = False  # mode: sweep with sweep-mode push (Neens calls each arm's connection)
    command: list[str] = field(default_factory=list)  # the agent (runner sweeps)
    concurrency: int = 1
    workers: int | None = None  # worker mode (runner sweeps)
    timeout: float | None = None  # per invocation
    bar: float | None = None
    baseline_arm: str | None = None
    poll: Poll = field(default_factory=Poll)
    wait: bool = False
    require_all_arms: bool = False
    # None: the ``sweep run`` rule (a winner passes, no winner fails); True/False: the
    # ``sweep decide`` rule with or without --require-winner
    require_winner: bool | None = None
    json: bool = False
    report_ci_result: bool = False  # a sweep has child runs, not one run to report on
