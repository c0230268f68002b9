"""The few exception types of neens_action, each with a one-line message for the user.

Every error that can reach the command line is a :class:`NeensError`. The CLI (and the CI
front door) catch it in one place, print ``neens: error: <message>`` on stderr and exit with
``exit_code``. Nothing else should print a traceback.
"""

from __future__ import annotations

EXIT_PASSED = 0
EXIT_FAILED = 1
EXIT_ERROR = 2
EXIT_INTERRUPTED = 130


class NeensError(Exception):
    """Base class. ``str(err)`` is one line that says what went wrong and how to fix it."""

    exit_code = EXIT_ERROR

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    def __str__(self) -> str:  # one line, always
        return " ".join(self.message.split())


class UsageError(NeensError):
    """Bad flags, inputs, environment or files: the user can fix it before re-running.

    A setting that breaks its rule raises the subclass
    :class:`~neens_action.settings.names.SettingError`, which names the settings field; each
    front door words it from the settings' name table (a flag on the CLI, an input in CI).
    """


class PolicyError(UsageError):
    """A gate-as-code policy file (or override flag) is malformed."""


class NeensApiError(NeensError):
    """An HTTP call to Neens failed: a non-2xx status, a transport error or a timeout.

    ``status`` is None for transport failures (refused, reset, DNS, timeout).
    ``detail`` is the server's ``detail`` sentence, or a short excerpt of a non-JSON body.
    """

    def __init__(
        self,
        message: str,
        *,
        status: int | None = None,
        detail: str | None = None,
        method: str = "",
        path: str = "",
    ) -> None:
        super().__init__(message)
        self.status = status
        self.detail = detail
        self.method = method
        self.path = path

    @property
    def transient(self) -> bool:
        """True when a retry may succeed: no status (transport), 429 or 5xx."""
        return self.status is None or self.status == 429 or self.status >= 500


class RunError(NeensError):
    """The run itself went wrong (no items, failed status, poll timeout...): exit 2."""


class Interrupted(NeensError):
    """SIGINT or SIGTERM arrived: agents are killed, the run is cancelled, exit 130."""

    exit_code = EXIT_INTERRUPTED

    def __init__(self, message: str = "interrupted") -> None:
        super().__init__(message)
