"""Unit-test fixtures."""

from __future__ import annotations

import pytest

from tests.unit.api.client_support import Fake


@pytest.fixture
def fake():
    """The scripted HTTP server of the client tests (tests/unit/api/client_support.py)."""
    f = Fake()
    yield f
    f.close()
