"""The release workflow builds, smoke-tests and publishes both architectures (linux/amd64,
linux/arm64) with SBOM and provenance attestations, joined into one multi-arch index.
(actionlint and zizmor run over it in test_lint_workflows.py.)"""

from __future__ import annotations

import pytest
import yaml

from tests.helpers import ROOT

pytestmark = pytest.mark.e2e

WORKFLOW = yaml.safe_load((ROOT / ".github" / "workflows" / "release.yml").read_text())
JOBS = WORKFLOW["jobs"]
ARCHES = {"linux/amd64": "amd64", "linux/arm64": "arm64"}


def _runs(job: dict) -> str:
    return "\n".join(step.get("run", "") for step in job["steps"])


def test_a_tag_releases():
    assert WORKFLOW[True]["push"]["tags"] == ["v*"]  # `on:` reads as True in YAML 1.1


def test_each_architecture_is_built_natively_and_smoke_tested():
    legs = JOBS["image"]["strategy"]["matrix"]["include"]
    assert {leg["platform"]: leg["arch"] for leg in legs} == ARCHES
    # each leg on a hosted runner of its own architecture: no emulation
    assert JOBS["image"]["runs-on"] == (
        "${{ matrix.arch == 'arm64' && 'ubuntu-24.04-arm' || 'ubuntu-24.04' }}")
    steps = [s["name"] for s in JOBS["image"]["steps"] if "name" in s]
    assert steps.index("Smoke test") < steps.index("Push with SBOM and provenance")
    runs = _runs(JOBS["image"])
    assert 'neens --version)" = "neens $VERSION"' in runs
    assert '-m)" = "$(uname -m)"' in runs  # the image really is this leg's architecture


def test_push_carries_sbom_and_provenance():
    push = next(s for s in JOBS["image"]["steps"]
                if s.get("name") == "Push with SBOM and provenance")["run"]
    assert "--sbom=true" in push and "--provenance=mode=max" in push
    assert '--platform "$PLATFORM"' in push and "--push" in push
    assert "docker-container" in _runs(JOBS["image"])  # attestations need a BuildKit builder


def test_one_index_joins_both_architectures():
    publish = JOBS["publish"]
    assert set(publish["needs"]) == {"version", "image"}
    runs = _runs(publish)
    assert 'imagetools create "${tags[@]}"' in runs
    for arch in ARCHES.values():
        assert f'"$IMAGE:$VERSION-{arch}"' in runs
    for platform in ARCHES:
        assert platform in runs  # the index is checked for both


def test_least_privilege():
    assert WORKFLOW["permissions"] == {}
    assert JOBS["version"]["permissions"] == {"contents": "read"}
    assert JOBS["image"]["permissions"] == {"contents": "read", "packages": "write"}
    # contents: write only to move the version tag to the commit pinning the image's digest
    assert JOBS["publish"]["permissions"] == {"contents": "write", "packages": "write"}
