"""EvalRunSettings: flags + env, validation with one-line messages, secrets hidden."""

from __future__ import annotations

import pytest

from neens_action.errors import UsageError
from neens_action.settings.provenance import clean_repo
from neens_action.settings.run import EvalRunSettings, parse_baseline, parse_gates

KEY = "nk_live_settings_secret"
BASE = {"base_url": "http://127.0.0.1:8787", "command": ["python", "agent.py"]}


def make(env: dict | None = None, **flags) -> EvalRunSettings:
    return EvalRunSettings.from_flags({**BASE, **flags}, env or {})


def test_env_defaults_and_flags_win():
    env = {"NEENS_BASE_URL": "https://env.example.com/", "NEENS_API_KEY": KEY,
           "NEENS_PROJECT_ID": "p1", "NEENS_GATES": "active", "NEENS_REPO": "o/r",
           "NEENS_GATE_POLICY": "gate.json"}
    s = EvalRunSettings.from_flags({"command": ["a"], "base_url": None}, env).validate()
    assert s.base_url == "https://env.example.com"
    assert s.api_key == KEY and s.project_id == "p1" and s.repo == "o/r"
    assert s.gates_wire == "active" and s.gate_policy == "gate.json" and s.creates_run
    s2 = EvalRunSettings.from_flags({"command": ["a"], "base_url": "http://flag:1",
                                     "api_key": "nk_live_flag", "gates": "g1"}, env).validate()
    assert s2.base_url == "http://flag:1" and s2.api_key == "nk_live_flag"
    assert s2.gates_wire == ["g1"]


def test_secret_not_in_repr():
    s = make(api_key=KEY, run_id="r").validate()
    assert KEY not in repr(s) and KEY not in str(s)


@pytest.mark.parametrize("flags, needle", [
    ({"base_url": None}, "no Neens base URL"),
    ({"base_url": "neens.example.com"}, "http(s) URL"),
    ({"base_url": "https://u:p@neens.example.com"}, "credentials"),
    ({"run_id": "r", "command": []}, "no agent command"),
    ({}, "nothing to run"),
    ({"run_id": "r", "create": True}, "cannot be combined with --create"),
    ({"run_id": "r", "gates": "active"}, "cannot be combined with --gates"),
    ({"create": True}, "--create needs --dataset and --version-label"),
    ({"create": True, "dataset": "ds"}, "--create needs --version-label"),
    ({"run_id": "r", "baseline": "main"}, "is not a baseline"),
    ({"run_id": "r", "baseline": "branch:"}, "needs a branch name"),
    ({"run_id": "r", "min_pass_rate": 1.5}, "--min-pass-rate must be at most 1"),
    ({"run_id": "r", "min_pass_rate": float("nan")}, "--min-pass-rate must be a number"),
    ({"run_id": "r", "max_regressions": -1}, "--max-regressions must be 0 or more"),
    ({"run_id": "r", "concurrency": 0}, "--concurrency must be 1 or more"),
    ({"run_id": "r", "timeout": -5.0}, "--timeout must be greater than 0"),
    ({"run_id": "r", "poll_interval": 0.0}, "--poll-interval must be greater than 0"),
    ({"run_id": "r", "poll_timeout": -1.0}, "--poll-timeout must be greater than 0"),
    ({"run_id": "r", "git_sha": "xyz"}, "--git-sha must be 7-64 hex"),
    ({"run_id": "r", "pr_number": 0}, "--pr-number must be a positive integer"),
    ({"run_id": "r", "repo": "bad\x01repo"}, "--repo / NEENS_REPO"),
    ({"gates": ","}, "names no gate"),
    ({"gates": "active,g1"}, "not both"),
])
def test_validation_messages(flags, needle):
    with pytest.raises(UsageError) as info:
        make(**flags).validate()
    assert needle in str(info.value)
    assert "\n" not in str(info.value)


def test_declared_gates_block():
    with pytest.raises(UsageError, match="policy 'gates' block"):
        make(run_id="r").validate(declared_gates=True)
    with pytest.raises(UsageError, match="use one of them"):
        make(gates="active").validate(declared_gates=True)
    s = make(version_label="v").validate(declared_gates=True)
    assert s.creates_run


def test_gates_only_needs_no_dataset():
    s = make(gates="active").validate()
    assert s.creates_run and s.dataset is None


def test_overrides_only_given_keys():
    s = make(run_id="r", min_avg_score=0.8, max_abs_failures=2).validate()
    assert s.overrides == {"min_avg_score": 0.8, "max_abs_failures": 2}


def test_parse_baseline():
    assert parse_baseline(None) is None and parse_baseline("  ") is None
    assert parse_baseline("run:ppr_9") == {"kind": "preprod_run", "value": "ppr_9"}
    assert parse_baseline("branch: main ") == {"kind": "branch", "value": "main"}
    assert parse_baseline("prod") == {"kind": "prod_window", "range": "7d"}
    assert parse_baseline("prod:30d") == {"kind": "prod_window", "range": "30d"}
    for bad in ("prod:", "run:", "yesterday"):
        with pytest.raises(UsageError):
            parse_baseline(bad)


def test_parse_gates():
    assert parse_gates(None) is None and parse_gates("  ") is None
    assert parse_gates("ACTIVE") == "active"
    assert parse_gates(" g1, g2 ,,g1") == ["g1", "g2"]
    with pytest.raises(UsageError):
        parse_gates("g 1")


def test_clean_repo():
    assert clean_repo("https://user:tok@github.com/o/r.git/") == "github.com/o/r"
    assert clean_repo(" o/r ") == "o/r"
    assert clean_repo("") is None
    assert clean_repo("x" * 256) is None


def test_workers_setting():
    assert make(run_id="r", command=["a"], workers=4).validate().workers == 4
    assert make(run_id="r", command=["a"], workers=4, concurrency=4).validate().workers == 4
    for flags, needle in (({"workers": 0}, "--workers must be 1 or more, got 0"),
                          ({"workers": 2, "concurrency": 3},
                           "--workers 2 runs 2 item(s) at a time: leave out --concurrency")):
        with pytest.raises(UsageError, match=needle.replace("(", r"\(").replace(")", r"\)")):
            make(run_id="r", command=["a"], **flags).validate()


def test_ui_url_flag_or_variable_checked_before_any_request():
    env = {"NEENS_UI_URL": "https://env.example/runs/{run_id}"}
    assert make(env, run_id="r").validate().ui_url == "https://env.example/runs/{run_id}"
    flag = "https://flag.example/runs/{run_id}?item={item_id}"
    assert make(env, run_id="r", ui_url=flag).validate().ui_url == flag
    with pytest.raises(UsageError, match=r"--ui-url must contain \{run_id\}"):
        make({"NEENS_UI_URL": "https://app.example/runs"}, run_id="r").validate()
