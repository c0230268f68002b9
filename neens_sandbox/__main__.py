"""``python -m neens_sandbox serve ...`` (same as ``neens sandbox serve ...``)."""

from __future__ import annotations

import sys

from neens_action.cli.main import run

sys.exit(run(["sandbox", *sys.argv[1:]]))
