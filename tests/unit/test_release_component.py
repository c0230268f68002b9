"""The release pins the GitLab component's image by digest like action.yml, and the image's
pip install checks every wheel's sha256 (requirements-image.txt, --require-hashes)."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import yaml

from neens_action import __version__
from tests.helpers import ROOT

SCRIPT = ROOT / "scripts" / "pin-action-image"
IMAGE = f"ghcr.io/neens/eval-action:{__version__}"
DIGEST = "sha256:" + "0123456789abcdef" * 4
PIN = re.compile(r"^(?P<name>[a-z0-9._-]+)==(?P<version>\S+)"
                 r"(?P<hashes>( --hash=sha256:[0-9a-f]{64})+)$")


def test_the_pinned_component_names_the_image_by_digest(tmp_path: Path) -> None:
    target = tmp_path / "gitlab-ci.yml"
    shutil.copy2(ROOT / "templates" / "gitlab-ci.yml", target)
    proc = subprocess.run([sys.executable, str(SCRIPT), f"{IMAGE}@{DIGEST}", str(target)],
                          capture_output=True, text=True, timeout=30)
    assert proc.returncode == 0, proc.stderr
    spec = next(yaml.safe_load_all(target.read_text()))
    assert spec["spec"]["inputs"]["image"]["default"] == f"{IMAGE}@{DIGEST}"
    before = (ROOT / "templates" / "gitlab-ci.yml").read_text().splitlines()
    after = target.read_text().splitlines()
    assert [i for i, (a, b) in enumerate(zip(before, after, strict=True)) if a != b] == [
        before.index(f"      default: {IMAGE}")]  # one line changed
    # on the main branch the component names the tag, like action.yml
    spec = next(yaml.safe_load_all((ROOT / "templates" / "gitlab-ci.yml").read_text()))
    assert spec["spec"]["inputs"]["image"]["default"] == IMAGE


def test_the_release_pins_the_component_with_the_same_digest() -> None:
    workflow = yaml.safe_load((ROOT / ".github" / "workflows" / "release.yml").read_text())
    runs = [step.get("run", "") for step in workflow["jobs"]["publish"]["steps"]]
    run = next(r for r in runs if "scripts/pin-action-image" in r)
    assert 'scripts/pin-action-image "$IMAGE:$VERSION@$digest" templates/gitlab-ci.yml' in run
    assert "action.yml templates/gitlab-ci.yml" in run  # both in the release commit
    check = next(r for r in (step.get("run", "") for step in workflow["jobs"]["version"]["steps"])
                 if "pyproject.toml" in r)
    assert "templates/gitlab-ci.yml" in check


def test_the_image_installs_hashed_wheels_of_exactly_the_constraints() -> None:
    pins = {}
    for line in (ROOT / "constraints.txt").read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            name, version = line.split("==")
            pins[name] = version
    hashed = {}
    for line in (ROOT / "requirements-image.txt").read_text().splitlines():
        if line.startswith("#"):
            continue
        m = PIN.match(line)
        assert m, line
        hashed[m["name"]] = m["version"]
    build = {"setuptools", "wheel"}  # the build backend, installed without build isolation
    assert {k: v for k, v in hashed.items() if k not in build} == pins
    assert build <= set(hashed)
    dockerfile = (ROOT / "Dockerfile").read_text()
    assert "--require-hashes" in dockerfile and "-r /opt/neens/requirements-image.txt" in dockerfile
    assert "--no-deps --no-build-isolation --no-index" in dockerfile  # nothing fetched unhashed
    assert "!requirements-image.txt" in (ROOT / ".dockerignore").read_text().splitlines()
