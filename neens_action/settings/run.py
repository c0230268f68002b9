"""Typed settings for the eval commands, built from flags + environment (or action inputs).

:class:`EvalRunSettings` is a plain dataclass with no click dependency: the CLI builds it with
:meth:`EvalRunSettings.from_flags` and the CI modes (``ci/modes/``) can build it directly
from action inputs. :meth:`validate` raises :class:`~neens_action.settings.names.SettingError`
naming the field and why; ``RUN_NAMES`` says what each field is called at each front door.
Secrets are ``repr=False`` so a settings object can be logged.

Environment defaults: ``NEENS_BASE_URL``, ``NEENS_API_KEY``, ``NEENS_PROJECT_ID``,
``NEENS_GATE_POLICY``, ``NEENS_GATES``, ``NEENS_REPO``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from typing import Any, ClassVar

from neens_action.errors import UsageError
from neens_action.settings import shard
from neens_action.settings.connection import (
    CONNECTION_NAMES,
    EXECUTION_RULES,
    Connection,
    check_parallel,
    count,
    env_defaults,
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
from neens_action.settings.provenance import Provenance, clean_repo, resolve
from neens_action.settings.repeats import (
    NOISE_NAMES,
    NOISE_RULES,
    RepeatPlan,
    check_combinations,
)

# field -> CLI flag, CI input, environment variable (the CI step detects provenance itself
# and reads the override inputs; the sharding steps are its modes create, shard, finish)
RUN_NAMES = CONNECTION_NAMES.with_(table(
    "run_id", "create", "dataset", "dataset_version_id", "version_label", "name", "baseline",
    "max_regressions", "min_pass_rate", "max_cost_delta_pct", "max_latency_delta_pct",
    "min_avg_score", "max_abs_failures", "timeout", "concurrency", "workers", "poll_interval",
    "poll_timeout", "no_gate", "shard",
    gates=Name("--gates", "gates", "NEENS_GATES"),
    gate_policy=Name("--gate-policy", "gate-policy", "NEENS_GATE_POLICY"),
    repo=Name("--repo", None, "NEENS_REPO"),
    git_sha=Name("--git-sha"), branch=Name("--branch"), pr_number=Name("--pr-number"),
    pr_url=Name("--pr-url"), json=Name("--json"),
    junit=Name("--junit", "junit-file"), no_start=Name("--no-start"),
    finish=Name("--finish"), only_create=Name("--only-create"),
), NOISE_NAMES)
_ENV = RUN_NAMES.env()
_HEX = re.compile(r"^[0-9a-fA-F]{7,64}$")
_GATE_ID = re.compile(r"^[A-Za-z0-9_.:\-]{1,128}$")


def _git_sha(field: str, value: str | None) -> None:
    if value is not None and not _HEX.match(value.strip()):
        raise SettingError(field, f"must be 7-64 hex characters, got {value[:80]!r}")


def _pr_number(field: str, value: int | None) -> None:
    if value is not None and int(value) < 1:
        raise SettingError(field, f"must be a positive integer, got {value}")


def _pr_url(field: str, value: str | None) -> None:
    if value is not None and not value.startswith(("http://", "https://")):
        raise SettingError(field, "must be an http(s) URL")


# field -> its value rule (each written once; validate() adds the rules across fields)
RUN_RULES: Rules = {
    "max_regressions": count(0), "min_pass_rate": number(lo=0.0, hi=1.0),
    "min_avg_score": number(lo=0.0, hi=1.0), "max_cost_delta_pct": number(lo=-100.0),
    "max_latency_delta_pct": number(lo=-100.0), "max_abs_failures": count(0),
    **EXECUTION_RULES, "git_sha": _git_sha, "pr_number": _pr_number, "pr_url": _pr_url,
    **NOISE_RULES,
}


def parse_baseline(spec: str | None) -> dict[str, str] | None:
    """``--baseline`` spec -> wire object (``{"kind": ..., ...}``); None when not given.

    Unlike the reference (which silently sends nothing), an unrecognised or empty spec is a
    usage error here: a typo must not quietly change what the build is compared with.
    """
    if spec is None or not spec.strip():
        return None
    s = spec.strip()
    if s.startswith("run:"):
        value = s[4:].strip()
        if not value:
            raise SettingError("baseline", "run: needs a run id, e.g. run:ppr_123")
        return {"kind": "preprod_run", "value": value}
    if s.startswith("branch:"):
        value = s[7:].strip()
        if not value:
            raise SettingError("baseline", "branch: needs a branch name, e.g. branch:main")
        return {"kind": "branch", "value": value}
    if s == "prod":
        return {"kind": "prod_window", "range": "7d"}
    if s.startswith("prod:"):
        rng = s[5:].strip()
        if not rng:
            raise SettingError("baseline", "prod: needs a range, e.g. prod:30d")
        return {"kind": "prod_window", "range": rng}
    raise SettingError("baseline", f"{spec!r} is not a baseline: use branch:<name>, run:<run id>, "
                                   "prod or prod:<range> (e.g. prod:30d)")


def parse_gates(value: str | list[str] | None) -> str | list[str] | None:
    """``--gates`` / ``NEENS_GATES`` -> ``"active"``, a list of gate ids, or None
    (the run create body's ``gates``)."""
    if value is None:
        return None
    if isinstance(value, list):
        value = ",".join(value)
    if not value.strip():
        return None
    if value.strip().lower() == "active":
        return "active"
    ids = [p.strip() for p in value.split(",") if p.strip()]
    if not ids:
        raise SettingError("gates", f"{value!r} names no gate: use 'active' or gate-a,gate-b")
    if any(i.lower() == "active" for i in ids):
        raise SettingError("gates", "use either 'active' or a list of gate ids, not both",
                           sep=": ")
    for gid in ids:
        if not _GATE_ID.match(gid):
            raise SettingError("gates", f"{gid!r} is not a gate id (letters, digits, _ . : -)",
                               sep=": ")
    return list(dict.fromkeys(ids))


@dataclass
class EvalRunSettings(Connection):
    """Everything ``neens eval run`` (and the pull mode of the action) needs."""

    NAMES: ClassVar[Names] = RUN_NAMES
    RULES: ClassVar[Rules] = RUN_RULES

    # target
    run_id: str | None = None
    create: bool = False
    dataset: str | None = None
    dataset_version_id: str | None = None
    version_label: str | None = None
    name: str | None = None
    baseline: str | None = None
    max_regressions: int | None = None
    min_pass_rate: float | None = None
    gates: str | list[str] | None = None  # raw flag/env; parsed by validate()
    # provenance (explicit flags; detection fills the gaps)
    git_sha: str | None = None
    branch: str | None = None
    pr_number: int | None = None
    pr_url: str | None = None
    repo: str | None = None
    # policy
    gate_policy: str | None = None
    max_cost_delta_pct: float | None = None
    max_latency_delta_pct: float | None = None
    min_avg_score: float | None = None
    max_abs_failures: int | None = None
    # execution
    command: list[str] = field(default_factory=list)
    timeout: float | None = None  # per item
    concurrency: int = 1
    workers: int | None = None  # worker mode: N long-lived agent processes (None: per item)
    poll_interval: float = 5.0
    poll_timeout: float = 1800.0
    output_cap: int = 64 * 1024
    no_gate: bool = False
    json: bool = False
    junit: str | None = None
    report_ci_result: bool = True
    # keep every item and every field of the terminal run's items (the result file of a CI
    # step needs them; --json and --junit imply it, see keeps_every_item). Otherwise the
    # console report works from a digest and memory stays flat in the item count.
    full_run_items: bool = False
    # sharding (flows/shard.py): --shard I/N (implies no_start), --no-start, --finish,
    # --only-create
    shard: str | None = None
    no_start: bool = False
    finish: bool = False
    only_create: bool = False
    # a gate that knows noise (settings/repeats.py, docs/noise.md): K repetitions ("auto":
    # adaptive), N runs of the default branch's history, what an inconclusive verdict does
    repeat: int | str = 1
    baseline_runs: int | None = None
    on_inconclusive: str = "warn"

    # parsed by validate()
    shard_index: int = field(default=1, repr=False)
    shard_total: int = field(default=1, repr=False)
    baseline_wire: dict[str, str] | None = field(default=None, repr=False)
    gates_wire: str | list[str] | None = field(default=None, repr=False)
    declared_gates: bool = field(default=False, repr=False)
    # the candidate's commit, branch, PR/MR, repo: resolved once (resolve_provenance)
    provenance: Provenance | None = field(default=None, repr=False)

    @classmethod
    def from_flags(cls, flags: Mapping[str, Any], environ: Mapping[str, str]) -> EvalRunSettings:
        """Flags win; unset flags (None) fall back to their ``NEENS_*`` variable."""
        known = {f.name for f in fields(cls)}
        values = env_defaults({k: v for k, v in flags.items() if k in known and v is not None},
                              environ, _ENV)
        if "command" in values:
            values["command"] = list(values["command"])
        settings = cls(**values)
        settings.resolve_provenance(environ)
        return settings

    def resolve_provenance(self, environ: Mapping[str, str]) -> Provenance:
        """Detect the candidate's provenance from the CI environment, explicit flags winning;
        done once, kept in ``self.provenance`` for every flow and report."""
        if self.provenance is None:
            self.provenance = resolve(environ, git_sha=self.git_sha, branch=self.branch,
                                      pr_number=self.pr_number, pr_url=self.pr_url,
                                      repo=self.repo)
        return self.provenance

    @property
    def overrides(self) -> dict[str, float | int]:
        """The policy override flags that were given (keys as in ``policy.build_policy``)."""
        raw = {
            "max_cost_delta_pct": self.max_cost_delta_pct,
            "max_latency_delta_pct": self.max_latency_delta_pct,
            "min_avg_score": self.min_avg_score,
            "max_abs_failures": self.max_abs_failures,
        }
        return {k: v for k, v in raw.items() if v is not None}

    @property
    def noise_plan(self) -> RepeatPlan:
        """K, auto or not, N history runs, on-inconclusive (checked by ``validate``)."""
        return RepeatPlan(self.repeat, self.baseline_runs, self.on_inconclusive)

    @property
    def creates_run(self) -> bool:
        return bool(self.create or self.gates_wire or self.declared_gates)

    @property
    def keeps_every_item(self) -> bool:
        """True when an output lists every item (--json, --junit, a CI result file)."""
        return bool(self.json or self.junit or self.full_run_items)

    @checks
    def check_rules(self) -> EvalRunSettings:
        """Every field's value rule (``RULES``); the CLI runs them before it reads the policy
        file, so an override flag is refused by its setting's rule, as in the CI step."""
        apply_rules(self.RULES, self)
        return self

    @checks
    def validate(self, *, need_command: bool = True,
                 declared_gates: bool = False) -> EvalRunSettings:
        """Check everything that can be checked before a request; parse specs. Returns self.

        ``declared_gates``: the policy file has a ``gates`` block (it implies creating a run).
        A bad setting raises :class:`SettingError` naming its field (worded from ``NAMES``).
        """
        self.declared_gates = declared_gates
        self.check_connection()
        self.check_rules()
        self.gates_wire = parse_gates(self.gates)
        shard.check_flags(self)  # --shard / --no-start / --finish / --only-create
        check_combinations(self)  # --repeat: not with sharding, not with --run-id
        if need_command and shard.needs_command(self) and not self.command:
            raise UsageError("no agent command: put it after '--', e.g. "
                             "neens eval run --run-id ppr_1 -- python -m my_agent")
        self.check_target(declared_gates)
        self.baseline_wire = parse_baseline(self.baseline)
        check_parallel(self.concurrency, self.workers)
        if self.output_cap < 1024:
            raise UsageError("output cap must be at least 1024 bytes")
        self.check_repo()
        return self

    def check_target(self, declared_gates: bool) -> None:
        """Which run: ``run_id`` or a new one (``create``/``gates``), never both."""
        if self.run_id is not None and not self.run_id.strip():
            raise SettingError("run_id", "is empty")
        if self.run_id and (self.create or self.gates_wire or declared_gates):
            what: list[str | Ref] = ([Ref("create")] if self.create else [Ref("gates")]
                                     if self.gates_wire else ["a policy 'gates' block"])
            raise SettingError("run_id", ["drives an existing run: it cannot be combined with ",
                                          *what])
        if self.gates_wire and declared_gates:
            raise SettingError("gates", "and a policy 'gates' block both select eval gates: "
                                        "use one of them")
        if not self.run_id and not self.creates_run:
            raise SettingError("run_id", [
                "nothing to run: pass ", Ref("run_id"), " ID, or ", Ref("create"), " ",
                Ref("dataset"), " ID ", Ref("version_label"), " LABEL, or ", Ref("gates"),
                " active"], lead=False)
        if self.create and not self.gates_wire and not declared_gates:
            missing = [f for f, v in (("dataset", self.dataset),
                                      ("version_label", self.version_label)) if not v]
            if missing:
                needs: list[str | Ref] = ["needs ", Ref(missing[0])]
                if len(missing) > 1:
                    needs += [" and ", Ref(missing[1])]
                raise SettingError("create", needs)
        if self.version_label is not None and not self.version_label.strip() and self.creates_run:
            raise SettingError("version_label", "is empty")

    def check_repo(self) -> None:
        """``repo``, cleaned (detection fills it when not given)."""
        if self.repo is not None:
            cleaned = clean_repo(self.repo)
            if cleaned is None:
                raise SettingError("repo", " / NEENS_REPO must be owner/name (at most 255 "
                                           "characters, no control characters)", sep="")
            self.repo = cleaned
