"""Fixtures of the agent tests."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

FD_SETSIZE = 1024  # select.select cannot watch a descriptor at or above this


@pytest.fixture
def high_fds() -> Iterator[int]:
    """Hold descriptors up to past FD_SETSIZE, so every fd opened meanwhile (pipes, pidfds)
    is numbered >= 1024; yields the first free number. The soft RLIMIT_NOFILE is raised
    for the test if it is too low (and restored). POSIX only: ``resource`` is imported here,
    so the rest of this directory collects on Windows (the project workflow runs it there)."""
    import resource

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = FD_SETSIZE + 256
    if soft != resource.RLIM_INFINITY and soft < wanted:
        assert hard == resource.RLIM_INFINITY or hard >= wanted, "RLIMIT_NOFILE hard limit"
        resource.setrlimit(resource.RLIMIT_NOFILE, (wanted, hard))
    held: list[int] = []
    try:
        base = os.open(os.devnull, os.O_RDONLY)
        held.append(base)
        while held[-1] < FD_SETSIZE + 8:
            held.append(os.dup(base))
        probe = os.dup(base)
        os.close(probe)
        assert probe > FD_SETSIZE
        yield probe
    finally:
        for fd in held:
            os.close(fd)
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
