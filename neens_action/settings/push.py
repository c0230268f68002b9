"""Settings of ``neens eval push``: the run settings plus the agent connection Neens calls."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from neens_action.settings.names import Name, Names, Ref, SettingError, checks
from neens_action.settings.run import RUN_NAMES, EvalRunSettings, parse_gates

PUSH_NAMES = RUN_NAMES.with_(Names(agent_connection=Name("--agent-connection",
                                                         "agent-connection")))


@dataclass
class EvalPushSettings(EvalRunSettings):
    """``neens eval push``: the run settings plus the agent connection Neens calls."""

    NAMES: ClassVar[Names] = PUSH_NAMES

    agent_connection: str | None = None

    @checks
    def validate(  # type: ignore[override]
        self, *, need_command: bool = False, policy_gates: bool = False
    ) -> EvalPushSettings:
        """Push checks first (their wording), then every shared check of ``eval run``.

        ``policy_gates``: the policy file declares a ``gates`` block (it selects eval gates).
        """
        conn = (self.agent_connection or "").strip()
        if not conn:
            raise SettingError("agent_connection", [
                "neens eval push needs ", Ref("agent_connection"),
                " ID (the agent_http connection Neens calls once per prompt)"], lead=False)
        self.agent_connection = conn
        gates = parse_gates(self.gates)
        if gates and policy_gates:
            raise SettingError("gates", "(or NEENS_GATES) cannot be combined with the policy "
                                        "file's gates block: declare the eval gates in one place")
        selects_gates = bool(gates) or policy_gates
        if not (self.dataset or "").strip() and not selects_gates:
            raise SettingError("dataset", [
                "neens eval push needs ", Ref("dataset"), " ID (or eval gates: ", Ref("gates"),
                " active or a policy gates block)"], lead=False)
        if self.version_label is not None and not self.version_label.strip():
            raise SettingError("version_label", "is empty")
        if not self.version_label and not selects_gates:
            raise SettingError("version_label", [
                "neens eval push needs ", Ref("version_label"),
                " LABEL (the candidate version stamped on the run)"], lead=False)
        # Every other check is the one of ``eval run --create`` (its target checks are
        # satisfied by the push checks above, which carry push wording).
        self.create = True
        EvalRunSettings.validate(self, need_command=False, declared_gates=policy_gates)
        return self
