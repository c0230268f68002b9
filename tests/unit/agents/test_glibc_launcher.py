"""glibc_launcher: found where glibc has what it needs; the environment memo is bounded."""

from __future__ import annotations

import os
import re
from pathlib import Path

from neens_action.agents import glibc_launcher


def test_glibc_launcher_is_used_where_glibc_has_what_it_needs():
    version = os.confstr("CS_GNU_LIBC_VERSION") or ""
    major, minor = (int(x) for x in version.split()[1].split(".")[:2])
    assert version.startswith("glibc ") and (major, minor) >= (2, 34)  # CI and the image
    assert glibc_launcher.load() is not None


def test_environment_entries_are_remembered_up_to_a_bound(monkeypatch):
    glibc = glibc_launcher.load()
    assert glibc is not None
    monkeypatch.setattr(glibc, "memo", {})
    monkeypatch.setattr(glibc_launcher, "_MEMO", 3)
    env = {"A": "1", "B": "2", "LONG": "x" * 600, "C": "3", "D": "4"}
    assert glibc._environ(env) == [b"A=1", b"B=2", b"LONG=" + b"x" * 600, b"C=3", b"D=4"]
    assert list(glibc.memo) == [("A", "1"), ("B", "2"), ("C", "3")]  # not the long one
    assert glibc._environ(env) == glibc._environ(dict(env))


def test_ctypes_is_imported_only_by_the_glibc_launcher_and_the_prctl_hardening():
    package = Path(glibc_launcher.__file__).parents[1]
    importers = sorted(str(path.relative_to(package)) for path in package.rglob("*.py")
                       if re.search(r"^\s*(import|from) ctypes\b", path.read_text("utf-8"),
                                    re.MULTILINE))
    assert importers == ["agents/glibc_launcher.py", "ci/harden.py"]
