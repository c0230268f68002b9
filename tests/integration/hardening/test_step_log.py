"""Issue 17: the step log holds no workflow command but ours, read with the GitHub runner's
rules (``::name::`` at a line start and ``##[name]`` anywhere, tests/fakes/gh_runner_log.py).

Eleven active gates, all failing, each named to inject a command in both syntaxes (the 11th
of a kind is past the annotation cap, so it is printed as text): the CI front door
(``entrypoint.py`` on GitHub) and the plain CLI in a ``run:`` step (``GITHUB_ACTIONS=true``)
against the real sandbox and a real OpenTelemetry agent.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from tests.fakes.gh_runner_log import commands, run_commands
from tests.fakes.github_server import FakeGitHub, parse_outputs
from tests.helpers import PY, Sandbox, run_cli, start_sandbox
from tests.integration.publish.test_entrypoint import _github_env, _run, gh  # noqa: F401

DATA = Path(__file__).resolve().parents[1] / "data"
AGENT = [PY, str(DATA / "mode_agent.py")]
HOSTILE = ["x ##[set-output name=pwned;]y", "::set-output name=pwned::z",
           "a\r::warning::b", "##[add-path]/tmp/evil", "  ::error::spoofed"]
OURS = {"add-mask", "error", "warning", "notice", "group", "endgroup"}


@pytest.fixture(scope="module")
def hostile_sandbox(tmp_path_factory) -> Sandbox:
    tmp = tmp_path_factory.mktemp("hostile")
    seed = yaml.safe_load((DATA / "gates_seed.yaml").read_text())
    template = next(g for g in seed["gates"] if g["id"] == "gate-refund")
    seed["gates"] = [
        {**template, "id": f"gate-{i}", "name": f"{HOSTILE[i % len(HOSTILE)]} #{i}",
         "items": [{**template["items"][0], "id": f"g{i}"}]}
        for i in range(11)
    ]
    path = tmp / "seed.yaml"
    path.write_text(yaml.safe_dump(seed, allow_unicode=True))
    sb = start_sandbox(tmp, seed=path)
    yield sb
    sb.stop()


def _check(log: str) -> None:
    ran = run_commands(log)
    assert {c.name.lower() for c in ran} <= OURS, [c.line for c in ran if c.name not in OURS]
    for kind in ("error", "warning", "notice"):
        assert sum(c.name == kind for c in ran) <= 10
    assert not any("pwned" in (c.data + str(c.properties)) for c in ran if c.name == "add-mask")
    everything = commands(log)
    assert everything[0].name == "add-mask" or everything[0].name == "stop-commands"
    assert everything[-1].name == "resume"  # on again for the next step, and only at the end


def test_front_door_log_runs_no_injected_command(hostile_sandbox: Sandbox,
                                                 gh: FakeGitHub,  # noqa: F811
                                                 tmp_path: Path) -> None:
    env = _github_env(hostile_sandbox, gh, tmp_path, "bad")
    env.update({"INPUT_GATES": "active", "INPUT_DATASET": "", "INPUT_COMMAND":
                " ".join(AGENT), "INPUT_COMMENT": "off", "INPUT_MIN-PASS-RATE": "",
                "INPUT_MAX-REGRESSIONS": ""})
    proc = _run(env, Path(env["GITHUB_WORKSPACE"]))
    assert proc.returncode == 1, proc.stderr[-3000:]
    log = proc.stdout + "\n" + proc.stderr
    _check(proc.stderr)
    assert run_commands(proc.stdout) == []
    errors = [c for c in run_commands(proc.stderr) if c.name == "error"]
    assert len(errors) == 10  # the cap: the rest is printed as inert text
    assert "set-output name=pwned" in log  # the names are shown, as text
    outputs = parse_outputs((tmp_path / "output.txt").read_text())
    assert "pwned" not in outputs and outputs["verdict"] == "blocked"


def test_cli_in_a_run_step_shields_itself(hostile_sandbox: Sandbox) -> None:
    env = hostile_sandbox.agent_env(AGENT_MODE="bad", GITHUB_ACTIONS="true")
    proc = run_cli(["eval", "run", "--gates", "active", "--version-label", "cand-hostile",
                    "--poll-interval", "0.5", "--", *AGENT], env, timeout=180)
    assert proc.returncode == 1, proc.stderr[-3000:]
    assert "set-output name=pwned" in proc.stderr
    _check(proc.stderr)
    assert commands(proc.stdout) == []


def test_neens_ci_on_the_host_masks_and_shields_like_the_container(
        hostile_sandbox: Sandbox, gh: FakeGitHub, tmp_path: Path) -> None:  # noqa: F811
    """``neens ci`` (the host action) is the front door: its own ``::add-mask::`` and
    ``::stop-commands::`` must reach the runner as commands (not neutralised by the CLI's own
    shield), and the hostile gate names still run nothing."""
    env = _github_env(hostile_sandbox, gh, tmp_path, "bad")
    env = {k.replace("INPUT_", "NEENS_INPUT_", 1).replace("-", "_") if k.startswith("INPUT_")
           else k: v for k, v in env.items()}
    env.update({"NEENS_INPUT_GATES": "active", "NEENS_INPUT_DATASET": "",
                "NEENS_INPUT_COMMENT": "off", "NEENS_INPUT_MIN_PASS_RATE": "",
                "NEENS_INPUT_MAX_REGRESSIONS": ""})
    env.pop("NEENS_INPUT_COMMAND", None)
    proc = run_cli(["ci", "--", *AGENT], env, timeout=180)
    assert proc.returncode == 1, proc.stderr[-3000:]
    _check(proc.stderr)
    masks = [c for c in run_commands(proc.stderr) if c.name == "add-mask"]
    assert any(c.data == hostile_sandbox.api_key for c in masks), "the key is masked"


def test_stdout_alone_runs_nothing_json_and_report(hostile_sandbox: Sandbox,
                                                   tmp_path: Path) -> None:
    """With stderr thrown away (``2>/dev/null``: no ``::stop-commands::`` reaches the log),
    stdout itself is inert: ``--json`` (which still parses to the same names) and
    ``neens report`` in every format. The log is stdout alone, as with ``2>/dev/null``."""
    env = hostile_sandbox.agent_env(AGENT_MODE="bad", GITHUB_ACTIONS="true")
    proc = run_cli(["eval", "run", "--gates", "active", "--version-label", "cand-json",
                    "--poll-interval", "0.5", "--json", "--", *AGENT], env, timeout=180)
    assert proc.returncode == 1
    assert run_commands(proc.stdout) == [], [c.line for c in run_commands(proc.stdout)]
    doc = json.loads(proc.stdout)
    assert "x ##[set-output name=pwned;]y #0" in json.dumps(doc, ensure_ascii=False)
    saved = tmp_path / "result.json"
    saved.write_text(proc.stdout, encoding="utf-8")
    for fmt in ("markdown", "comment", "text", "junit"):
        out = run_cli(["report", str(saved), "--format", fmt], env, timeout=60)
        assert out.returncode == 0 and out.stdout, fmt
        if fmt != "junit":  # JUnit has no gate names, only items
            assert "set-output name=pwned" in out.stdout, fmt
        assert run_commands(out.stdout) == [], (fmt, [c.line for c in run_commands(out.stdout)])
