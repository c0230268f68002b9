"""``python -m neens_sandbox serve ...`` (same as ``neens sandbox serve ...``)."""

from __future__ import annotations

import sys

try:
    from neens_sandbox.cli import main
except ImportError as exc:  # the ``sandbox`` extra is missing: one line, exit 2
    missing = exc.name or "a dependency"
    print(f"neens: error: the sandbox cannot start: {missing} is not installed: "
          "pip install 'neens-action[sandbox]'", file=sys.stderr)
    sys.exit(2)

sys.exit(main())
