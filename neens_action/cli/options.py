"""Option groups shared by the eval-style commands (run, push, watch, stress run).

Each group is a decorator adding its options in the order listed, so every command spells a
flag, its type and its help the same way.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import click

if TYPE_CHECKING:
    from neens_action.policy import GatePolicy
    from neens_action.settings.run import EvalRunSettings
    from neens_action.world import World

Decorator = Callable[[Any], Any]


def stack(*decorators: Decorator) -> Decorator:
    """Apply ``decorators`` so their options appear in the given order in ``--help``."""

    def apply(f: Any) -> Any:
        for decorator in reversed(decorators):
            f = decorator(f)
        return f

    return apply


def run_eval_job(name: str, settings: EvalRunSettings, *, world: World,
                 policy: GatePolicy | None) -> int:
    """Run eval-style job ``name`` (``run``, ``push``, ``stress``, a sharding step) through the
    pipeline, with ``--json`` / ``--junit`` / ci-result as the settings say."""
    from neens_action import pipeline
    from neens_action.jobs import job

    junit = settings.junit if name in ("run", "push", "stress", "finish") else None
    finished = pipeline.run_job(job(name), settings, world=world, policy=policy,
                                json_out=settings.json, junit_path=junit,
                                report_ci=settings.report_ci_result)
    if name == "create" and finished.code == 0 and not settings.json:
        print(finished.outcome.run_id, file=world.out, flush=True)  # for $(...) in CI
    return finished.code


def load_policy(settings: EvalRunSettings) -> GatePolicy | None:
    """``policy.build_policy``: the policy file with the override flags on top (None without
    either). Every setting's value rule runs first, the override flags' included."""
    settings.check_rules()
    path, overrides = settings.gate_policy, settings.overrides
    if not path and not overrides:
        return None
    from neens_action import policy as policy_mod

    return policy_mod.build_policy(path, overrides)


def declares_gates(policy: GatePolicy | None) -> bool:
    """True when the policy file has a ``gates`` block (it implies creating a run)."""
    return policy is not None and policy.gates_block() is not None


policy_options = stack(
    click.option("--gate-policy", metavar="FILE",
                 help="Gate-as-code policy file (env NEENS_GATE_POLICY)."),
    click.option("--max-cost-delta-pct", type=float, metavar="PCT",
                 help="Block if avg cost rises more than PCT% vs baseline."),
    click.option("--max-latency-delta-pct", type=float, metavar="PCT",
                 help="Block if avg latency rises more than PCT% vs baseline."),
    click.option("--min-avg-score", type=float, metavar="R",
                 help="Block if the run's avg score is below R (0..1)."),
    click.option("--max-abs-failures", type=int, metavar="N",
                 help="Block if absolute candidate failures exceed N."),
)

connection_options = stack(
    click.option("--base-url", metavar="URL", help="Neens API origin (env NEENS_BASE_URL)."),
    click.option("--api-key", metavar="KEY",
                 help="nk_live_… project key (env NEENS_API_KEY; prefer the variable)."),
    click.option("--project-id", metavar="ID",
                 help="X-Neens-Project-Id (env NEENS_PROJECT_ID; usually unneeded)."),
)

# the Neens UI page links of reports (every command whose report names a run)
ui_url_option = click.option(
    "--ui-url", metavar="TEMPLATE",
    help="Neens UI run page for report links, e.g. https://app.example/runs/{run_id} "
         "(optionally ?item={item_id}; env NEENS_UI_URL).")

gate_options = stack(
    click.option("--max-regressions", type=int, metavar="N", help="Gate: fail if regressions > N."),
    click.option("--min-pass-rate", type=float, metavar="R",
                 help="Gate: fail if pass rate < R (0..1)."),
)


def provenance_options(gates_help: str) -> Decorator:
    """``--gates`` and the candidate's provenance (detected in CI when omitted)."""
    return stack(
        click.option("--gates", metavar="active|ID,ID", help=gates_help),
        click.option("--git-sha", metavar="SHA",
                     help="Candidate commit (default: detected in CI)."),
        click.option("--branch", metavar="NAME",
                     help="Candidate branch (default: detected in CI)."),
        click.option("--pr-number", type=int, metavar="N", help="Pull/merge request number."),
        click.option("--pr-url", metavar="URL", help="Pull/merge request URL."),
        click.option("--repo", metavar="OWNER/NAME", help="Repository (env NEENS_REPO)."),
    )


def agent_options(unit: str = "item") -> Decorator:
    """``--timeout`` and ``--concurrency`` for the user's agent command."""
    return stack(
        click.option("--timeout", type=float, metavar="SECONDS",
                     help=f"Per-{unit} command timeout."),
        click.option("--concurrency", type=int, default=1, show_default=True,
                     help=f"Parallel {unit} invocations."),
    )


workers_option = click.option(
    "--workers", type=int, default=None, metavar="N",
    help="Worker mode: N long-lived agent processes, each handed one item at a time over "
         "a pipe (docs/worker-protocol.md); replaces --concurrency.")


def poll_options(timeout_help: str = "Overall scoring budget.") -> Decorator:
    return stack(
        click.option("--poll-interval", type=float, default=5.0, show_default=True,
                     metavar="SECONDS",
                     help="Longest wait between status polls (polling starts at 0.5 s)."),
        click.option("--poll-timeout", type=float, default=1800.0, show_default=True,
                     metavar="SECONDS", help=timeout_help),
    )


no_gate_option = click.option(
    "--no-gate", is_flag=True, help="A failed gate exits 0 (a run error still exits 2).")

output_options = stack(
    click.option("--json", "json_out", is_flag=True, help="Machine-readable result on stdout."),
    click.option("--junit", metavar="PATH", help="Write a JUnit XML report to PATH."),
)
