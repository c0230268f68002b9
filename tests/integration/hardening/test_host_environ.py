"""The host action's step script, run the way the runner (and act) runs a ``shell: bash`` step:
its ``run:`` text in a file, ``bash --noprofile --norc -eo pipefail FILE``, with the step's
``env:``. The agent (tests/integration/hardening/nosy_agent.py) reads the environment of every
ancestor it can: with ``exec`` the step's bash is gone (it became ``neens``, non-dumpable),
so neither the Neens key nor the GitHub token is readable anywhere up the tree."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import yaml

from tests.helpers import ROOT, Sandbox

NOSY = Path(__file__).with_name("nosy_agent.py")
GH_TOKEN = "ghs_host_step_token_0123456789"


def _step(action: dict, step_id: str) -> dict:
    return next(s for s in action["runs"]["steps"] if s.get("id") == step_id)


def _inputs(action: dict, given: dict[str, str]) -> dict[str, str]:
    """``${{ inputs.x }}`` as the runner expands it: the given value, else the default."""
    values = {name: str(spec.get("default", "")) for name, spec in action["inputs"].items()}
    values.update(given)
    return values


def test_the_agent_reads_no_secret_from_any_ancestor(sandbox: Sandbox, tmp_path: Path) -> None:
    """Without capabilities (a runner's user has no CAP_SYS_PTRACE): a non-dumpable
    process's ``environ`` is closed to the agent, a dumpable one's is open."""
    action = yaml.safe_load((ROOT / "host" / "action.yml").read_text())
    step = _step(action, "ci")
    inputs = _inputs(action, {
        "api-key": sandbox.api_key, "base-url": sandbox.url, "dataset": "ds_refunds",
        "command": f"{sys.executable} {NOSY}", "version-label": "host-environ",
        "comment": "off", "github-token": GH_TOKEN, "poll-interval": "0.5",
        "concurrency": "2",
    })
    env: dict[str, str] = {}
    for name, template in step["env"].items():
        template = str(template)
        if template.startswith("${{ inputs."):
            env[name] = inputs[template.removeprefix("${{ inputs.").removesuffix(" }}")]
    env["NEENS_CLI"] = str(Path(sys.executable).with_name("neens"))
    nosy = tmp_path / "nosy"
    nosy.mkdir()
    for name in ("output.txt", "summary.md"):
        (tmp_path / name).write_text("")
    base = {k: v for k, v in sandbox.agent_env().items()
            if k not in ("NEENS_API_KEY", "NEENS_BASE_URL", "OTEL_EXPORTER_OTLP_HEADERS",
                         "OTEL_EXPORTER_OTLP_ENDPOINT")}
    base.update({"GITHUB_ACTIONS": "true", "CI": "true", "GITHUB_WORKSPACE": str(tmp_path),
                 "GITHUB_OUTPUT": str(tmp_path / "output.txt"), "GITHUB_TOKEN": GH_TOKEN,
                 "GITHUB_STEP_SUMMARY": str(tmp_path / "summary.md"), "NOSY_OUT": str(nosy),
                 **env})
    script = tmp_path / "step.sh"
    script.write_text(step["run"])
    # root here: every capability dropped (as a runner's user has none), so a non-dumpable
    # process's environ is closed to the agent and a dumpable one's stays open
    user = ["setpriv", "--bounding-set=-all", "--inh-caps=-all"] if os.getuid() == 0 else []
    proc = subprocess.run([*user, "bash", "--noprofile", "--norc", "-eo", "pipefail", str(script)],
                          env=base, cwd=tmp_path, capture_output=True, text=True, timeout=240)
    assert proc.returncode == 0, (proc.stdout + proc.stderr)[-3000:]
    dumps = [json.loads(p.read_text()) for p in nosy.glob("*.json")]
    assert dumps, proc.stderr[-3000:]
    secrets = (sandbox.api_key, GH_TOKEN)
    for dump in dumps:
        ancestors = dump["ancestors"]
        assert ancestors, "the agent saw its ancestors"
        for entry in ancestors:
            seen = json.dumps(entry.get("environ", {}))
            assert not any(s in seen for s in secrets), (entry["pid"], entry["comm"],
                                                         entry["cmdline"])
        # the step's bash is not among them: exec replaced it with the front door
        assert not any(e["comm"] == "bash" and str(script) in e.get("cmdline", "")
                       for e in ancestors), [e["cmdline"] for e in ancestors]
