"""What a setting is called at each front door, and the one error a settings check raises.

A settings class (``EvalRunSettings``, ``SweepSettings``...) checks its own fields and raises
:class:`SettingError` naming the *field* (the dataclass attribute) and why. Its name table
(:class:`Names`, one per settings class) says what that field is called at each front door:
the CLI flag (``--min-pass-rate``), the CI input (``min-pass-rate``, the action input and the
GitLab component input) and the environment variable it falls back to, if any. Each door words
the error once, from that table: the CLI prints ``--min-pass-rate must be at most 1, got 1.5``,
the CI step ``input min-pass-rate: must be at most 1, got 1.5``.

A reason that names another setting holds a :class:`Ref` to it, never a spelled-out flag, so
each door fills in its own word. Text written later for the user (an API error's "check the
key" advice, a report's "How to fix" bullets) words settings through :func:`phrase`, in the
vocabulary of the door in force (:func:`speaking`; the CLI's unless the CI door says so).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any, ParamSpec, TypeVar

from neens_action.errors import UsageError

P = ParamSpec("P")
T = TypeVar("T")
CLI = "cli"
CI = "ci"
_DOOR: ContextVar[str] = ContextVar("neens_door", default=CLI)


@dataclass(frozen=True)
class Name:
    """One field's names: its CLI flag, its CI input (None: not a CI input) and its
    environment variable (None: none)."""

    flag: str
    input: str | None = None
    env: str | None = None


class Names(dict[str, Name]):
    """field -> :class:`Name`, the name table of one settings class."""

    def name(self, field: str) -> Name:
        """The field's names (a field missing from the table is called by its own name)."""
        if field in self:
            return self[field]
        dashed = field.replace("_", "-")
        return Name(f"--{dashed}", dashed)

    def word(self, field: str, door: str) -> str:
        """How ``door`` names the field inside a sentence: the flag, or the input name."""
        name = self.name(field)
        if door == CI:
            return name.input or name.flag.lstrip("-")
        return name.flag

    def env(self) -> dict[str, str]:
        """field -> environment variable, for the fields that have one."""
        return {field: name.env for field, name in self.items() if name.env}

    def with_(self, *others: Names) -> Names:
        """This table with ``others`` on top (a subclass's table extends its base's)."""
        merged = Names(self)
        for other in others:
            merged.update(other)
        return merged


def table(*same: str, **named: Name) -> Names:
    """A name table: each field in ``same`` is ``--field-name`` and input ``field-name``;
    ``named`` gives the others."""
    names = Names({f: Name(f"--{f.replace('_', '-')}", f.replace("_", "-")) for f in same})
    names.update(named)
    return names


# the names of the connection settings every settings class has (the CLI's --project-id has
# no input: the CI step reads NEENS_PROJECT_ID); here, below the API client, so that its
# errors can name them too
CONNECTION_NAMES = table(
    base_url=Name("--base-url", "base-url", "NEENS_BASE_URL"),
    api_key=Name("--api-key", "api-key", "NEENS_API_KEY"),
    project_id=Name("--project-id", None, "NEENS_PROJECT_ID"),
    ui_url=Name("--ui-url", "ui-url", "NEENS_UI_URL"),
)


@dataclass(frozen=True)
class Ref:
    """Another setting named inside a reason: each door words it (``--create`` / ``create``)."""

    field: str


Reason = str | Sequence[str | Ref]


class SettingError(UsageError):
    """A setting has a bad value: ``field`` is the settings attribute, ``reason`` says why.

    ``lead``: the CLI line starts with the flag (``--timeout must be greater than 0``); with
    ``lead=False`` the reason is a whole sentence (``invalid --arm 'x': ...``, its own field as
    a :class:`Ref`). ``sep`` joins the flag and the reason on the CLI. ``names`` is the
    table of the settings class that raised it (set by its ``validate``).
    """

    def __init__(self, field: str, reason: Reason, *, lead: bool = True, sep: str = " ",
                 names: Names | None = None) -> None:
        Exception.__init__(self, field, reason)
        self.field = field
        self.reason = reason
        self.lead = lead
        self.sep = sep
        self.names = names if names is not None else Names()

    def named(self, names: Names) -> SettingError:
        """This error, worded from ``names`` (a settings class's table); returns self."""
        self.names = names.with_(self.names)
        return self

    @property
    def message(self) -> str:  # type: ignore[override]
        """The line in the current door's words (:func:`speaking`)."""
        if door() == CI:
            return f"input {self.input_name()}: {self.input_reason()}"
        return self.cli_line()

    def text(self, door: str) -> str:
        """The reason as ``door`` words it."""
        if isinstance(self.reason, str):
            return self.reason
        return "".join(part if isinstance(part, str) else self.names.word(part.field, door)
                       for part in self.reason)

    def cli_line(self) -> str:
        """The CLI's line: ``--min-pass-rate must be at most 1, got 1.5``."""
        if not self.lead:
            return self.text(CLI)
        return f"{self.names.word(self.field, CLI)}{self.sep}{self.text(CLI)}"

    def input_name(self) -> str:
        """The CI input this error is about."""
        return self.names.word(self.field, CI)

    def input_reason(self) -> str:
        """The reason in the CI step's words (the line names the input first)."""
        return " ".join(self.text(CI).split())


# field -> its value rule, one per field: ``rule(field, value)`` raises SettingError (None
# passes: an unset optional setting). A settings class's ``RULES``; rules across fields (two
# settings that exclude each other) are in its ``validate``.
Rule = Callable[[str, Any], None]
Rules = dict[str, Rule]


def apply_rules(rules: Rules, values: Any) -> None:
    """Every field rule over ``values`` (a settings object: its attributes)."""
    for field, rule in rules.items():
        rule(field, getattr(values, field))


def door() -> str:
    """The front door in force: :data:`CLI` or :data:`CI`."""
    return _DOOR.get()


@contextmanager
def speaking(which: str) -> Iterator[None]:
    """Word settings as ``which`` (:data:`CI` inside the CI step) until the block ends."""
    token = _DOOR.set(which)
    try:
        yield
    finally:
        _DOOR.reset(token)


def phrase(field: str, names: Names, how: str = "name") -> str:
    """A setting named in advice written for the user, in the current door's words.

    ``how``: ``name`` (``--api-key`` / ``the api-key input``), ``code`` (the same with the
    name as a code span), ``either`` (``--api-key / NEENS_API_KEY`` on the CLI), ``set``
    (``pass --base-url or set NEENS_BASE_URL`` / ``set the base-url input (or the
    NEENS_BASE_URL variable)``).
    """
    name = names.name(field)
    ci = door() == CI
    word = names.word(field, door())
    if how == "code":
        return f"the `{word}` input" if ci else f"`{word}`"
    if how == "either":
        return f"the {word} input" if ci else (f"{word} / {name.env}" if name.env else word)
    if how == "set":
        if ci:
            return f"set the {word} input" + (f" (or the {name.env} variable)" if name.env
                                              else "")
        return f"pass {word}" + (f" or set {name.env}" if name.env else "")
    return f"the {word} input" if ci else word


def checks(method: Callable[P, T]) -> Callable[P, T]:
    """Decorates a settings class's ``validate``: its :class:`SettingError` is worded from
    the class's name table (``NAMES``)."""

    @functools.wraps(method)
    def checked(*args: P.args, **kwargs: P.kwargs) -> T:
        try:
            return method(*args, **kwargs)
        except SettingError as exc:
            exc.named(type(args[0]).NAMES)  # type: ignore[attr-defined]
            raise

    return checked
