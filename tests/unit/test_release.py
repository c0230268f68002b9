"""The release pins the image: scripts/pin-action-image writes the pushed digest into
action.yml, the release workflow runs it and moves the version tag to that commit; the image
sets no ``safe.directory``."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from neens_action import __version__
from tests.helpers import ROOT

SCRIPT = ROOT / "scripts" / "pin-action-image"
IMAGE = f"ghcr.io/neens/eval-action:{__version__}"
DIGEST = "sha256:" + "0123456789abcdef" * 4


def pin(tmp_path: Path, *args: str) -> tuple[subprocess.CompletedProcess[str], Path]:
    action = tmp_path / "action.yml"
    if not action.exists():
        shutil.copy2(ROOT / "action.yml", action)
    proc = subprocess.run([sys.executable, str(SCRIPT), *args, str(action)], capture_output=True,
                          text=True, timeout=30)
    return proc, action


def test_the_pinned_action_names_the_image_by_digest(tmp_path: Path):
    proc, action = pin(tmp_path, f"{IMAGE}@{DIGEST}")
    assert proc.returncode == 0, proc.stderr
    image = yaml.safe_load(action.read_text())["runs"]["image"]
    assert image == f"docker://{IMAGE}@{DIGEST}"
    assert re.fullmatch(r"docker://[^@\s]+@sha256:[0-9a-f]{64}", image)
    # Only that line changed; the rest of the file is byte for byte the same.
    before = (ROOT / "action.yml").read_text().splitlines(keepends=True)
    after = action.read_text().splitlines(keepends=True)
    changed = [(a, b) for a, b in zip(before, after, strict=True) if a != b]
    assert changed == [(f"  image: docker://{IMAGE}\n", f"  image: docker://{IMAGE}@{DIGEST}\n")]
    assert (action.stat().st_mode & 0o777) == ((ROOT / "action.yml").stat().st_mode & 0o777)
    # A later release re-pins the same line.
    other = "sha256:" + "f" * 64
    proc, action = pin(tmp_path, f"{IMAGE}@{other}")
    assert proc.returncode == 0, proc.stderr
    assert yaml.safe_load(action.read_text())["runs"]["image"] == f"docker://{IMAGE}@{other}"


@pytest.mark.parametrize("reference", [
    f"{IMAGE}@sha256:abc",  # short digest
    f"{IMAGE}@sha512:" + "0" * 128,  # not sha256
    f"{IMAGE}",  # no digest at all
    f"{IMAGE}@{DIGEST}\n  env: {{}}",  # a line injected into action.yml
    f"ghcr.io/evil/eval-action:{__version__}@{DIGEST}",  # another image
    f"ghcr.io/neens/eval-action:9.9.9@{DIGEST}",  # another version
])
def test_bad_references_leave_the_file_alone(tmp_path: Path, reference: str):
    proc, action = pin(tmp_path, reference)
    assert proc.returncode == 2
    assert proc.stderr.count("\n") == 1 and proc.stderr.startswith("pin-action-image: error: ")
    assert "Traceback" not in proc.stderr
    assert action.read_text() == (ROOT / "action.yml").read_text()


def test_the_main_branch_names_the_version_tag_the_release_checks():
    image = yaml.safe_load((ROOT / "action.yml").read_text())["runs"]["image"]
    assert image == f"docker://{IMAGE}"


def test_the_release_pins_the_digest_it_pushed_and_moves_the_tag_there():
    workflow = yaml.safe_load((ROOT / ".github" / "workflows" / "release.yml").read_text())
    job = workflow["jobs"]["publish"]  # joins the architectures' images into one index
    assert job["permissions"]["contents"] == "write"
    steps = [step.get("run", "") for step in job["steps"]]
    push = next(i for i, run in enumerate(steps) if "imagetools create" in run)
    pins = [i for i, run in enumerate(steps) if "scripts/pin-action-image" in run]
    assert len(pins) == 1 and pins[0] > push, "pin after the push, from the pushed digest"
    assert any("uses" in step and "checkout" in step["uses"] for step in job["steps"])
    run = steps[pins[0]]
    assert 'imagetools inspect "$IMAGE:$VERSION"' in run
    assert 'scripts/pin-action-image "$IMAGE:$VERSION@$digest"' in run
    assert "commit" in run and 'git tag -f "$TAG"' in run
    assert 'push --force origin "refs/tags/$TAG"' in run
    assert SCRIPT.stat().st_mode & 0o111, "the script is executable"


def test_nothing_sets_safe_directory():
    for name in ("Dockerfile", "entrypoint.py"):
        text = (ROOT / name).read_text()
        assert "safe.directory" not in text, name
        assert not re.search(r"git\s+config", text), name
