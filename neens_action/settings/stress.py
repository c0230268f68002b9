"""Settings of ``neens stress run`` / ``launch``: the run settings plus the suite knobs."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, ClassVar

from neens_action.settings.connection import number
from neens_action.settings.names import Name, Names, Ref, Rules, SettingError, checks, table
from neens_action.settings.push import PUSH_NAMES
from neens_action.settings.run import RUN_RULES, EvalRunSettings

if TYPE_CHECKING:
    from neens_action.policy import GatePolicy

STRATEGIES = ("paraphrase", "escalate", "boundary")
DEFAULT_READY_TIMEOUT = 600.0
# the suite knobs on top of the run settings (modes stress reads them as inputs)
STRESS_NAMES = PUSH_NAMES.with_(table(
    "suite_id", "per_mode", "ready_timeout",
    failure_modes=Name("--failure-mode", "failure-modes"),
    strategies=Name("--strategy", "strategies"),
    suite_name=Name("--suite-name"), no_replay=Name("--no-replay"),
    connection=Name("--connection"), runner_mode=Name("--runner-mode"),
    judges=Name("--judge"),
))


def parse_strategies(values: Iterable[object] | None) -> list[str]:
    """``--strategy`` (repeatable, commas allowed) -> validated, de-duplicated names."""
    out: list[str] = []
    for raw in values or []:
        for part in str(raw).split(","):
            name = part.strip().lower()
            if not name:
                continue
            if name == "replay":
                raise SettingError("strategies", [
                    "replay: replay is always on unless ", Ref("no_replay"), "; ",
                    Ref("strategies"), " picks among paraphrase, escalate, boundary"],
                    names=STRESS_NAMES)
            if name not in STRATEGIES:
                raise SettingError("strategies", f"{part.strip()!r} is not a strategy: use "
                                                 "paraphrase, escalate or boundary",
                                                 names=STRESS_NAMES)
            if name not in out:
                out.append(name)
    return out


def check_per_mode(value: int | None) -> None:
    if value is not None and (isinstance(value, bool) or not 1 <= int(value) <= 25):
        raise SettingError("per_mode", f"must be from 1 to 25, got {value}", names=STRESS_NAMES)


def ids(values: Iterable[object] | None, field: str) -> list[str]:
    """Repeatable id flags (commas allowed), trimmed and de-duplicated."""
    out: list[str] = []
    for raw in values or []:
        for part in str(raw).split(","):
            if part.strip() and part.strip() not in out:
                out.append(part.strip())
    for value in out:
        if any(c.isspace() or ord(c) < 32 for c in value):
            raise SettingError(field, f"{value!r} is not an id", names=STRESS_NAMES)
    return out


@dataclass
class StressSettings(EvalRunSettings):
    """``neens stress run`` / ``launch``: eval run settings plus the suite knobs."""

    NAMES: ClassVar[Names] = STRESS_NAMES
    RULES: ClassVar[Rules] = {**RUN_RULES, "per_mode": lambda _f, v: check_per_mode(v),
                              "ready_timeout": number(positive=True)}

    suite_id: str | None = None
    suite_name: str | None = None
    failure_modes: list[str] = field(default_factory=list)
    per_mode: int | None = None
    strategies: list[str] = field(default_factory=list)
    no_replay: bool = False
    connection: str | None = None  # LLM connection used for generation
    agent_connection: str | None = None  # push: the agent_http connection Neens calls
    runner_mode: str | None = None
    judges: list[str] = field(default_factory=list)
    ready_timeout: float = DEFAULT_READY_TIMEOUT

    @property
    def push(self) -> bool:
        return bool(self.agent_connection) or self.runner_mode == "push"

    @checks
    def validate_stress(self, environ: Mapping[str, str], *, drive: bool = True,
                        policy: GatePolicy | None = None) -> StressSettings:
        """Every check before a request. ``drive``: ``stress run`` (needs a way to run the
        scenarios: ``-- COMMAND`` or ``--agent-connection``); else ``stress launch``."""
        self.gates = None  # a stress test runs over the suite's scenarios only
        self.failure_modes = ids(self.failure_modes, "failure_modes")
        self.judges = ids(self.judges, "judges")
        self.strategies = parse_strategies(self.strategies)
        self.suite_id = (self.suite_id or "").strip() or None
        self.agent_connection = (self.agent_connection or "").strip() or None
        if self.runner_mode is not None:
            self.runner_mode = self.runner_mode.strip().lower()
            if self.runner_mode not in ("push", "runner"):
                raise SettingError("runner_mode",
                                   f"must be push or runner, got {self.runner_mode!r}")
            if self.runner_mode == "runner" and self.agent_connection:
                raise SettingError("agent_connection", ["is for push runs: drop ",
                                                        Ref("runner_mode"), " runner"])
        if drive:
            if self.suite_id and (self.failure_modes or self.per_mode is not None
                                  or self.strategies or self.no_replay or self.connection):
                raise SettingError("suite_id", [
                    "reuses a generated suite: ", Ref("failure_modes"), ", ", Ref("per_mode"),
                    ", ", Ref("strategies"), ", ", Ref("no_replay"), " and ", Ref("connection"),
                    " only apply to a new one (use 'neens stress regenerate' to change it)"])
            if not self.suite_id and not self.failure_modes:
                raise SettingError("failure_modes", [
                    "nothing to attack: pass ", Ref("failure_modes"), " ID (repeatable) to "
                    "generate a suite, or ", Ref("suite_id"), " ID to reuse one"], lead=False)
            if self.command and self.push:
                raise SettingError("agent_connection", [
                    "(Neens calls the agent) and an agent command after '--' (pull) exclude "
                    "each other: pick one"])
            if not self.command and not self.push:
                raise SettingError("agent_connection", [
                    "no agent: put the agent command after '--' (pull), or pass ",
                    Ref("agent_connection"), " ID (push)"], lead=False)
        if self.version_label is not None and not self.version_label.strip():
            raise SettingError("version_label", "is empty")
        if not self.version_label:
            prov = self.resolve_provenance(environ)
            if not prov.short_sha:
                raise SettingError("version_label", [
                    "a stress test needs ", Ref("version_label"), " LABEL (no commit was "
                    "detected from the CI environment to label the candidate)"], lead=False)
            self.version_label = prov.short_sha
        self.version_label = self.version_label.strip()
        # the shared checks of ``eval run --create`` (connection, baseline, gate, policy
        # overrides, execution, provenance); the suite stands in for the dataset
        dataset, self.dataset, self.create = self.dataset, "scenario-suite", True
        try:
            EvalRunSettings.validate(self, need_command=drive and not self.push)
        finally:
            self.dataset, self.create = dataset, False
        return self
