"""A CI platform the package does not know, registered the way a new one is added: one entry
in the platform table and one publisher class. The real front door (``neens_action.ci.main``,
in its own process) then detects it, takes its workspace, job URL, commit facts, secrets and
token from the entry, and publishes through its publisher, against the real sandbox with a
real OpenTelemetry agent."""

from __future__ import annotations

import json
import subprocess
import textwrap
from pathlib import Path

from tests.helpers import AGENT, PY, Sandbox

DRONE_TOKEN = "drone_token_s3cret_789"
SHA = "c0ffee" + "0" * 34

# the whole registration: one table entry, one publisher class (nothing else is edited)
FRONT_DOOR = textwrap.dedent("""
    import json, sys
    from pathlib import Path

    from neens_action.ci import main, platforms
    from neens_action.ci.commit_facts import CommitFacts
    from neens_action.publish.publishers import FilesPublisher


    class DronePublisher(FilesPublisher):
        def publish(self, report, outcome, result_json):
            outputs = super().publish(report, outcome, result_json)
            seen = {"outputs": outputs, "context": report.context, "token": self.config.token,
                    "workspace": str(self.config.workspace)}
            Path(self.config.environ["DRONE_OUTPUT"]).write_text(json.dumps(seen))
            return outputs


    platforms.PLATFORMS.insert(0, platforms.Platform(
        name="drone",
        detect=lambda env: env.get("DRONE") == "true",
        workspace_var="DRONE_WORKSPACE",
        job_url=lambda env: env.get("DRONE_BUILD_LINK", ""),
        commit_facts=lambda env, read_text: CommitFacts(git_sha=env.get("DRONE_COMMIT_SHA"),
                                                        branch=env.get("DRONE_BRANCH")),
        publisher=DronePublisher,
        secrets=frozenset({"DRONE_TOKEN"}),
        token=lambda inputs, env: env.get("DRONE_TOKEN", ""),
    ))
    sys.exit(main.run())
""")


def test_a_fourth_platform_needs_one_entry_and_one_publisher(sandbox: Sandbox,
                                                             tmp_path: Path) -> None:
    ws = tmp_path / "drone-workspace"
    ws.mkdir()
    seen_file = tmp_path / "drone-output.json"
    env = sandbox.agent_env()
    for var in ("NEENS_BASE_URL", "NEENS_API_KEY", "OTEL_EXPORTER_OTLP_ENDPOINT",
                "OTEL_EXPORTER_OTLP_HEADERS"):
        env.pop(var, None)  # the inputs must be enough
    env.update({
        "DRONE": "true", "CI": "true", "DRONE_WORKSPACE": str(ws),
        "DRONE_BUILD_LINK": "https://drone.example/acme/agent/12",
        "DRONE_COMMIT_SHA": SHA, "DRONE_BRANCH": "feature/drone",
        "DRONE_TOKEN": DRONE_TOKEN, "DRONE_OUTPUT": str(seen_file),
        "NEENS_INPUT_API_KEY": sandbox.api_key, "NEENS_INPUT_BASE_URL": sandbox.url,
        "NEENS_INPUT_DATASET": "ds_refunds", "NEENS_INPUT_MAX_REGRESSIONS": "0",
        "NEENS_INPUT_POLL_INTERVAL": "0.5", "NEENS_INPUT_POLL_TIMEOUT": "120",
        "NEENS_INPUT_TIMEOUT": "60", "AGENT_MODE": "good",
        # the agent fails if the platform's secret reached it
        "NEENS_INPUT_COMMAND": f"sh -c 'test -z \"$DRONE_TOKEN\" && exec {PY} {AGENT}'",
    })
    proc = subprocess.run([PY, "-c", FRONT_DOOR], env=env, cwd=tmp_path, capture_output=True,
                          text=True, timeout=300, check=False)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "::" not in proc.stderr  # not GitHub: no workflow commands

    seen = json.loads(seen_file.read_text())
    assert seen["token"] == DRONE_TOKEN
    assert seen["workspace"] == str(ws)
    assert seen["context"] == {"platform": "drone",
                               "job_url": "https://drone.example/acme/agent/12"}
    assert seen["outputs"]["verdict"] == "passed" and seen["outputs"]["exit-code"] == "0"
    assert seen["outputs"]["result-json"] == "neens-result.json"  # relative to its workspace
    result = json.loads((ws / "neens-result.json").read_text())
    assert result["exitCode"] == 0 and result["runId"] == seen["outputs"]["run-id"]

    run = sandbox.get(f"/preprod-evals/{result['runId']}").json()
    assert (run["gitSha"], run["branch"], run["source"]) == (SHA, "feature/drone", "ci")
    assert DRONE_TOKEN not in proc.stdout + proc.stderr
