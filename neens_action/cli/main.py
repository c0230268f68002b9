"""The ``neens`` command: a thin click front door over plain functions.

The click app and its command table live in ``neens_action.cli.app``, imported only when a
command runs, so ``neens --version`` starts without click; each command group is a module of
``neens_action/cli`` (the sandbox server is ``neens_sandbox.cli``), imported only when used.
Every error is turned into one line on stderr and the exit-code contract here:
0 gate passed, 1 gate failed, 2 run error / bad usage, 130 interrupted.

On a platform whose log runs workflow commands (GitHub Actions, ``GITHUB_ACTIONS=true``: see
:mod:`neens_action.ci.platforms`) the CLI shields itself: workflow commands
are paused from its first line to its last (``::stop-commands::`` with a random token, which
the runner applies to stdout and stderr alike) and its human log on stderr goes through a
:class:`~neens_action.publish.actions.GuardedStream`, so a gate name, a prompt or a server
answer can never run a command. Machine output (``--json`` on stdout) is left byte-exact.
"""

from __future__ import annotations

import os
import sys

from neens_action import __version__


def main(argv: list[str] | None = None) -> None:
    """Console-script entry point: run the CLI and map every outcome to an exit code."""
    sys.exit(run(argv))


def run(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else list(argv)
    if args == ["--version"]:  # the fast path: no click, no requests
        print(f"neens {__version__}")
        return 0
    from neens_action.ci import platforms
    from neens_action.ci.harden import make_undumpable
    from neens_action.cli.app import invoke

    make_undumpable()  # the agents we run cannot read /proc/$PPID/environ
    # `neens ci` is the CI front door: it masks and shields itself (a second shield around it
    # would neutralise its own ::add-mask:: and ::stop-commands:: lines)
    if args[:1] == ["ci"] or not platforms.detect(os.environ).workflow_commands:
        return invoke(argv)
    from neens_action.publish.actions import Commands, GuardedStream

    saved = sys.stderr
    guard = GuardedStream(saved)
    commands = Commands(guard)
    commands.stop()
    sys.stderr = guard
    try:
        return invoke(argv)
    finally:
        sys.stderr = saved
        commands.resume()


if __name__ == "__main__":  # pragma: no cover
    main()
