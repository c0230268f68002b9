"""Settings of ``neens eval push``: the run settings plus the agent connection Neens calls."""

from __future__ import annotations

from dataclasses import dataclass

from neens_action.errors import UsageError
from neens_action.settings.run import EvalRunSettings, parse_gates


@dataclass
class EvalPushSettings(EvalRunSettings):
    """``neens eval push``: the run settings plus the agent connection Neens calls."""

    agent_connection: str | None = None

    def validate(  # type: ignore[override]
        self, *, need_command: bool = False, policy_gates: bool = False
    ) -> EvalPushSettings:
        """Push checks first (their wording), then every shared check of ``eval run``.

        ``policy_gates``: the policy file declares a ``gates`` block (it selects eval gates).
        """
        conn = (self.agent_connection or "").strip()
        if not conn:
            raise UsageError("neens eval push needs --agent-connection ID (the agent_http "
                             "connection Neens calls once per prompt)")
        self.agent_connection = conn
        gates = parse_gates(self.gates)
        if gates and policy_gates:
            raise UsageError("--gates (or NEENS_GATES) cannot be combined with the policy "
                             "file's gates block: declare the eval gates in one place")
        selects_gates = bool(gates) or policy_gates
        if not (self.dataset or "").strip() and not selects_gates:
            raise UsageError("neens eval push needs --dataset ID (or eval gates: --gates active "
                             "or a policy gates block)")
        if self.version_label is not None and not self.version_label.strip():
            raise UsageError("--version-label is empty")
        if not self.version_label and not selects_gates:
            raise UsageError("neens eval push needs --version-label LABEL (the candidate "
                             "version stamped on the run)")
        # Every other check is the one of ``eval run --create`` (its target checks are
        # satisfied by the push checks above, which carry push wording).
        self.create = True
        EvalRunSettings.validate(self, need_command=False, declared_gates=policy_gates)
        return self
