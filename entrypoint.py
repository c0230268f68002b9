#!/usr/bin/env python3
"""Container entry point (GitHub Docker action, GitLab component, ``docker run``).

No arguments: the CI front door reads the action/component inputs from the environment
(``neens_action.ci.main``). Arguments: they are a ``neens`` command line, e.g.
``docker run IMAGE eval run --run-id ppr_1 -- python -m my_agent`` (Jenkins and friends).
"""

from __future__ import annotations

import sys


def main() -> None:
    if len(sys.argv) > 1:
        args = sys.argv[1:]
        if args[0] == "neens":  # `docker run IMAGE neens eval run ...` reads naturally too
            args = args[1:]
        from neens_action.cli.main import main as cli_main

        cli_main(args)
    else:
        from neens_action.ci.main import main as ci_main

        ci_main()


if __name__ == "__main__":
    main()
