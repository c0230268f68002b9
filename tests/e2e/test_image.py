"""The image itself: built from the Dockerfile under the tag action.yml names, it runs the
CLI for a CLI word, the CI front door otherwise, and has the shape the platforms need."""

from __future__ import annotations

import json
import re

import pytest

from neens_action import __version__
from tests.e2e.lab import Lab, action_image, image_size
from tests.helpers import EXAMPLES, ROOT, Sandbox

pytestmark = pytest.mark.e2e


def run_image(lab: Lab, image: str, *args: str, env: dict[str, str] | None = None,
              entrypoint: str | None = None, volumes: dict[str, str] | None = None,
              timeout: float = 120):
    cmd = ["run", "--rm", "--network", "host"]
    for host, inside in (volumes or {}).items():
        cmd += ["-v", f"{host}:{inside}:ro"]
    for name, value in (env or {}).items():
        cmd += ["-e", f"{name}={value}"]
    if entrypoint is not None:
        cmd += ["--entrypoint", entrypoint]
    return lab.docker_cmd(*cmd, image, *args, timeout=timeout)


def test_tag_matches_the_package_version():
    assert action_image() == f"ghcr.io/neens/eval-action:{__version__}"


def test_cli_words_run_the_cli(lab, image):
    for args in (["neens", "--version"], ["--version"]):
        proc = run_image(lab, image, *args)
        assert proc.returncode == 0, proc.stdout
        assert proc.stdout.strip() == f"neens {__version__}", proc.stdout
    proc = run_image(lab, image, "eval", "run", "--help")
    assert proc.returncode == 0 and "--junit" in proc.stdout, proc.stdout


def test_no_arguments_is_the_ci_front_door(lab, image):
    # No inputs at all: mode run needs a command; one clear line, exit 2, no traceback.
    proc = run_image(lab, image)
    assert proc.returncode == 2, proc.stdout
    assert "input api-key: is empty" in proc.stdout, proc.stdout  # the empty key is refused first
    assert "Traceback" not in proc.stdout
    # On GitHub a bad input is an ::error annotation naming it.
    proc = run_image(lab, image, env={"GITHUB_ACTIONS": "true", "INPUT_COMMAND": "true",
                                      "INPUT_CONCURRENCY": "lots"})
    assert proc.returncode == 2, proc.stdout
    assert re.search(r"^::error[^:]*::concurrency", proc.stdout, re.M), proc.stdout
    assert "Traceback" not in proc.stdout


def test_the_sandbox_is_not_in_the_image_and_eval_run_works(lab, image, e2e_sandbox: Sandbox):
    # The sandbox is its own package (neens_sandbox), never copied into the image.
    proc = run_image(lab, image, "-c", "import neens_sandbox", entrypoint="python3")
    assert proc.returncode != 0, proc.stdout
    assert "No module named 'neens_sandbox'" in proc.stdout, proc.stdout
    proc = run_image(lab, image, "-c",
                     "ls /opt/neens/venv/lib/python3*/site-packages | grep -i sandbox",
                     entrypoint="sh")
    assert proc.returncode == 1 and proc.stdout == "", proc.stdout
    # `neens sandbox` there says so in one line (exit 2), no traceback.
    proc = run_image(lab, image, "sandbox", "serve", "--help")
    assert proc.returncode == 2, proc.stdout
    assert proc.stdout.strip() == ("neens: error: the sandbox is not installed here: "
                                   "pip install 'neens-action[sandbox]'"), proc.stdout
    # While a real pre-prod eval runs in it: the example agent replays the dataset against the
    # sandbox on the host and the gate passes.
    env = {"NEENS_BASE_URL": e2e_sandbox.url, "NEENS_API_KEY": e2e_sandbox.api_key,
           "OTEL_EXPORTER_OTLP_ENDPOINT": e2e_sandbox.url,
           "OTEL_EXPORTER_OTLP_HEADERS": f"Authorization=Bearer {e2e_sandbox.api_key}",
           "AGENT_MODE": "good"}
    proc = run_image(lab, image, "eval", "run", "--create", "--dataset", "ds_refunds",
                     "--version-label", "image-no-sandbox", "--min-pass-rate", "0.9",
                     "--poll-interval", "1", "--", "python3", "/agent/agent.py",
                     env=env, volumes={str(EXAMPLES / "agent"): "/agent"}, timeout=300)
    assert proc.returncode == 0, proc.stdout[-4000:]
    assert "Traceback" not in proc.stdout
    assert e2e_sandbox.api_key not in proc.stdout


def test_image_shape(lab, image):
    info = json.loads(lab.docker_cmd("image", "inspect", image).stdout)[0]["Config"]
    assert info["Entrypoint"] == ["python3", "/opt/neens/entrypoint.py"]
    assert not info.get("User"), "no USER: GitHub runs Docker actions as root"
    assert not info.get("Cmd"), info.get("Cmd")
    script = (
        "set -e; git --version; ! git config --system --get-all safe.directory; "
        "! git config --global --get-all safe.directory; "
        "command -v neens; ! command -v gcc; ! command -v cc; "
        "python3 -c 'import opentelemetry.sdk.trace, opentelemetry.exporter.otlp.proto.http'; "
        "pip freeze --all --exclude pip --exclude neens-action"
    )
    proc = run_image(lab, image, "-c", script, entrypoint="sh")
    assert proc.returncode == 0, proc.stdout
    assert "safe.directory" not in proc.stdout and "\n*\n" not in proc.stdout, proc.stdout
    assert "/opt/neens/venv/bin/neens" in proc.stdout
    # Every installed distribution is exactly the pinned one (constraints.txt).
    frozen = {line.split("==")[0].lower().replace("_", "-"): line.split("==")[1]
              for line in proc.stdout.splitlines() if "==" in line}
    pins = {line.split("==")[0].lower().replace("_", "-"): line.split("==")[1]
            for line in (ROOT / "constraints.txt").read_text().splitlines()
            if line and not line.startswith("#")}
    assert frozen == pins


def test_size_added_over_the_base(lab, image):
    added = image_size(lab, image) - image_size(lab, lab.base_image)
    print(f"image size added over the base: {added / 1e6:.1f} MB")
    assert 0 < added < 120e6, f"{added / 1e6:.1f} MB"
