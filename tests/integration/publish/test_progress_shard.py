"""A sharded run has one MR note, shared by its create and finish jobs: create says the run is
going once it exists, the shard legs write nothing, finish says it is scoring and then edits
the same note into the verdict. ``entrypoint.py`` as real processes (a GitLab ``parallel``
pipeline), the real sandbox and agents, the fake GitLab API."""

from __future__ import annotations

import re
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.fakes.gitlab_server import FakeGitLab
from tests.helpers import PY, ROOT, Sandbox, start_sandbox
from tests.integration.scale_support import KEY, recorded_agent, write_seed

GL_TOKEN = "glpat-progress-shard-token-3"
ITEMS = 4
JOB_URL = "https://gitlab.example/g/p/-/jobs/"


@pytest.fixture
def sb(tmp_path: Path) -> Iterator[Sandbox]:
    sandbox = start_sandbox(tmp_path, seed=write_seed(tmp_path / "seed.yaml", ITEMS),
                            api_key=KEY)
    yield sandbox
    sandbox.stop()


@pytest.fixture
def gl() -> Iterator[FakeGitLab]:
    server = FakeGitLab(token=GL_TOKEN).start()
    yield server
    server.stop()


def job(sb: Sandbox, gl: FakeGitLab, ws: Path, name: str, number: int,
        inputs: dict[str, str], **env: str) -> subprocess.CompletedProcess[str]:
    ws.mkdir(exist_ok=True)
    full = sb.agent_env(GITLAB_CI="true", CI="true", CI_PROJECT_DIR=str(ws), CI_JOB_NAME=name,
                        CI_COMMIT_SHA="e" * 40, CI_API_V4_URL=gl.api_url, CI_PROJECT_ID="42",
                        CI_MERGE_REQUEST_IID="5", CI_JOB_URL=f"{JOB_URL}{number}",
                        NEENS_GITLAB_TOKEN=GL_TOKEN, **env)
    for var in ("NEENS_BASE_URL", "OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_HEADERS"):
        full.pop(var, None)
    full["NEENS_INPUT_BASE_URL"] = sb.url
    full.update({f"NEENS_INPUT_{k.upper().replace('-', '_')}": v for k, v in inputs.items()})
    proc = subprocess.run([PY, str(ROOT / "entrypoint.py")], env=full, cwd=ws,
                          capture_output=True, text=True, timeout=300)
    assert "Traceback" not in proc.stderr, proc.stderr[-3000:]
    return proc


def writes(gl: FakeGitLab) -> list[tuple[str, str]]:
    return [(r.method, r.body["body"]) for r in gl.requests
            if r.method in ("POST", "PUT") and "/notes" in r.path]


def test_create_and_finish_share_one_note_and_the_shards_write_none(
        sb: Sandbox, gl: FakeGitLab, tmp_path: Path) -> None:
    create = job(sb, gl, tmp_path / "create", "neens-create", 1,
                 {"mode": "create", "dataset": "ds_scale", "version-label": "shard-progress"})
    assert create.returncode == 0, create.stderr[-3000:]
    env = dict(line.split("=", 1)
               for line in (tmp_path / "create" / "neens.env").read_text().splitlines())
    run_id = env["NEENS_RUN_ID"]
    [(method, running)] = writes(gl)
    assert method == "POST"
    assert re.search(rf"⏳ \*\*Neens eval running\*\*: {ITEMS} items of run `{run_id}`, "
                     r"replayed by the shard jobs, then scored and gated by the finish job…, "
                     r"started .* UTC for commit `eeeeeeeeeeee` · \[follow it in the CI job\]"
                     rf"\({JOB_URL}1\)", running), running
    assert "mode=sharded" in running.splitlines()[0]

    command = " ".join(recorded_agent())
    for i in (1, 2):
        leg = job(sb, gl, tmp_path / f"s{i}", "neens-shard", 1 + i, {"mode": "shard",
                  "command": command}, CI_NODE_INDEX=str(i), CI_NODE_TOTAL="2",
                  NEENS_RUN_ID=run_id, RECORD_FILE=str(tmp_path / f"rec-{i}"))
        assert leg.returncode == 0, leg.stderr[-3000:]
    assert len(writes(gl)) == 1  # the legs left the note alone

    finish = job(sb, gl, tmp_path / "finish", "neens-finish", 4,
                 {"mode": "finish", "poll-interval": "0.5"}, NEENS_RUN_ID=run_id)
    assert finish.returncode == 0, finish.stderr[-3000:]
    methods = [m for m, _ in writes(gl)]
    assert methods == ["POST", "PUT", "PUT"]  # create; finish: scoring, then the verdict
    scoring = writes(gl)[1][1]
    assert (f"⏳ **Neens eval finishing**: scoring and gating run `{run_id}`, replayed by the "
            "shard jobs…") in scoring and f"{JOB_URL}4" in scoring
    notes = gl.mr_notes("5")
    assert len(notes) == 1
    final = notes[0]["body"]
    assert "⏳" not in final and "Passed" in final
    assert final.splitlines()[0] == running.splitlines()[0]  # one marker for the whole run
