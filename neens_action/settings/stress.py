"""Settings of ``neens stress run`` / ``launch``: the run settings plus the suite knobs."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from neens_action.errors import UsageError
from neens_action.settings.connection import check_number
from neens_action.settings.run import EvalRunSettings

if TYPE_CHECKING:
    from neens_action.policy import GatePolicy

STRATEGIES = ("paraphrase", "escalate", "boundary")
DEFAULT_READY_TIMEOUT = 600.0


def parse_strategies(values: Iterable[object] | None) -> list[str]:
    """``--strategy`` (repeatable, commas allowed) -> validated, de-duplicated names."""
    out: list[str] = []
    for raw in values or []:
        for part in str(raw).split(","):
            name = part.strip().lower()
            if not name:
                continue
            if name == "replay":
                raise UsageError("--strategy replay: replay is always on unless --no-replay; "
                                 "--strategy picks among paraphrase, escalate, boundary")
            if name not in STRATEGIES:
                raise UsageError(f"--strategy {part.strip()!r} is not a strategy: use "
                                 "paraphrase, escalate or boundary")
            if name not in out:
                out.append(name)
    return out


def check_per_mode(value: int | None) -> None:
    if value is not None and (isinstance(value, bool) or not 1 <= int(value) <= 25):
        raise UsageError(f"--per-mode must be from 1 to 25, got {value}")


def ids(values: Iterable[object] | None, flag: str) -> list[str]:
    """Repeatable id flags (commas allowed), trimmed and de-duplicated."""
    out: list[str] = []
    for raw in values or []:
        for part in str(raw).split(","):
            if part.strip() and part.strip() not in out:
                out.append(part.strip())
    for value in out:
        if any(c.isspace() or ord(c) < 32 for c in value):
            raise UsageError(f"{flag} {value!r} is not an id")
    return out


@dataclass
class StressSettings(EvalRunSettings):
    """``neens stress run`` / ``launch``: eval run settings plus the suite knobs."""

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

    def validate_stress(self, environ: Mapping[str, str], *, drive: bool = True,
                        policy: GatePolicy | None = None) -> StressSettings:
        """Every check before a request. ``drive``: ``stress run`` (needs a way to run the
        scenarios: ``-- COMMAND`` or ``--agent-connection``); else ``stress launch``."""
        self.gates = None  # a stress test runs over the suite's scenarios only
        self.failure_modes = ids(self.failure_modes, "--failure-mode")
        self.judges = ids(self.judges, "--judge")
        self.strategies = parse_strategies(self.strategies)
        check_per_mode(self.per_mode)
        check_number("--ready-timeout", self.ready_timeout, positive=True)
        self.suite_id = (self.suite_id or "").strip() or None
        self.agent_connection = (self.agent_connection or "").strip() or None
        if self.runner_mode is not None:
            self.runner_mode = self.runner_mode.strip().lower()
            if self.runner_mode not in ("push", "runner"):
                raise UsageError(f"--runner-mode must be push or runner, got {self.runner_mode!r}")
            if self.runner_mode == "runner" and self.agent_connection:
                raise UsageError("--agent-connection is for push runs: drop --runner-mode runner")
        if drive:
            if self.suite_id and (self.failure_modes or self.per_mode is not None
                                  or self.strategies or self.no_replay or self.connection):
                raise UsageError("--suite-id reuses a generated suite: --failure-mode, "
                                 "--per-mode, --strategy, --no-replay and --connection only "
                                 "apply to a new one (use 'neens stress regenerate' to change it)")
            if not self.suite_id and not self.failure_modes:
                raise UsageError("nothing to attack: pass --failure-mode ID (repeatable) to "
                                 "generate a suite, or --suite-id ID to reuse one")
            if self.command and self.push:
                raise UsageError("--agent-connection (Neens calls the agent) and an agent "
                                 "command after '--' (pull) exclude each other: pick one")
            if not self.command and not self.push:
                raise UsageError("no agent: put the agent command after '--' (pull), or pass "
                                 "--agent-connection ID (push)")
        if self.version_label is not None and not self.version_label.strip():
            raise UsageError("--version-label is empty")
        if not self.version_label:
            prov = self.resolve_provenance(environ)
            if not prov.short_sha:
                raise UsageError("a stress test needs --version-label LABEL (no commit was "
                                 "detected from the CI environment to label the candidate)")
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
