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
answer can never run a command. Stdout is made inert as well (``--json`` keeps the values it
parses to), and everything written is redacted (``neens_action/redact.py``).
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
    if args[:1] == ["ci"]:
        return invoke(argv)
    from neens_action import redact

    redact.register_environ(os.environ)
    redact.register([_argv_key(args)])
    saved = sys.stdout, sys.stderr
    if not platforms.detect(os.environ).workflow_commands:
        sys.stdout, sys.stderr = redact.Redacted(saved[0]), redact.Redacted(saved[1])
        try:
            return invoke(argv)
        finally:
            sys.stdout, sys.stderr = saved
    from neens_action.publish.actions import Commands, GuardedStream, JsonStream

    guard = GuardedStream(saved[1])
    commands = Commands(guard)
    commands.stop()
    # stdout too: its human text is made inert and --json keeps its values (not only the
    # pause on stderr, which `2>/dev/null` or a reordering `| tee` would take away)
    sys.stdout = JsonStream(saved[0]) if "--json" in args else GuardedStream(saved[0])
    sys.stderr = guard
    try:
        return invoke(argv)
    finally:
        sys.stdout, sys.stderr = saved
        commands.resume()


def _argv_key(args: list[str]) -> str | None:
    """The value of ``--api-key`` on the command line, with a warning inside CI: every
    process of the machine can read it (``ps``); NEENS_API_KEY keeps it out of sight."""
    for i, arg in enumerate(args):
        if arg == "--":
            break
        value = None
        if arg == "--api-key" and i + 1 < len(args):
            value = args[i + 1]
        elif arg.startswith("--api-key="):
            value = arg.split("=", 1)[1]
        if value is not None:
            if os.environ.get("CI") or os.environ.get("GITHUB_ACTIONS") == "true":
                print("neens: warning: --api-key on the command line is visible to every "
                      "process of this machine (ps); set NEENS_API_KEY instead",
                      file=sys.stderr)
            return value
    return None


if __name__ == "__main__":  # pragma: no cover
    main()
