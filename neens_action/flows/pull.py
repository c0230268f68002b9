"""The pull flow, ``neens eval run``: the create body (target, baseline, gate, provenance)
and :func:`run_pull`, the whole command over the shared run lifecycle
(:mod:`neens_action.flows.runs`). Problems found before any request raise
:class:`~neens_action.errors.UsageError`; everything later lands in ``outcome.error`` (or
``outcome.interrupted``) so the pipeline can still report and render.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from neens_action.errors import Interrupted, NeensError, UsageError
from neens_action.flows.interrupt import abandon, handle_interrupt
from neens_action.flows.runs import create_run, drive_run
from neens_action.outcome import Outcome
from neens_action.settings import provenance
from neens_action.world import World

if TYPE_CHECKING:
    from neens_action.api.client import NeensClient
    from neens_action.policy import GatePolicy
    from neens_action.settings.run import EvalRunSettings

# -- create -------------------------------------------------------------------------------------


def version_label_for(settings: EvalRunSettings, prov: provenance.Provenance) -> str | None:
    """The candidate label: --version-label, else (eval-gates runs) the short commit."""
    if settings.version_label:
        return settings.version_label.strip()
    if settings.gates_wire or settings.declared_gates:
        if not prov.short_sha:
            raise UsageError("--gates needs a version label: pass --version-label or --git-sha "
                             "(no commit was detected from the CI environment)")
        return prov.short_sha
    return None


def server_gate(settings: EvalRunSettings, policy: GatePolicy | None) -> dict[str, Any]:
    """The run-create ``gate``: the policy's gate block, then --max-regressions/--min-pass-rate."""
    gate: dict[str, Any] = {}
    if policy is not None:
        base = policy.server_gate()
        if isinstance(base, dict):
            gate.update({k: v for k, v in base.items() if v is not None})
    if settings.max_regressions is not None:
        gate["max_regressions"] = int(settings.max_regressions)
    if settings.min_pass_rate is not None:
        gate["min_pass_rate"] = float(settings.min_pass_rate)
    if not gate.get("cost"):
        gate.pop("cost", None)  # never "cost": null (it would void in-flight sweeps)
    return gate


def create_body(settings: EvalRunSettings, prov: provenance.Provenance,
                policy: GatePolicy | None = None) -> dict[str, Any]:
    """The run-create body for ``eval run --create`` / ``--gates`` (null fields omitted)."""
    label = version_label_for(settings, prov)
    assert label is not None  # validate() guarantees a label for --create without gates
    body: dict[str, Any] = {"name": (settings.name or "").strip() or label,
                            "version_label": label}
    if settings.dataset:
        body["dataset_id"] = settings.dataset
    if settings.dataset_version_id:
        body["dataset_version_id"] = settings.dataset_version_id
    baseline = settings.baseline_wire
    if baseline is None and not settings.baseline:
        baseline = provenance.default_baseline(prov, has_dataset=bool(settings.dataset))
    if baseline:
        body["baseline"] = baseline
    gate = server_gate(settings, policy)
    if gate:
        body["gate"] = gate
    if settings.gates_wire:
        body["gates"] = settings.gates_wire
    declared = policy.gates_block() if policy is not None else None
    if declared is not None:
        body["gates_policy"] = declared
    body.update(prov.wire(has_gates=bool(settings.gates_wire or declared is not None)))
    return body


def run_pull(settings: EvalRunSettings, *, client: NeensClient, world: World,
             policy: GatePolicy | None = None) -> Outcome:
    """``neens eval run``: create (or attach), drive, gate. See the module docstring."""
    outcome = Outcome(mode="run", base_url=client.base_url, enforced=not settings.no_gate)
    if policy is not None:
        outcome.policy_identity = policy.identity()
    body = None
    if settings.creates_run:
        prov = settings.resolve_provenance(world.environ)
        body = create_body(settings, prov, policy)  # UsageError propagates: nothing sent yet
    plan = settings.noise_plan
    reps: list[Outcome] = []
    if plan.noise_aware:  # the noise-aware flow and its statistics, only when asked for
        from neens_action.flows import repeats
    try:
        run = None
        if plan.repeated and body is not None:
            repeats.run_repeats(client, outcome, settings, body, reps, world=world,
                                policy=policy)
            return outcome
        if body is not None:
            if plan.noise_aware:  # the noise-aware verdict judges regressions, pass rate
                body = repeats.rep_body(body, 1, 1)
            run = create_run(client, body, world=world, outcome=outcome)
        else:
            outcome.run_id = settings.run_id
        label = body["version_label"] if body else (settings.version_label or None)
        drive_run(client, outcome, settings, world=world, policy=policy, run=run, label=label,
                  every_item=True if plan.noise_aware else None)
        if plan.noise_aware:
            repeats.history_only(client, outcome, settings, world=world)
    except (Interrupted, KeyboardInterrupt):
        handle_interrupt(client, outcome, world=world, command=settings.command)
        if reps:
            repeats.cancel_reps(client, reps, world)
    except NeensError as exc:
        outcome.error = outcome.error or str(exc)
        if outcome.run_id:
            abandon(client, outcome, world)
        for rep in reps[1:]:
            abandon(client, rep, world)
    return outcome
