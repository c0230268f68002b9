"""Reports for errors found before anything ran: a bad input (named as the platform names
it: the action input or component input), with "How to fix" bullets. Never a "run error".
(Errors found later name settings in the words of the front door in force:
``settings/names.py``.)"""

from __future__ import annotations

from neens_action.errors import EXIT_ERROR
from neens_action.report.model import Report

FORK_HINT = ("On GitHub, secrets are not passed to workflows triggered from forks: run the "
             "job on `pull_request_target` with care, or skip it for forks.")


def input_hints(name: str) -> list[str]:
    if name == "api-key":
        return ["Set the `api-key` input from a secret, e.g. "
                "`api-key: ${{ secrets.NEENS_API_KEY }}` (GitLab: a masked CI/CD variable).",
                FORK_HINT]
    if name == "base-url":
        return ["Set `base-url` to the Neens API origin, e.g. `https://neens.example.com`."]
    return [f"Fix the `{name}` input in the workflow (or `NEENS_INPUT_"
            f"{name.upper().replace('-', '_')}` on GitLab/Jenkins)."]


def bad_input_report(name: str, why: str) -> Report:
    return Report(kind="eval", title="Neens eval", verdict="errored", exit_code=EXIT_ERROR,
                  headline=f"Bad input {name}: nothing was run.",
                  error=f"input {name}: {why}", hints=input_hints(name),
                  outputs={"exit-code": str(EXIT_ERROR), "verdict": "errored"})
