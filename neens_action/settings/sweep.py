"""Settings of the sweep commands (``neens sweep preview|start|get|decide|run``) and of
``mode: sweep``: one typed object, plus the arm, target and body parsing (docs/sweep.md).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

from neens_action.settings.connection import (
    CONNECTION_NAMES,
    EXECUTION_RULES,
    Connection,
    check_parallel,
    count,
    number,
)
from neens_action.settings.names import (
    Name,
    Names,
    Ref,
    Rules,
    SettingError,
    apply_rules,
    checks,
    table,
)

# field -> CLI flag, CI input (mode sweep), environment variable
SWEEP_NAMES = CONNECTION_NAMES.with_(table(
    "sweep_id", "name", "version_label", "budget_usd", "concurrency", "workers", "timeout",
    "bar", "baseline_arm", "poll_interval", "poll_timeout", "require_winner", "create",
    "dataset_version_id",
    arms=Name("--arm", "arms"), pass_k=Name("--pass-k", "k"),
    dataset_id=Name("--dataset-id", "dataset"),
    scenario_suite_id=Name("--scenario-suite-id", "suite-id"), judges=Name("--judge"),
    push=Name("--runner", "sweep-mode"), wait=Name("--wait"),
    require_all_arms=Name("--require-all-arms"),
))


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
            raise SettingError("arms", f"invalid arm {raw!r}: expected LABEL={what}",
                               lead=False, names=SWEEP_NAMES)
        if label in labels:
            raise SettingError("arms", f"duplicate arm label {label!r}: every arm needs its "
                                       "own label", lead=False, names=SWEEP_NAMES)
        if target in targets:
            thing = "model" if runner else "connection"
            raise SettingError("arms", f"two arms on one {thing} ({target!r}): that is the "
                                       "same model twice, not a comparison", lead=False,
                                       names=SWEEP_NAMES)
        labels.add(label)
        targets.add(target)
        if runner:
            arms.append({"label": label, "model": target, "runnerMode": "runner"})
        else:
            arms.append({"label": label, "agentConnectionId": target})
    if not arms:
        raise SettingError("arms", ["no arms: pass at least one ", Ref("arms"), f" LABEL={what}"],
                           lead=False, names=SWEEP_NAMES)
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
    one: list[str | Ref] = [Ref("dataset_id"), ", ", Ref("dataset_version_id"), ", ",
                            Ref("scenario_suite_id")]
    if not given:
        raise SettingError("dataset_id", ["no sweep target: give one of ", *one], lead=False,
                           names=SWEEP_NAMES)
    if len(given) > 1:
        raise SettingError("dataset_id", ["give only one of ", *one], lead=False, names=SWEEP_NAMES)
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
    """The body of a sweep preview or create (camelCase; unset fields omitted, never null)."""
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


# field -> its value rule (each written once; validate() adds the rules across fields)
SWEEP_RULES: Rules = {"bar": number(lo=0.0, hi=1.0), "pass_k": count(1),
                      "budget_usd": number(lo=0.0), **EXECUTION_RULES}


def check_pass_k(value: int | None) -> None:
    SWEEP_RULES["pass_k"]("pass_k", value)


def check_bar(value: float | None) -> None:
    SWEEP_RULES["bar"]("bar", value)


def check_poll(poll: Poll) -> None:
    SWEEP_RULES["poll_interval"]("poll_interval", poll.interval)
    SWEEP_RULES["poll_timeout"]("poll_timeout", poll.timeout)


def check_budget(value: float | None) -> None:
    SWEEP_RULES["budget_usd"]("budget_usd", value)


@dataclass
class SweepSettings(Connection):
    """Everything one sweep command needs. :meth:`validate` builds ``body``, the body of
    ``POST /model-sweeps/preview`` and ``POST /model-sweeps`` (preview, start, ``run --create``,
    ``mode: sweep``), from the create fields; ``sweep_id`` names an existing sweep (get, decide,
    ``run --sweep-id``)."""

    NAMES: ClassVar[Names] = SWEEP_NAMES
    RULES: ClassVar[Rules] = SWEEP_RULES

    body: dict[str, Any] | None = None
    sweep_id: str | None = None
    push: bool = False  # mode: sweep with sweep-mode push (Neens calls each arm's connection)
    command: list[str] = field(default_factory=list)  # the agent (runner sweeps)
    concurrency: int = 1
    workers: int | None = None  # worker mode (runner sweeps)
    timeout: float | None = None  # per invocation
    bar: float | None = None
    baseline_arm: str | None = None
    poll: Poll = field(default_factory=Poll)  # set by validate() from the two below
    poll_interval: float = Poll.interval
    poll_timeout: float = Poll.timeout
    wait: bool = False
    require_all_arms: bool = False
    # None: the ``sweep run`` rule (a winner passes, no winner fails); True/False: the
    # ``sweep decide`` rule with or without --require-winner
    require_winner: bool | None = None
    json: bool = False
    report_ci_result: bool = False  # a sweep has child runs, not one run to report on
    # a new sweep (preview, start, run --create, mode sweep): validate() makes ``body``
    create: bool = False
    arms: list[str] = field(default_factory=list)  # LABEL=MODEL or LABEL=CONNECTION_ID
    runner: bool = True  # arms name models (runner sweeps), else connections (push)
    dataset_id: str | None = None
    dataset_version_id: str | None = None
    scenario_suite_id: str | None = None
    pass_k: int | None = None
    judges: list[str] = field(default_factory=list)
    name: str | None = None
    version_label: str | None = None
    budget_usd: float | None = None

    @checks
    def validate(self, command: str) -> SweepSettings:
        """Every check of sweep ``command`` (preview, start, get, decide, run; ``mode``: the CI
        step's ``mode: sweep``) before a request; builds ``body`` when the command creates a
        sweep. Returns self."""
        self.check_connection()
        apply_rules(self.RULES, self)
        self.poll = Poll(interval=self.poll_interval, timeout=self.poll_timeout)
        check_parallel(self.concurrency, self.workers)
        if command == "run":
            if bool(self.sweep_id) == bool(self.create):
                raise SettingError("create", [
                    "sweep run needs exactly one of ", Ref("create"), " (a new runner sweep) or ",
                    Ref("sweep_id"), " ID (attach and resume)"], lead=False)
            if not self.create:
                self.check_attached()
        if command in ("start", "run") and self.create:
            missing = [f for f in ("name", "version_label")
                       if not (getattr(self, f) and getattr(self, f).strip())]
            if missing:
                what = "sweep start" if command == "start" else "sweep run --create"
                needs: list[str | Ref] = [f"{what} needs ", Ref(missing[0])]
                if len(missing) > 1:
                    needs += [" and ", Ref(missing[1])]
                raise SettingError(missing[0], needs, lead=False)
        if command in ("preview", "start", "mode") or self.create:
            self.body = self.create_body()
        return self

    def check_attached(self) -> None:
        """``sweep run --sweep-id``: the sweep keeps the arms and settings it was created
        with, so no create field may be given."""
        given = [f for f in ("arms", "name", "version_label", "dataset_id",
                             "dataset_version_id", "scenario_suite_id", "pass_k", "judges",
                             "budget_usd") if getattr(self, f)]
        if given:
            parts: list[str | Ref] = []
            for f in given:
                parts += [", " if parts else "", Ref(f)]
            raise SettingError(given[0], [*parts, " only apply with ", Ref("create"),
                                          "; an attached sweep keeps the arms and settings it "
                                          "was created with"], lead=False)

    def create_body(self) -> dict[str, Any]:
        """The checked preview/create body of a new sweep."""
        name = self.name.strip() if self.name else None
        label = self.version_label.strip() if self.version_label else None
        return sweep_body(
            arms=parse_arms(self.arms, runner=self.runner),
            target=target_fields(self.dataset_id, self.dataset_version_id,
                                 self.scenario_suite_id),
            pass_k=self.pass_k, judges=self.judges, name=name, version_label=label,
            budget_usd=self.budget_usd)
