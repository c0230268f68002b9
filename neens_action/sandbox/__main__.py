"""``python -m neens_action.sandbox serve ...`` (same as ``neens sandbox serve ...``)."""

from __future__ import annotations

import sys

from neens_action.cli import run

sys.exit(run(["sandbox", *sys.argv[1:]]))
