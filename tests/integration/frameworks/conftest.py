"""Fixtures of the framework quickstart tests: the quickstarts' venvs and node_modules (built
by scripts/frameworks only when missing or stale), the fake model in good and bad modes."""

from __future__ import annotations

import fcntl
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.fakes import llm_server
from tests.helpers import ROOT
from tests.integration.frameworks.support import VENVS


@pytest.fixture(scope="session")
def frameworks() -> None:
    """Every quickstart installed (all at once, in parallel: the first test pays for all).
    Under pytest-xdist every worker asks: a lock file makes the others wait for the first one's
    install (scripts/frameworks replaces a stale venv, so two at once would collide) and then
    find every venv up to date."""
    VENVS.mkdir(exist_ok=True)
    with (VENVS / ".lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        proc = subprocess.run([str(ROOT / "scripts" / "frameworks")], cwd=ROOT,
                              capture_output=True, text=True, timeout=1500)
    assert proc.returncode == 0, proc.stderr[-4000:]


@pytest.fixture(scope="module")
def llm_good(tmp_path_factory) -> Iterator[str]:
    llm = llm_server.start(Path(tmp_path_factory.mktemp("llm")), "--refund", "good")
    yield llm.url
    llm.stop()


@pytest.fixture(scope="module")
def llm_bad(tmp_path_factory) -> Iterator[str]:
    llm = llm_server.start(Path(tmp_path_factory.mktemp("llm")), "--refund", "bad")
    yield llm.url
    llm.stop()
