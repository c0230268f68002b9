"""The front door is non-dumpable on Linux (issue 17): /proc/<pid>/environ is root's."""

from __future__ import annotations

import subprocess
import sys


def test_make_undumpable_clears_the_flag_in_a_fresh_process() -> None:
    code = ("from neens_action.ci.harden import dumpable, make_undumpable\n"
            "before = dumpable(); ok = make_undumpable()\n"
            "print(before, ok, dumpable())")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.split()
    assert out == ["True", "True", "False"]
