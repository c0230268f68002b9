"""Typed settings for the eval commands, built from flags + environment (or action inputs).

:class:`EvalRunSettings` is a plain dataclass with no click dependency: the CLI builds it with
:meth:`EvalRunSettings.from_flags` and the CI modes (``ci/modes/``) can build it directly
from action inputs. :meth:`validate` raises :class:`~neens_action.errors.UsageError` with one
line that says what to fix. Secrets are ``repr=False`` so a settings object can be logged.

Environment defaults: ``NEENS_BASE_URL``, ``NEENS_API_KEY``, ``NEENS_PROJECT_ID``,
``NEENS_GATE_POLICY``, ``NEENS_GATES``, ``NEENS_REPO``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from typing import Any

from neens_action.errors import UsageError
from neens_action.settings import shard
from neens_action.settings.connection import (
    CONNECTION_ENV,
    Connection,
    check_number,
    check_workers,
    env_defaults,
)
from neens_action.settings.provenance import Provenance, clean_repo, resolve

_ENV = {
    **CONNECTION_ENV,
    "gate_policy": "NEENS_GATE_POLICY",
    "gates": "NEENS_GATES",
    "repo": "NEENS_REPO",
}
_HEX = re.compile(r"^[0-9a-fA-F]{7,64}$")
_GATE_ID = re.compile(r"^[A-Za-z0-9_.:\-]{1,128}$")


def parse_baseline(spec: str | None) -> dict[str, str] | None:
    """``--baseline`` spec -> wire object (spec 4.1.2); None when not given.

    Unlike the reference (which silently sends nothing), an unrecognised or empty spec is a
    usage error here: a typo must not quietly change what the build is compared with.
    """
    if spec is None or not spec.strip():
        return None
    s = spec.strip()
    if s.startswith("run:"):
        value = s[4:].strip()
        if not value:
            raise UsageError("--baseline run: needs a run id, e.g. run:ppr_123")
        return {"kind": "preprod_run", "value": value}
    if s.startswith("branch:"):
        value = s[7:].strip()
        if not value:
            raise UsageError("--baseline branch: needs a branch name, e.g. branch:main")
        return {"kind": "branch", "value": value}
    if s == "prod":
        return {"kind": "prod_window", "range": "7d"}
    if s.startswith("prod:"):
        rng = s[5:].strip()
        if not rng:
            raise UsageError("--baseline prod: needs a range, e.g. prod:30d")
        return {"kind": "prod_window", "range": rng}
    raise UsageError(
        f"--baseline {spec!r} is not a baseline: use branch:<name>, run:<run id>, prod or "
        "prod:<range> (e.g. prod:30d)"
    )


def parse_gates(value: str | list[str] | None) -> str | list[str] | None:
    """``--gates`` / ``NEENS_GATES`` -> ``"active"``, a list of gate ids, or None (spec 4.3)."""
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
        raise UsageError(f"--gates {value!r} names no gate: use 'active' or gate-a,gate-b")
    if any(i.lower() == "active" for i in ids):
        raise UsageError("--gates: use either 'active' or a list of gate ids, not both")
    for gid in ids:
        if not _GATE_ID.match(gid):
            raise UsageError(f"--gates: {gid!r} is not a gate id (letters, digits, _ . : -)")
    return list(dict.fromkeys(ids))


@dataclass
class EvalRunSettings(Connection):
    """Everything ``neens eval run`` (and the pull mode of the action) needs."""

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
    def creates_run(self) -> bool:
        return bool(self.create or self.gates_wire or self.declared_gates)

    @property
    def keeps_every_item(self) -> bool:
        """True when an output lists every item (--json, --junit, a CI result file)."""
        return bool(self.json or self.junit or self.full_run_items)

    def validate(self, *, need_command: bool = True,
                 declared_gates: bool = False) -> EvalRunSettings:
        """Check everything that can be checked before a request; parse specs. Returns self.

        ``declared_gates``: the policy file has a ``gates`` block (it implies creating a run).
        """
        self.declared_gates = declared_gates
        self.check_connection()
        self.gates_wire = parse_gates(self.gates)
        shard.check_flags(self)  # --shard / --no-start / --finish / --only-create
        if need_command and shard.needs_command(self) and not self.command:
            raise UsageError("no agent command: put it after '--', e.g. "
                             "neens eval run --run-id ppr_1 -- python -m my_agent")
        if self.run_id is not None and not self.run_id.strip():
            raise UsageError("--run-id is empty")
        if self.run_id and (self.create or self.gates_wire or declared_gates):
            what = ("--create" if self.create else "--gates" if self.gates_wire
                    else "a policy 'gates' block")
            raise UsageError(f"--run-id drives an existing run: it cannot be combined with {what}")
        if self.gates_wire and declared_gates:
            raise UsageError("--gates and a policy 'gates' block both select eval gates: "
                             "use one of them")
        if not self.run_id and not self.creates_run:
            raise UsageError("nothing to run: pass --run-id ID, or --create --dataset ID "
                             "--version-label LABEL, or --gates active")
        if self.create and not self.gates_wire and not declared_gates:
            missing = [f for f, v in (("--dataset", self.dataset),
                                      ("--version-label", self.version_label)) if not v]
            if missing:
                raise UsageError(f"--create needs {' and '.join(missing)}")
        if self.version_label is not None and not self.version_label.strip() and self.creates_run:
            raise UsageError("--version-label is empty")
        self.baseline_wire = parse_baseline(self.baseline)
        if self.max_regressions is not None and (
            isinstance(self.max_regressions, bool) or int(self.max_regressions) < 0
        ):
            raise UsageError(f"--max-regressions must be 0 or more, got {self.max_regressions}")
        check_number("--min-pass-rate", self.min_pass_rate, lo=0.0, hi=1.0)
        check_number("--min-avg-score", self.min_avg_score, lo=0.0, hi=1.0)
        check_number("--max-cost-delta-pct", self.max_cost_delta_pct)
        check_number("--max-latency-delta-pct", self.max_latency_delta_pct)
        if self.max_abs_failures is not None and int(self.max_abs_failures) < 0:
            raise UsageError(f"--max-abs-failures must be 0 or more, got {self.max_abs_failures}")
        if isinstance(self.concurrency, bool) or int(self.concurrency) < 1:
            raise UsageError(f"--concurrency must be 1 or more, got {self.concurrency}")
        check_workers(self.workers, self.concurrency)
        check_number("--timeout", self.timeout, positive=True)
        check_number("--poll-interval", self.poll_interval, positive=True)
        check_number("--poll-timeout", self.poll_timeout, positive=True)
        if self.output_cap < 1024:
            raise UsageError("output cap must be at least 1024 bytes")
        if self.git_sha is not None and not _HEX.match(self.git_sha.strip()):
            raise UsageError(f"--git-sha must be 7-64 hex characters, got {self.git_sha[:80]!r}")
        if self.pr_number is not None and int(self.pr_number) < 1:
            raise UsageError(f"--pr-number must be a positive integer, got {self.pr_number}")
        if self.repo is not None:
            cleaned = clean_repo(self.repo)
            if cleaned is None:
                raise UsageError("--repo / NEENS_REPO must be owner/name (at most 255 "
                                 "characters, no control characters)")
            self.repo = cleaned
        if self.pr_url is not None and not self.pr_url.startswith(("http://", "https://")):
            raise UsageError("--pr-url must be an http(s) URL")
        return self
