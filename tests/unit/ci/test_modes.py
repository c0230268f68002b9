"""CI modes push, stress and sweep without network: inputs, mode checks, plans, and the sweep
flow's verdict with a fake client at the edge."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from neens_action.ci import inputs as ci_inputs
from neens_action.ci import main as ci
from neens_action.ci import platforms
from neens_action.ci.context import CiContext
from neens_action.ci.inputs import InputError, parse_inputs
from neens_action.ci.modes import common as ci_modes
from neens_action.ci.modes import push as push_mode
from neens_action.ci.modes import run as run_mode
from neens_action.ci.modes import stress as stress_mode
from neens_action.ci.modes import sweep as sweep_mode
from neens_action.jobs import JOBS
from neens_action.settings.names import Ref, SettingError
from neens_action.settings.stress import STRESS_NAMES
from neens_action.settings.sweep import SWEEP_NAMES
from neens_action.world import World

KEY = "nk_live_cimodes_secret_0042"
SHA = "e" * 40


def _github(**inputs: str) -> dict[str, str]:
    env = {"GITHUB_ACTIONS": "true", "GITHUB_SHA": SHA, "INPUT_API-KEY": KEY,
           "INPUT_BASE-URL": "http://127.0.0.1:9"}
    env.update({f"INPUT_{k.upper().replace('_', '-')}": v for k, v in inputs.items()})
    return env


def _run(env: dict[str, str]) -> tuple[int, str]:
    stream = io.StringIO()
    return ci.run(env, stream=stream), stream.getvalue()


def _error_line(env: dict[str, str]) -> str:
    code, log = _run(env)
    assert code == 2, log
    assert "Traceback" not in log and log.count(KEY) == 1  # only its ::add-mask:: line
    errors = [line for line in log.splitlines() if line.startswith("::error")]
    assert len(errors) == 1, log
    return errors[0].removeprefix("::error title=neens input::")


def _ctx(env: dict[str, str], workspace: Path) -> CiContext:
    return CiContext(environ=env, platform=platforms.GITHUB, inputs=parse_inputs(env),
                        world=World(environ=env, err=io.StringIO(), out=io.StringIO()),
                        workspace=workspace)


# ---------------------------------------------------------------- the input table


def test_mode_inputs_are_in_the_one_table_and_the_modes_registered() -> None:
    names = [i.name for i in ci_inputs.INPUTS]
    assert len(names) == len(set(names))
    for name in ("gates", "arms", "sweep-mode", "failure-modes", "shard", "agent-connection"):
        assert name in names
    assert {"run": run_mode.plan_run, "push": push_mode.plan_push,
                        "stress": stress_mode.plan_stress, "sweep": sweep_mode.plan_sweep,
                        "create": ci.MODES["create"], "shard": ci.MODES["shard"],
                        "finish": ci.MODES["finish"]} == ci.MODES
    table = ci_inputs.markdown_table()
    assert "| `arms` | `INPUT_ARMS` | `NEENS_INPUT_ARMS` | list | — | — |" in table
    assert "| `gates` | `INPUT_GATES` | `NEENS_INPUT_GATES` | str | — | `NEENS_GATES` |" in table


def test_list_inputs_split_on_lines_and_commas() -> None:
    inp = parse_inputs({"INPUT_ARMS": "big=gpt-4o\n small=gpt-4o-mini \r\n\nlocal=llama,x=y",
                        "NEENS_INPUT_FAILURE_MODES": "fm_a, fm_b",
                        "INPUT_STRATEGIES": "paraphrase\tboundary"})
    assert inp["arms"] == ["big=gpt-4o", "small=gpt-4o-mini", "local=llama", "x=y"]
    assert inp["failure-modes"] == ["fm_a", "fm_b"]
    assert inp["strategies"] == ["paraphrase", "boundary"]
    assert parse_inputs({"INPUT_ARMS": " \n, "})["arms"] is None
    with pytest.raises(InputError) as exc:
        parse_inputs({"INPUT_ARMS": "a=b\x00"})
    assert (exc.value.name, exc.value.why) == ("arms", "must not contain control characters")


@pytest.mark.parametrize(("name", "value", "why"), [
    ("k", "0", "must be 1 or more, got 0"),
    ("bar", "1.5", "must be at most 1, got 1.5"),
    ("budget-usd", "-2", "must be at least 0, got -2"),
    ("per-mode", "30", "must be from 1 to 25, got 30"),
    ("ready-timeout", "0", "must be greater than 0, got 0"),
    ("sweep-mode", "pull", "must be one of runner, push, got 'pull'"),
    ("require-winner", "maybe", "must be true or false, got 'maybe'"),
    ("min-avg-score", "2", "must be at most 1, got 2"),
    ("max-abs-failures", "-3", "must be 0 or more, got -3"),
])
def test_bad_mode_input_values(name: str, value: str, why: str) -> None:
    with pytest.raises((InputError, SettingError)) as raised:
        ci_modes.check_input_rules(parse_inputs({f"INPUT_{name.upper()}": value}))
    err = raised.value
    err = InputError.of(err) if isinstance(err, SettingError) else err
    assert (err.name, err.why) == (name, why)


def test_explicitly_set_ignores_defaults_and_fallbacks() -> None:
    env = {"INPUT_SWEEP-MODE": "runner", "INPUT_REQUIRE-WINNER": "false", "NEENS_GATES": "active",
           "INPUT_READY-TIMEOUT": "600", "INPUT_K": ""}
    for name in ("sweep-mode", "require-winner", "gates", "ready-timeout", "k", "arms"):
        assert not ci_modes.explicitly_set(env, name), name
    env.update({"NEENS_INPUT_K": "2", "INPUT_REQUIRE-WINNER": "yes"})
    assert ci_modes.explicitly_set(env, "k") and ci_modes.explicitly_set(env, "require-winner")


def test_setting_errors_name_the_input_from_the_table() -> None:
    err = InputError.of(SettingError("arms", "invalid arm 'x': expected LABEL=MODEL",
                                     lead=False, names=SWEEP_NAMES))
    assert (err.name, err.why) == ("arms", "invalid arm 'x': expected LABEL=MODEL")
    err = InputError.of(SettingError("strategies", "'replay' is not a strategy",
                                     names=STRESS_NAMES))
    assert (err.name, err.why) == ("strategies", "'replay' is not a strategy")
    err = InputError.of(SettingError("pass_k", ["must be at least 1 (see ", Ref("pass_k"), ")"],
                                     names=SWEEP_NAMES))
    assert (err.name, err.why) == ("k", "must be at least 1 (see k)")


# ---------------------------------------------------------------- one line per bad input


@pytest.mark.parametrize(("inputs", "line"), [
    ({"mode": "run", "command": "true", "dataset": "ds", "arms": "a=b"},
     "arms: does not apply to mode run"),
    ({"mode": "run", "command": "true", "dataset": "ds", "agent_connection": "c"},
     "agent-connection: does not apply to mode run: set mode push to let Neens call the "
     "connection"),
    ({"mode": "push", "dataset": "ds"},
     "agent-connection: is required for mode push: the agent_http connection Neens calls "
     "once per prompt"),
    ({"mode": "push", "agent_connection": "c", "dataset": "ds", "command": "python a.py"},
     "command: does not apply to mode push: Neens calls agent-connection, nothing runs here "
     "(command is for modes run and stress)"),
    ({"mode": "push", "agent_connection": "c"},
     "dataset: is required for mode push: the dataset whose golden version Neens replays (or "
     "select eval gates: gates: active)"),
    ({"mode": "push", "agent_connection": "c", "dataset": "ds", "failure_modes": "fm"},
     "failure-modes: does not apply to mode push"),
    ({"mode": "push", "agent_connection": "c", "dataset": "ds", "gates": "bad id!"},
     "gates: 'bad id!' is not a gate id (letters, digits, _ . : -)"),
    ({"mode": "stress", "command": "true"},
     "failure-modes: is required for mode stress: the failure modes to attack (ids), or set "
     "suite-id to reuse a suite"),
    ({"mode": "stress", "failure_modes": "fm"},
     "command: mode stress needs an agent: command (run once per scenario) or "
     "agent-connection (Neens calls it)"),
    ({"mode": "stress", "failure_modes": "fm", "command": "true", "agent_connection": "c"},
     "agent-connection: and command exclude each other: command runs your agent here (pull), "
     "agent-connection lets Neens call it (push); set one"),
    ({"mode": "stress", "failure_modes": "fm", "command": "true", "dataset": "ds"},
     "dataset: does not apply to mode stress: a stress test replays its scenario suite (use "
     "sweep for a dataset)"),
    ({"mode": "stress", "failure_modes": "fm", "command": "true", "strategies": "replay"},
     "strategies: replay is always on: strategies picks among paraphrase, escalate, "
     "boundary"),
    ({"mode": "stress", "failure_modes": "fm", "command": "true", "strategies": "fast"},
     "strategies: 'fast' is not a strategy: use paraphrase, escalate or boundary"),
    ({"mode": "stress", "suite_id": "sts_1", "failure_modes": "fm", "command": "true"},
     "failure-modes: only applies to a new suite: suite-id reuses a generated one as it is "
     "(drop one of them)"),
    ({"mode": "sweep", "dataset": "ds", "command": "true"},
     "arms: is required for mode sweep: one arm per line, LABEL=MODEL"),
    ({"mode": "sweep", "sweep_mode": "push", "dataset": "ds"},
     "arms: is required for mode sweep: one arm per line, LABEL=CONNECTION_ID"),
    ({"mode": "sweep", "arms": "a=m1\nb=m2", "dataset": "ds"},
     "command: is required for a runner sweep: your agent command, run once per arm x rep x "
     "item with $NEENS_EVAL_MODEL set to the arm's model (or set sweep-mode: push)"),
    ({"mode": "sweep", "sweep_mode": "push", "arms": "a=c1", "dataset": "ds",
      "command": "true"},
     "command: does not apply to sweep-mode push: Neens calls each arm's connection"),
    ({"mode": "sweep", "arms": "a=m1", "command": "true"},
     "dataset: a sweep replays exactly one target: set one of dataset, dataset-version-id or "
     "suite-id"),
    ({"mode": "sweep", "arms": "a=m1", "command": "true", "dataset": "ds", "suite_id": "s"},
     "suite-id: a sweep replays exactly one target: set one of dataset, dataset-version-id "
     "or suite-id"),
    ({"mode": "sweep", "arms": "a=m1\nnolabel", "command": "true", "dataset": "ds"},
     "arms: invalid arm 'nolabel': expected LABEL=MODEL"),
    ({"mode": "sweep", "arms": "a=m1\na=m2", "command": "true", "dataset": "ds"},
     "arms: duplicate arm label 'a': every arm needs its own label"),
    ({"mode": "sweep", "arms": "a=m1", "command": "true", "dataset": "ds",
      "min_pass_rate": "0.9"},
     "min-pass-rate: does not apply to mode sweep: use bar, the pass rate an arm must clear"),
    ({"mode": "sweep", "arms": "a=m1", "command": "true", "dataset": "ds",
      "gate_policy": "p.json"},
     "gate-policy: does not apply to mode sweep"),
    ({"mode": "sweep", "arms": "a=m1", "command": "true", "dataset": "ds", "k": "0"},
     "k: must be 1 or more, got 0"),
])
def test_bad_mode_inputs_are_one_annotation(inputs: dict[str, str], line: str) -> None:
    assert _error_line(_github(**inputs)).startswith(line)


def test_an_unknown_mode_lists_the_modes() -> None:
    line = _error_line(_github(mode="sweeps"))
    assert line.startswith("mode: must be one of run, ") and line.endswith(", got 'sweeps'")
    assert all(f" {mode}," in line for mode in ("push", "stress", "sweep"))


def test_sweep_without_a_commit_needs_a_version_label() -> None:
    env = _github(mode="sweep", arms="a=m1", command="true", dataset="ds")
    del env["GITHUB_SHA"]
    assert _error_line(env) == ("version-label: is required for mode sweep (no commit was "
                                "detected to label the candidate)")


def test_policy_gates_block_and_gates_input_exclude_each_other(tmp_path: Path) -> None:
    (tmp_path / "policy.json").write_text(json.dumps({"gates": {"enforce": ["gate-a"]}}))
    env = _github(mode="push", agent_connection="c", gates="active",
                  gate_policy="policy.json")
    env["GITHUB_WORKSPACE"] = str(tmp_path)
    line = _error_line(env)
    assert line.startswith("gates: (or NEENS_GATES) cannot be combined with the policy file's "
                           "gates block"), line


def test_a_malformed_policy_names_gate_policy(tmp_path: Path) -> None:
    (tmp_path / "policy.json").write_text(json.dumps({"rules": [{"speed": 1}]}))
    env = _github(mode="stress", failure_modes="fm", command="true",
                  gate_policy="policy.json")
    env["GITHUB_WORKSPACE"] = str(tmp_path)
    line = _error_line(env)
    assert line.startswith("gate-policy: gate policy "), line
    assert "policy.json" in line


# ---------------------------------------------------------------- plans that build


def test_push_plan_defaults_the_label_to_the_commit(tmp_path: Path) -> None:
    ctx = _ctx(_github(mode="push", agent_connection=" conn_a ", dataset="ds",
                       max_cost_delta_pct="20"), tmp_path)
    plan = push_mode.plan_push(ctx)
    assert plan.job == "push" and plan.settings.base_url == "http://127.0.0.1:9"
    assert plan.settings.agent_connection == "conn_a" and plan.policy is not None
    assert plan.settings.version_label == plan.settings.provenance.short_sha


def test_run_accepts_gates_without_a_dataset_and_the_policy_inputs(tmp_path: Path) -> None:
    (tmp_path / "gate.yaml").write_text("rules:\n  - min_pass_rate: 0.8\n")
    env = _github(mode="run", command="python agent.py", gates="active",
                  gate_policy="gate.yaml", min_avg_score="0.5", max_abs_failures="2")
    ctx = _ctx(env, tmp_path)
    assert ci_modes.policy_path(ctx) == str(tmp_path / "gate.yaml")
    policy = ci_modes.policy_from_inputs(ctx)
    assert policy.identity()["overridden"] is True and policy.identity()["name"] == "gate.yaml"
    plan = run_mode.plan_run(ctx)
    assert plan.job == "run" and plan.policy is not None


def test_ui_url_input_reaches_the_settings(tmp_path: Path) -> None:
    template = "https://app.example/runs/{run_id}?item={item_id}"
    for env in (_github(mode="run", command="a", dataset="ds", ui_url=template),
                {**_github(mode="run", command="a", dataset="ds"), "NEENS_UI_URL": template}):
        assert run_mode.plan_run(_ctx(env, tmp_path)).settings.ui_url == template
    line = _error_line(_github(mode="push", agent_connection="c", dataset="ds",
                               ui_url="https://app.example/runs/{id}"))
    assert line == "ui-url: knows the variables {run_id} and {item_id}, not {id}", line


def test_policy_override_inputs_alone_make_a_policy(tmp_path: Path) -> None:
    ctx = _ctx(_github(max_latency_delta_pct="25"), tmp_path)
    policy = ci_modes.policy_from_inputs(ctx)
    assert policy is not None and policy.identity() == {"name": None, "sha256": None,
                                                        "overridden": True}
    assert ci_modes.policy_from_inputs(_ctx(_github(), tmp_path)) is None


def test_stress_and_sweep_plans_name_their_jobs(tmp_path: Path) -> None:
    from neens_action.report.build.stress import build_stress_report, stress_document

    stress = stress_mode.plan_stress(_ctx(_github(
        mode="stress", failure_modes="fm_a\nfm_b", strategies="paraphrase", per_mode="3",
        agent_connection="conn"), tmp_path))
    assert stress.job == "stress" and JOBS["stress"].build is build_stress_report
    assert JOBS["stress"].to_json is stress_document and JOBS["stress"].reports_ci_result
    assert stress.settings.failure_modes == ["fm_a", "fm_b"] and stress.settings.per_mode == 3
    sweep = sweep_mode.plan_sweep(_ctx(_github(
        mode="sweep", sweep_mode="push", arms="a=c1, b=c2", dataset_version_id="dsv",
        k="2", budget_usd="5"), tmp_path))
    assert sweep.job == "sweep" and not JOBS["sweep"].reports_ci_result
    assert sweep.settings.push and sweep.settings.require_winner is False
    assert sweep.settings.body["passK"] == 2 and sweep.settings.body["budgetUsd"] == 5


def test_workers_input_reaches_run_and_sweep_and_is_refused_where_nothing_runs(
        tmp_path: Path) -> None:
    run = run_mode.plan_run(_ctx(_github(command="python agent.py", dataset="ds",
                                         workers="3"), tmp_path))
    assert run.settings.workers == 3
    sweep = sweep_mode.plan_sweep(_ctx(_github(
        mode="sweep", arms="a=m1", dataset="ds", command="python agent.py", workers="2"),
        tmp_path))
    assert sweep.settings.workers == 2
    assert _error_line(_github(mode="push", agent_connection="c", dataset="ds",
                               workers="2")).startswith("workers: does not apply to mode push")
    assert _error_line(_github(mode="sweep", sweep_mode="push", arms="a=c1", dataset="ds",
                               workers="2")).startswith("workers: does not apply to "
                                                        "sweep-mode push")
    assert _error_line(_github(command="python agent.py", dataset="ds", workers="2",
                               concurrency="3")) == ("workers: 2 runs 2 item(s) at a time: "
                                                     "leave out concurrency (got 3)")
