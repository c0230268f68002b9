"""Our CLI as users run it: installed from this checkout (not editable) with its bytecode.

The development venv (``.venv``) holds an editable install, and this machine sets
``PYTHONDONTWRITEBYTECODE=1``: every run of it compiles our modules again and goes through
setuptools' editable finder, a start-up cost no user pays (the image and ``pip install``
write bytecode, as the vendor CLI's venv has). The start-up figures (time to the first agent)
and the whole-command figures therefore run ``.venv-bench/bin/neens``: a venv with the pinned
dependencies (``constraints.txt``) and this checkout installed as a wheel, refreshed on every
call (``--no-deps``: seconds). ``--ours editable`` measures the development venv instead.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from bench.harness import ROOT

VENV = ROOT / ".venv-bench"


def _pip(python: Path, *args: str) -> None:
    proc = subprocess.run([str(python), "-m", "pip", "install", "-q", *args],
                          capture_output=True, text=True, timeout=900)
    if proc.returncode != 0:
        raise SystemExit(f"bench: pip install {' '.join(args)} failed in {VENV}:\n"
                         f"{proc.stderr[-2000:]}")


_TOP_LEVEL_SKIPPED = {"build", "dist", "tests", "bench", "examples", "docs"}


def _not_shipped(folder: str, names: list[str]) -> set[str]:
    """What the copy leaves out: hidden entries and caches anywhere, and the checkout's
    top-level folders that are not the package (``neens_action/report/build`` stays)."""
    top = Path(folder) == ROOT
    return {n for n in names if n.startswith(".") or n == "__pycache__"
            or n.endswith(".egg-info") or (top and n in _TOP_LEVEL_SKIPPED)}


def installed_cli() -> list[str]:
    """``[.venv-bench/bin/neens]``, holding this checkout's code as a wheel install."""
    python = VENV / "bin" / "python"
    fresh = not python.exists()
    if fresh:
        print(f"bench: creating {VENV.name} (our CLI installed as users install it)",
              file=sys.stderr)
        subprocess.run([sys.executable, "-m", "venv", str(VENV)], check=True, timeout=300)
    # Built from a copy: setuptools' build/ and egg-info stay out of the checkout.
    with tempfile.TemporaryDirectory(prefix="neens-bench-src-") as tmp:
        src = Path(tmp) / "src"
        shutil.copytree(ROOT, src, ignore=_not_shipped)
        if fresh:
            _pip(python, "-c", str(ROOT / "constraints.txt"), str(src))
        else:
            _pip(python, "--no-deps", "--force-reinstall", str(src))
    return [str(VENV / "bin" / "neens")]
