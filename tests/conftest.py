from __future__ import annotations

import pytest

from tests.helpers import Sandbox, start_sandbox


@pytest.fixture
def sandbox(tmp_path) -> Sandbox:
    """A fresh sandbox (own SQLite file) on a random loopback port, seeded from examples/."""
    sb = start_sandbox(tmp_path)
    yield sb
    sb.stop()
