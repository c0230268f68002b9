"""The serve command as a process: its one stdout line, signals, restart, bad input."""

from __future__ import annotations

import signal
import subprocess

from tests.helpers import PY, ROOT, SEED, TEST_KEY, start_sandbox
from tests.sandbox.integration.support import create, eval_run, write_seed

DS = {"dataset_id": "ds_refunds"}


def test_restart_keeps_every_run_and_branch_baselines(tmp_path):
    sb = start_sandbox(tmp_path)
    try:
        done = eval_run(sb, {**DS, "branch": "main"})
        pending = create(sb, {**DS, "version_label": "v2"})
    finally:
        sb.stop()
    assert sb.proc.returncode == 0
    again = start_sandbox(tmp_path, db=sb.db)  # re-seeds the same file: idempotent
    try:
        view = again.get(f"/preprod-evals/{done['id']}").json()
        assert view["status"] == "completed" and view["aggregate"]["passed"] == 6
        assert view["items"][0]["output"] == done["items"][0]["output"]
        assert again.get(f"/preprod-evals/{pending['id']}").json()["status"] == (
            "awaiting_traces")
        cand = create(again, {**DS, "version_label": "v3",
                              "baseline": {"kind": "branch", "value": "main"}})
        assert cand["baseline"]["runId"] == done["id"]
        gates = again.get("/flywheel/gates/ci").json()["gates"]
        assert [g["gateId"] for g in gates] == ["gate-refund"]  # not duplicated by re-seeding
    finally:
        again.stop()


def test_one_stdout_line_key_never_whole_and_sigint_exits_0(tmp_path):
    proc = subprocess.Popen(
        [PY, "-m", "neens_sandbox", "serve", "--port", "0", "--db",
         str(tmp_path / "s.db"), "--seed", str(SEED), "--api-key", TEST_KEY],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT)
    assert proc.stdout is not None
    line = proc.stdout.readline()
    assert line.startswith("sandbox listening on http://127.0.0.1:")
    assert line.rstrip().endswith(f"(api key: {TEST_KEY[:8]}…)")
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 0
    assert out == "" and TEST_KEY not in err and TEST_KEY not in line
    assert "Traceback" not in err


def _serve(tmp_path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([PY, "-m", "neens_sandbox", "serve", *args],
                          capture_output=True, text=True, timeout=60, cwd=ROOT)


def test_bad_serve_input_is_one_line_and_exit_2(tmp_path):
    db = str(tmp_path / "s.db")
    broken = write_seed(tmp_path, "datasets:\n  - id: ds\n    judges: [j_missing]\n")
    cases = [
        (["--port", "0", "--db", db, "--seed", str(tmp_path / "none.yaml")], "cannot read"),
        (["--port", "0", "--db", db, "--seed", str(broken)], "unknown judge"),
        (["--port", "0", "--db", db, "--seed", str(SEED), "--chaos", "2"], "--chaos"),
        (["--port", "0", "--db", db, "--seed", str(SEED), "--chaos-kinds", "boom"],
         "--chaos-kinds"),
        (["--port", "0", "--db", str(tmp_path / "no" / "dir.db"), "--seed", str(SEED)],
         "does not exist"),
    ]
    for args, needle in cases:
        proc = _serve(tmp_path, *args)
        assert proc.returncode == 2, (args, proc.stderr)
        assert proc.stdout == ""
        lines = proc.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("neens: error:"), proc.stderr
        assert needle in lines[0]
    nokey = write_seed(tmp_path, "judges: []\n")
    proc = _serve(tmp_path, "--port", "0", "--db", db, "--seed", str(nokey))
    assert proc.returncode == 2 and "no API key" in proc.stderr


def test_port_in_use_is_a_clean_error(tmp_path):
    sb = start_sandbox(tmp_path)
    try:
        port = sb.url.rsplit(":", 1)[1]
        proc = _serve(tmp_path, "--port", port, "--db", str(tmp_path / "o.db"),
                      "--seed", str(SEED), "--api-key", TEST_KEY)
        assert proc.returncode == 2 and "cannot listen" in proc.stderr
        assert len(proc.stderr.strip().splitlines()) == 1
    finally:
        sb.stop()


def test_neens_sandbox_serve_is_wired_into_the_main_cli():
    proc = subprocess.run([PY, "-m", "neens_action", "sandbox", "serve", "--help"],
                          capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert proc.returncode == 0 and "--score-delay" in proc.stdout and "--chaos" in proc.stdout


def _without(tmp_path, package: str, body: str) -> dict[str, str]:
    """An environment where ``package`` resolves to a stand-in (first on the path) whose
    ``__init__`` is ``body``: the sandbox or its dependency as if not installed."""
    stand_in = tmp_path / "shadow" / package
    stand_in.mkdir(parents=True)
    (stand_in / "__init__.py").write_text(body)
    return {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(stand_in.parent)}


def test_neens_sandbox_without_the_sandbox_is_one_line_and_exit_2(tmp_path):
    message = ("neens: error: the sandbox is not installed here: "
               "pip install 'neens-action[sandbox]'")
    cases = [
        ("neens_sandbox", "raise ImportError('not installed')\n"),  # the package itself
        ("opentelemetry", ""),  # its dependency: no opentelemetry.proto behind it
    ]
    for package, body in cases:
        env = _without(tmp_path / package, package, body)
        # The cwd is not the checkout, so the stand-in is what `import neens_sandbox` finds.
        for args in (["sandbox", "serve", "--help"], ["sandbox"],
                     ["sandbox", "serve", "--db", "x.db", "--seed", str(SEED)]):
            proc = subprocess.run([PY, "-m", "neens_action", *args], capture_output=True,
                                  text=True, timeout=60, cwd=tmp_path, env=env)
            assert proc.returncode == 2, (package, args, proc.stderr)
            assert proc.stderr.strip() == message, (package, args, proc.stderr)
            assert proc.stdout == ""
        # The rest of the CLI still works and lists the command with the same advice.
        proc = subprocess.run([PY, "-m", "neens_action", "--help"], capture_output=True,
                              text=True, timeout=60, cwd=tmp_path, env=env)
        assert proc.returncode == 0, proc.stderr
        assert "pip install 'neens-action[sandbox]'" in proc.stdout
    # `python -m neens_sandbox` without its dependency says what is missing, in one line.
    env = _without(tmp_path / "direct", "opentelemetry", "")
    proc = subprocess.run([PY, "-m", "neens_sandbox", "serve", "--help"], capture_output=True,
                          text=True, timeout=60, cwd=tmp_path, env=env)
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "opentelemetry.proto is not installed" in lines[0], proc.stderr
    assert "pip install 'neens-action[sandbox]'" in lines[0]


def test_a_bug_inside_an_installed_sandbox_is_not_reported_as_not_installed(tmp_path):
    # An ImportError that names a module of the sandbox other than the package itself is a bug
    # (a broken import inside it): it must surface, not read as "pip install ...".
    env = _without(tmp_path, "neens_sandbox", "from neens_sandbox.nowhere_to_be_found import x\n")
    proc = subprocess.run([PY, "-m", "neens_action", "sandbox", "serve", "--help"],
                          capture_output=True, text=True, timeout=60, cwd=tmp_path, env=env)
    assert proc.returncode != 0
    assert "not installed here" not in proc.stderr
    assert "nowhere_to_be_found" in proc.stderr
