"""``python -m bench <name> [options]``: run one benchmark."""

from __future__ import annotations

import sys


def main(argv: list[str]) -> int:
    if not argv or argv[0] in ("-h", "--help"):
        print("usage: python -m bench pull [--items N] [--concurrency N] [--skip-vendor] ...",
              file=sys.stderr)
        return 0 if argv else 2
    name, rest = argv[0], argv[1:]
    if name == "pull":
        from bench.pull import main as pull_main

        return pull_main(rest)
    print(f"bench: unknown benchmark {name!r} (known: pull)", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
