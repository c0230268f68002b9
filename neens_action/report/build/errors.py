"""Reports for errors found before anything ran: a bad input (named as the platform names
it: the action input or component input), with "How to fix" bullets. Never a "run error".
And errors from the API worded for the CLI, reworded for the CI step (:func:`in_input_terms`)."""

from __future__ import annotations

import re
from collections.abc import Callable

from neens_action.errors import EXIT_ERROR
from neens_action.outcome import Outcome, SweepOutcome
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


# CLI wording of connection errors (api/, settings/) -> the CI step's inputs
_INPUT_TERMS = (
    (re.compile(r"`--(api-key|base-url|dataset|gates|poll-timeout)`"), r"the `\1` input"),
    (re.compile(r"check --api-key / NEENS_API_KEY"), "check the api-key input"),
    (re.compile(r"pass --base-url or set NEENS_BASE_URL"),
     "set the base-url input (or the NEENS_BASE_URL variable)"),
    (re.compile(r"pass the key with --api-key"), "pass the key in the api-key input"),
    (re.compile(r"(?<![\w-])--base-url(?![\w-])"), "the base-url input"),
    (re.compile(r"(?<![\w-])--api-key(?![\w-])"), "the api-key input"),
)


def in_input_terms(text: str) -> str:
    """An error worded for the CLI (``check --api-key / NEENS_API_KEY``, ``is --base-url the
    Neens API origin?``) as the CI step's user reads it: naming the ``api-key`` and
    ``base-url`` inputs. Used at the CI edge only: the CLI keeps its flags."""
    for pattern, words in _INPUT_TERMS:
        text = pattern.sub(words, text)
    return text


def report_in_input_terms(build: Callable[[Outcome], Report]) -> Callable[[Outcome], Report]:
    """``build`` whose report speaks the CI step's inputs: the "How to fix" hints and the error
    name ``api-key``, ``base-url``... instead of CLI flags (the CI front door's builds)."""

    def reworded(outcome: Outcome) -> Report:
        report = build(outcome)
        report.hints = [in_input_terms(h) for h in report.hints]
        if report.error:
            report.error = in_input_terms(report.error)
        return report

    return reworded


def outcome_in_input_terms(outcome: Outcome | SweepOutcome) -> Outcome | SweepOutcome:
    """The outcome's error and warnings in input terms (in place; returned for chaining)."""
    if outcome.error:
        outcome.error = in_input_terms(outcome.error)
    outcome.warnings = [in_input_terms(w) for w in outcome.warnings]
    return outcome
