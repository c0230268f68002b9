"""Bad server answers after the agents ran (start, poll, gate): still exit 2 with exactly one
``neens: error:`` line and no traceback or warning; every other stderr line is one of the
flow's own progress lines (checked line by line, none ignored)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers import run_cli
from tests.integration.broken_neens import RUN_ID, BrokenNeens, Raw, good_run
from tests.integration.test_bad_input import KEY, LOGIN_PAGE, base_env

ARGS = ["eval", "run", "--run-id", RUN_ID, "--version-label", "v1", "--poll-interval", "0.2",
        "--", "true"]
PROGRESS = ("Running 1 item(s)", "item 1/1 [it_1] ok", "Command finished for 1/1",
            "Starting run (POST /start)", "Waiting for scoring", "  run status: ")
START = ("POST", f"/preprod-evals/{RUN_ID}/start")
POLL = ("GET", f"/preprod-evals/{RUN_ID}")
GATE = ("GET", f"/preprod-evals/{RUN_ID}/gate")

CASES = {
    "start-404-html": ({START: Raw(404, LOGIN_PAGE, content_type="text/html")}, [], "HTTP 404"),
    "start-400-json": ({START: Raw(400, {"detail": "run is a push run"})}, [], "push run"),
    "poll-json-list": ({POLL: Raw(200, [good_run()])}, [], "JSON object was expected"),
    "poll-html-200": ({POLL: Raw(200, LOGIN_PAGE, content_type="text/html")}, [], "non-JSON"),
    "poll-never-terminal": ({POLL: Raw(200, good_run("running"))}, ["--poll-timeout", "1"],
                            "did not finish within 1s"),
    "gate-html-200": ({GATE: Raw(200, LOGIN_PAGE, content_type="text/html")}, [], "non-JSON"),
    "gate-json-list": ({GATE: Raw(200, [{"passed": True}])}, [], "JSON object was expected"),
    "gate-truncated": ({GATE: Raw(200, '{"passed": tr')}, [], "non-JSON"),
    "gate-401": ({GATE: Raw(401, {"detail": "key revoked"})}, [], "key revoked"),
}


@pytest.mark.parametrize("name", list(CASES))
def test_late_breakage_is_one_error_line(name: str, tmp_path: Path):
    routes, extra, expect = CASES[name]
    with BrokenNeens(routes) as server:
        proc = run_cli([*ARGS[:-2], *extra, *ARGS[-2:]], base_env(server.url), timeout=120,
                       cwd=tmp_path)
    err = proc.stderr
    assert proc.returncode == 2, err
    assert "Traceback" not in err + proc.stdout and KEY not in err + proc.stdout
    errors = [line for line in err.splitlines() if line.startswith("neens: error: ")]
    assert len(errors) == 1, err
    assert expect in errors[0], errors[0]
    others = [line for line in err.splitlines() if line not in errors]
    assert all(line.startswith(PROGRESS) for line in others), others
