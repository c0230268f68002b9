"""``--api-key`` on the command line inside CI is one warning line (``ps`` shows argv to every
process of the machine), and the key is redacted from what the CLI prints."""

from __future__ import annotations

import pytest

from neens_action import redact
from neens_action.cli import main

KEY = "nk_live_argv_key_0123456789"


@pytest.fixture(autouse=True)
def _forget():
    redact.clear()
    yield
    redact.clear()


@pytest.mark.parametrize("args", [["--api-key", KEY], [f"--api-key={KEY}"]])
def test_a_key_on_argv_in_ci_is_one_warning(args, monkeypatch, capsys) -> None:
    monkeypatch.setenv("CI", "true")
    monkeypatch.delenv("GITHUB_ACTIONS", raising=False)
    assert main.run(["eval", "run", *args, "--help"]) == 0
    err = capsys.readouterr().err
    warnings = [line for line in err.splitlines() if "--api-key" in line]
    assert len(warnings) == 1 and "NEENS_API_KEY" in warnings[0]
    assert KEY not in err
    assert redact.redact(KEY) == redact.MASK


def test_no_warning_outside_ci_or_without_the_flag(monkeypatch, capsys) -> None:
    for name in ("CI", "GITHUB_ACTIONS", "GITLAB_CI"):
        monkeypatch.delenv(name, raising=False)
    assert main.run(["eval", "run", "--api-key", KEY, "--help"]) == 0
    monkeypatch.setenv("CI", "true")
    assert main.run(["eval", "run", "--help"]) == 0
    assert "visible to every process" not in capsys.readouterr().err
