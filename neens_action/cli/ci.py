"""``neens ci``: the CI front door of the container, run from a host step or a script line.

The same front door as the Docker action, the GitLab component and ``docker run`` without
arguments (:func:`neens_action.ci.main.run`): platform detection, the job summary, the sticky
PR comment or MR note, outputs, annotations, the dotenv report, JUnit, the build verdict.
Inputs come from the environment (``INPUT_*``, ``NEENS_INPUT_*``, fallbacks: see
``docs/inputs.md``) and from flags, one per input (``--max-regressions 0``); a flag wins over
the environment. Words after ``--`` are the agent command (the ``command`` input). Secrets
(``api-key``, ``github-token``) have no flag: a command line is visible to every process of
the machine, so they come from the environment (``NEENS_API_KEY``, ``GITHUB_TOKEN``,
``INPUT_API-KEY`` ...).
"""

from __future__ import annotations

import os
import shlex
from collections.abc import Callable, Mapping

import click

from neens_action.ci import inputs as ci_inputs

FLAGGED = [spec for spec in ci_inputs.INPUTS if spec.kind != "secret"]
_PARAM = {spec.name: spec.name.replace("-", "_") for spec in FLAGGED}


def input_environment(environ: Mapping[str, str], given: Mapping[str, str | None],
                      argv: tuple[str, ...] = ()) -> dict[str, str]:
    """``environ`` with each input given as a flag (and the command after ``--``) put where
    the front door reads it first; the other spellings of that input are dropped so the flag
    wins whatever the job's environment holds."""
    env = dict(environ)
    values = {name: value for name, value in given.items() if value is not None}
    if argv:
        if "command" in values:
            raise click.UsageError("give the agent command either after -- or with --command, "
                                   "not both")
        values["command"] = shlex.join(argv)
    for name, value in values.items():
        for var in ci_inputs.env_names(name):
            env.pop(var, None)
        env[ci_inputs.env_names(name)[-1]] = value
    return env


def _add_input_options(func: Callable[..., int]) -> Callable[..., int]:
    for spec in reversed(FLAGGED):
        hint = f" (default {spec.default})" if spec.default else ""
        func = click.option(f"--{spec.name}", _PARAM[spec.name], default=None,
                            metavar=spec.kind.upper(),
                            help=f"{spec.help}{hint}.")(func)
    return func


@click.command("ci", context_settings={"help_option_names": ["-h", "--help"],
                                       "max_content_width": 100})
@_add_input_options
@click.argument("agent", nargs=-1, type=click.UNPROCESSED, metavar="[-- AGENT COMMAND...]")
def ci_command(agent: tuple[str, ...], **flags: str | None) -> int:
    """Run the CI front door here: the same inputs, outputs, summary, PR comment / MR note,
    annotations, dotenv and JUnit as the container action, from a host step or a script line.

    Every input is also read from the environment (INPUT_<NAME> on GitHub, NEENS_INPUT_<NAME>
    elsewhere); secrets only from there (NEENS_API_KEY, GITHUB_TOKEN, NEENS_GITLAB_TOKEN).
    """
    from neens_action.ci.main import run

    given = {spec.name: flags.get(_PARAM[spec.name]) for spec in FLAGGED}
    return run(input_environment(os.environ, given, agent))


__all__ = ["ci_command", "input_environment"]
