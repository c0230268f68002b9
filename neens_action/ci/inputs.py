"""The CI front door's inputs: one table, read the same way on every platform, validated.

Where an input ``some-name`` is read from (first non-empty value wins):

1. ``INPUT_SOME-NAME``      GitHub Actions (upper-cased, dashes kept)
2. ``INPUT_SOME_NAME``      GitHub, when mapped by hand in ``runs.env`` / a workflow
3. ``NEENS_INPUT_SOME_NAME`` the GitLab component, Jenkins, ``docker run -e``
4. the input's fallback variable, if it has one (e.g. ``NEENS_API_KEY`` for ``api-key``)
5. its default

An input whose value is its ``unset`` marker (``-1`` for the optional numbers, ``-1000`` for the
two delta percentages) counts as empty: the GitLab component's number inputs must have a
number as their default, so "not set" is spelled that way there (``docs/gitlab.md``).

Every value is typed here (text -> number, bool, list...); a value that is not of its type
raises :class:`InputError` naming the input. The rules a value must follow (``min-pass-rate``
between 0 and 1...) belong to the settings the modes build: a broken rule is a
:class:`~neens_action.settings.names.SettingError`, worded for the input by the settings' name
table (:meth:`InputError.of`). This is the only input table: every mode's inputs are in it
(the inputs every mode reads first, then the mode-specific ones in name order), and
``action.yml``, the GitLab component and the docs table are checked against it by tests.
"""

from __future__ import annotations

import math
import re
import shlex
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from neens_action.errors import UsageError
from neens_action.settings.names import SettingError

TRUE = {"true", "yes", "y", "on", "1"}
FALSE = {"false", "no", "n", "off", "0"}


class InputError(UsageError):
    """A CI input has a bad value: ``name`` is the input, ``why`` one sentence."""

    def __init__(self, name: str, why: str) -> None:
        super().__init__(f"input {name}: {why}")
        self.name = name
        self.why = " ".join(why.split())

    @classmethod
    def of(cls, err: SettingError) -> InputError:
        """A settings rule broken by an input: named and worded from the settings' table."""
        return cls(err.input_name(), err.input_reason())


@dataclass(frozen=True)
class Input:
    name: str
    kind: str  # str script secret bool auto-bool int float choice words list path url
    default: str = ""
    help: str = ""
    choices: tuple[str, ...] = ()
    fallback: str = ""  # a plain environment variable read when the input is empty
    # the value that means "not set" (typed GitLab inputs cannot default to empty)
    unset: str = ""


NO_NUMBER = "-1"  # "not set" for an optional number that cannot be negative
NO_DELTA = "-1000"  # "not set" for a delta percentage (below its minimum, -100)

INPUTS: list[Input] = [
    Input("mode", "str", "run", "what to do (one of ci.MODES)"),
    Input("command", "words", "", "the agent command, run once per item (shell words)"),
    Input("install", "script", "", "a set-up command run first with `sh -c`"),
    Input("install-timeout", "float", "1200", "deadline of the install command (s)"),
    Input("working-directory", "path", "", "directory to run install and the agent in"),
    Input("base-url", "url", "", "Neens API origin", fallback="NEENS_BASE_URL"),
    Input("api-key", "secret", "", "Neens project key", fallback="NEENS_API_KEY"),
    Input("ui-url", "str", "", "Neens UI run page for report links: a template with "
          "{run_id} (and optionally {item_id} in the query or fragment)",
          fallback="NEENS_UI_URL"),
    Input("run-id", "str", "", "drive an existing run"),
    Input("create", "auto-bool", "auto", "create a run first: true | false | auto (auto: "
          "create one when run-id is empty)"),
    Input("dataset", "str", "", "dataset to snapshot"),
    Input("dataset-version-id", "str", "", "an explicit dataset version"),
    Input("version-label", "str", "", "candidate version label"),
    Input("name", "str", "", "run name"),
    Input("baseline", "str", "", "branch:<name> | run:<id> | prod | prod:<range>"),
    Input("max-regressions", "int", "", "gate: fail if regressions > N",
          unset=NO_NUMBER),
    Input("min-pass-rate", "float", "", "gate: fail if pass rate < R",
          unset=NO_NUMBER),
    Input("timeout", "float", "600", "per-item agent timeout (s): every agent has a deadline"),
    Input("concurrency", "int", "1", "parallel agent invocations"),
    Input("poll-interval", "float", "5", "longest wait between status polls (s)"),
    Input("poll-timeout", "float", "1800", "overall scoring budget (s)"),
    Input("no-gate", "bool", "false", "a failed gate exits 0 (a run error still exits 2)"),
    Input("gate-policy", "path", "", "gate-as-code policy file", fallback="NEENS_GATE_POLICY"),
    Input("github-token", "secret", "", "token for the PR comment", fallback="GITHUB_TOKEN"),
    Input("comment", "choice", "update", "PR/MR comment: update | new | off",
          choices=("update", "new", "off")),
    Input("comment-author", "str", "", "login the PR comment is written as (app tokens)"),
    Input("summary", "bool", "true", "write the job summary"),
    Input("doctor", "bool", "false", "run `neens doctor` checks before anything else"),
    Input("matrix-key", "str", "", "matrix leg, keys the sticky comment",
          fallback="NEENS_MATRIX_KEY"),
    Input("junit-file", "path", "neens-junit.xml", "JUnit XML report path"),
    Input("result-file", "path", "neens-result.json", "JSON result path"),
    Input("summary-file", "path", "neens-summary.md", "Markdown summary path"),
    Input("dotenv-file", "path", "neens.env", "GitLab dotenv report path",
          fallback="NEENS_DOTENV"),
    # mode-specific inputs, in name order
    Input("agent-connection", "str", "", "modes push, stress: the agent_http connection Neens "
          "calls once per prompt"),
    Input("arms", "list", "", "mode sweep: one arm per line, LABEL=MODEL (runner) or "
          "LABEL=CONNECTION_ID (sweep-mode push)"),
    Input("bar", "float", "", "mode sweep: pass rate an arm must clear (0..1; default the "
          "sweep's gate, else the deployment's)", unset=NO_NUMBER),
    Input("baseline-arm", "str", "", "mode sweep: the arm savings are measured against "
          "(default the first)"),
    Input("baseline-runs", "int", "", "mode run: the default branch's history read back N "
          "runs (default 5 with repeat 2 or more, else 1)", unset=NO_NUMBER),
    Input("budget-usd", "float", "", "mode sweep: Neens refuses the sweep when its estimate is "
          "above this", unset=NO_NUMBER),
    Input("failure-modes", "list", "", "mode stress: failure modes to attack (ids, one per "
          "line or comma-separated)"),
    Input("gates", "str", "", "eval gates to run: active | gate-a,gate-b (modes run, push)",
          fallback="NEENS_GATES"),
    Input("k", "int", "", "mode sweep: repetitions per arm (pass^k)",
          unset=NO_NUMBER),
    Input("max-abs-failures", "int", "", "policy override: block if more than N items fail",
          unset=NO_NUMBER),
    Input("max-cost-delta-pct", "float", "",
          "policy override: block if the average cost grows more than P % vs the baseline",
          unset=NO_DELTA),
    Input("max-latency-delta-pct", "float", "",
          "policy override: block if the average latency grows more than P % vs the baseline",
          unset=NO_DELTA),
    Input("min-avg-score", "float", "", "policy override: block if the average score is "
          "below S (0..1)",
          unset=NO_NUMBER),
    Input("on-inconclusive", "choice", "warn", "mode run: what an inconclusive noise-aware "
          "verdict does: warn | block", choices=("warn", "block")),
    Input("per-mode", "int", "", "mode stress: LLM-written scenarios per failure mode (1-25)",
          unset=NO_NUMBER),
    Input("ready-timeout", "float", "600", "mode stress: how long to wait for the suite to be "
          "generated (s)"),
    Input("repeat", "str", "1", "mode run: replay every item K times, as K runs, or auto "
          "(again only while an item is in doubt, at most 5)"),
    Input("require-winner", "bool", "false", "mode sweep: exit 1 unless an arm clears the bar"),
    Input("shard", "str", "",
          "mode shard: this job's share of the run, I/N (1-based); default in a GitLab "
          "parallel job: $CI_NODE_INDEX/$CI_NODE_TOTAL"),
    Input("strategies", "list", "", "mode stress: paraphrase, escalate, boundary (default all "
          "three)"),
    Input("suite-id", "str", "", "modes stress, sweep: a generated scenario suite to replay"),
    Input("sweep-mode", "choice", "runner", "mode sweep: runner (command runs per arm) | push "
          "(Neens calls each arm's connection)", choices=("runner", "push")),
    Input("workers", "int", "", "modes run, shard, sweep: worker mode, N long-lived agent "
          "processes handed one item at a time (docs/worker-protocol.md); replaces "
          "concurrency", unset=NO_NUMBER),
]
_BY_NAME = {i.name: i for i in INPUTS}


def env_names(name: str) -> list[str]:
    upper = name.upper()
    under = upper.replace("-", "_")
    return list(dict.fromkeys([f"INPUT_{upper}", f"INPUT_{under}", f"NEENS_INPUT_{under}"]))


def raw_value(environ: Mapping[str, str], spec: Input) -> str:
    """The first non-empty value for ``spec`` (see the module docstring), else its default."""
    for var in env_names(spec.name):
        value = environ.get(var, "").strip()
        if value and not is_unset(spec, value):
            return value
    if spec.fallback and environ.get(spec.fallback, "").strip():
        return environ[spec.fallback].strip()
    return spec.default


def is_unset(spec: Input, value: str) -> bool:
    """True when ``value`` is the input's "not set" marker (``-1``, ``-1.0``, ``-1000``)."""
    if not spec.unset:
        return False
    try:
        return float(value) == float(spec.unset)
    except ValueError:
        return False


def secrets_in(environ: Mapping[str, str]) -> list[str]:
    """Every non-empty secret the environment holds for us (masked before anything else)."""
    values = [raw_value(environ, spec) for spec in INPUTS if spec.kind == "secret"]
    values += [environ.get(v, "") for v in ("NEENS_API_KEY", "NEENS_GITLAB_TOKEN")]
    return [v for v in dict.fromkeys(values) if v.strip()]


def _number(spec: Input, text: str, cast: type) -> int | float:
    try:
        value = cast(text)
    except ValueError:
        what = "a whole number" if cast is int else "a number"
        raise InputError(spec.name, f"must be {what}, got {text[:40]!r}") from None
    if isinstance(value, float) and not math.isfinite(value):
        raise InputError(spec.name, f"must be a finite number, got {text[:40]!r}")
    return value


def parse_value(spec: Input, text: str) -> Any:
    """Typed value of one input (``None`` when empty and optional)."""
    if spec.kind in ("secret", "script"):
        return text or None
    if spec.kind in ("str", "path"):
        if any(ord(c) < 32 and c != "\t" for c in text):
            raise InputError(spec.name, "must be one line without control characters")
        return text or None
    if text == "":
        return None
    if spec.kind in ("bool", "auto-bool"):
        low = text.lower()
        if spec.kind == "auto-bool" and low == "auto":
            return "auto"
        if low in TRUE:
            return True
        if low in FALSE:
            return False
        allowed = "true, false or auto" if spec.kind == "auto-bool" else "true or false"
        raise InputError(spec.name, f"must be {allowed}, got {text[:40]!r}")
    if spec.kind == "int":
        return int(_number(spec, text, int))
    if spec.kind == "float":
        return float(_number(spec, text, float))
    if spec.kind == "choice":
        if text.lower() not in spec.choices:
            raise InputError(spec.name, f"must be one of {', '.join(spec.choices)}, got "
                                        f"{text[:40]!r}")
        return text.lower()
    if spec.kind == "list":
        if any(ord(c) < 32 and c not in "\t\n\r" for c in text):
            raise InputError(spec.name, "must not contain control characters")
        return [part for part in re.split(r"[,\s]+", text) if part] or None
    if spec.kind == "words":
        try:
            words = shlex.split(text)
        except ValueError as exc:
            raise InputError(spec.name, f"cannot be split into words ({exc})") from None
        return words or None
    if spec.kind == "url":
        if not re.match(r"^https?://[^\s/?#@]+(?::\d+)?(?:/\S*)?$", text):
            raise InputError(spec.name, f"must be an http(s) URL such as "
                                        f"https://neens.example.com, got {text[:60]!r}")
        return text.rstrip("/")
    raise InputError(spec.name, f"unknown input kind {spec.kind!r}")  # pragma: no cover


class Inputs:
    """Parsed inputs: ``inputs["min-pass-rate"]`` is the typed value, or None when empty."""

    def __init__(self, values: dict[str, Any]) -> None:
        self.values = values

    def __getitem__(self, name: str) -> Any:
        return self.values[name]

    def get(self, name: str, default: Any = None) -> Any:
        value = self.values.get(name)
        return default if value is None else value

    def __repr__(self) -> str:  # never print a secret
        shown = {k: ("***" if _BY_NAME[k].kind == "secret" and v else v)
                 for k, v in self.values.items()}
        return f"Inputs({shown})"


def parse_inputs(environ: Mapping[str, str], names: Iterable[str] | None = None) -> Inputs:
    """Read and type every input (or just ``names``); the first one of a wrong type raises."""
    values: dict[str, Any] = {}
    wanted = list(names) if names is not None else [i.name for i in INPUTS]
    for name in wanted:
        spec = _BY_NAME[name]
        values[name] = parse_value(spec, raw_value(environ, spec))
    return Inputs(values)


def markdown_table() -> str:
    """The "CI inputs" table of ``docs/internals.md`` (kept in sync by a unit test)."""
    rows = ["| input | GitHub env | GitLab / other env | type | default | fallback | not set |",
            "|---|---|---|---|---|---|---|"]
    for spec in INPUTS:
        names = env_names(spec.name)
        kind = spec.kind + (f" ({'/'.join(spec.choices)})" if spec.choices else "")
        rows.append(
            f"| `{spec.name}` | `{names[0]}` | `{names[-1]}` | {kind} | "
            f"{('`' + spec.default + '`') if spec.default else '—'} | "
            f"{('`' + spec.fallback + '`') if spec.fallback else '—'} | "
            f"{('empty or `' + spec.unset + '`') if spec.unset else 'empty'} |"
        )
    return "\n".join(rows) + "\n"


if __name__ == "__main__":  # pragma: no cover - `python -m neens_action.ci.inputs` prints it
    print(markdown_table(), end="")
