"""The image itself: built from the Dockerfile under the tag action.yml names, it runs the
CLI for a CLI word, the CI front door otherwise, and has the shape the platforms need."""

from __future__ import annotations

import json
import re

import pytest

from neens_action import __version__
from tests.e2e.lab import Lab, action_image, image_size
from tests.helpers import ROOT

pytestmark = pytest.mark.e2e


def run_image(lab: Lab, image: str, *args: str, env: dict[str, str] | None = None,
              entrypoint: str | None = None, timeout: float = 120):
    cmd = ["run", "--rm", "--network", "host"]
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
    assert "input command" in proc.stdout, proc.stdout
    assert "Traceback" not in proc.stdout
    # On GitHub a bad input is an ::error annotation naming it.
    proc = run_image(lab, image, env={"GITHUB_ACTIONS": "true", "INPUT_COMMAND": "true",
                                      "INPUT_CONCURRENCY": "lots"})
    assert proc.returncode == 2, proc.stdout
    assert re.search(r"^::error[^:]*::concurrency", proc.stdout, re.M), proc.stdout
    assert "Traceback" not in proc.stdout


def test_image_shape(lab, image):
    info = json.loads(lab.docker_cmd("image", "inspect", image).stdout)[0]["Config"]
    assert info["Entrypoint"] == ["python3", "/opt/neens/entrypoint.py"]
    assert not info.get("User"), "no USER: GitHub runs Docker actions as root"
    assert not info.get("Cmd"), info.get("Cmd")
    script = (
        "set -e; git --version; git config --system --get-all safe.directory; "
        "command -v neens; ! command -v gcc; ! command -v cc; "
        "python3 -c 'import opentelemetry.sdk.trace, opentelemetry.exporter.otlp.proto.http'; "
        "pip freeze --all --exclude pip --exclude neens-action"
    )
    proc = run_image(lab, image, "-c", script, entrypoint="sh")
    assert proc.returncode == 0, proc.stdout
    assert "\n*\n" in proc.stdout, proc.stdout  # safe.directory = *
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
