"""How we reach Neens: base URL, key, project, timeouts, retries, and :func:`make_client`.

Every job's settings extend :class:`Connection`, and :func:`make_client` is the only place a
:class:`~neens_action.api.client.NeensClient` is built, so every mode (runs, pushes, shards,
sweeps, stress tests, doctor) talks to Neens with the same deadlines and the same retries.
Secrets are ``repr=False``: a settings object can be logged.
"""

from __future__ import annotations

import ipaddress
import math
import os
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar
from urllib.parse import urlsplit

from neens_action.errors import UsageError
from neens_action.report.links import check_ui_url
from neens_action.settings.names import (
    CONNECTION_NAMES,
    Names,
    Ref,
    Rule,
    Rules,
    SettingError,
    phrase,
)

if TYPE_CHECKING:
    from neens_action.api.client import NeensClient

REQUEST_TIMEOUT = 30.0  # seconds per request
RETRIES = 5  # safe calls; tests/integration/test_chaos.py: 6 attempts, ~8 s of backoff
# setting -> the variable it falls back to when its flag is not given
CONNECTION_ENV = CONNECTION_NAMES.env()


def check_base_url(url: str | None) -> str:
    """The API origin, checked and without a trailing slash (a SettingError says what to fix)."""
    if not url or not url.strip():
        raise SettingError("base_url", ["no Neens base URL: pass ", Ref("base_url"),
                                        " or set NEENS_BASE_URL"], lead=False)
    u = url.strip()
    parts = urlsplit(u)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise SettingError("base_url", f"must be an http(s) URL such as "
                                       f"https://neens.example.com, got {u[:80]!r}")
    if parts.username or parts.password:
        raise SettingError("base_url", ["must not carry credentials: pass the key with ",
                                        Ref("api_key")])
    if parts.path.strip("/") or parts.query or parts.fragment:
        # every API route lives at the root of the origin: a path only ever meets 404s
        path = u.split(parts.netloc, 1)[1][:60]
        raise SettingError("base_url", f"has a path ({path}): use the origin, e.g. "
                                       f"{parts.scheme}://{parts.netloc}")
    return u.rstrip("/")


def number_problem(value: object, *, lo: float | None = None, hi: float | None = None,
                   positive: bool = False) -> str | None:
    """Why ``value`` is not a finite number within bounds (None: it is, or it is None)."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        return f"must be a number, got {value!r}"
    if positive and value <= 0:
        return f"must be greater than 0, got {value:g}"
    if lo is not None and value < lo:
        return f"must be at least {lo:g}, got {value:g}"
    if hi is not None and value > hi:
        return f"must be at most {hi:g}, got {value:g}"
    return None


def check_number(field: str, value: float | None, *, lo: float | None = None,
                 hi: float | None = None, positive: bool = False) -> None:
    """Setting ``field`` is a finite number within bounds (None passes: it is optional)."""
    problem = number_problem(value, lo=lo, hi=hi, positive=positive)
    if problem:
        raise SettingError(field, problem)


def env_defaults(values: dict[str, object], environ: Mapping[str, str],
                 table: Mapping[str, str]) -> dict[str, object]:
    """Fill the settings in ``table`` that were not given (None or "") from the environment."""
    for attr, var in table.items():
        if values.get(attr) in (None, "") and environ.get(var, "").strip():
            values[attr] = environ[var].strip()
    return values


@dataclass
class Connection:
    """The part of every job's settings that says how to reach Neens."""

    NAMES: ClassVar[Names] = CONNECTION_NAMES

    base_url: str = ""
    api_key: str | None = field(default=None, repr=False)
    project_id: str | None = None
    request_timeout: float = REQUEST_TIMEOUT
    retries: int = RETRIES
    # the Neens UI's run page, a template such as https://app.example/runs/{run_id}: the
    # human links of reports (report/links.py lists its variables)
    ui_url: str = ""

    @classmethod
    def from_flags(cls, flags: Mapping[str, object], environ: Mapping[str, str]) -> Connection:
        """``--base-url/--api-key/--project-id`` (or ``NEENS_*``), checked."""
        values = {k: flags.get(k) for k in CONNECTION_ENV}
        env_defaults(values, environ, CONNECTION_ENV)
        conn = cls(base_url=str(values["base_url"] or ""),
                   api_key=str(values["api_key"] or "") or None,
                   project_id=str(values["project_id"] or "") or None,
                   ui_url=str(values["ui_url"] or ""))
        return conn.check_connection()

    def check_connection(self) -> Connection:
        try:
            self.base_url = check_base_url(self.base_url)
        except SettingError as exc:
            raise exc.named(CONNECTION_NAMES) from None
        self.project_id = (self.project_id or "").strip() or None
        try:  # report/links.py owns the template's rules; its reason, without a flag
            self.ui_url = check_ui_url(self.ui_url, flag="")
        except UsageError as exc:
            reason = str(exc)
            raise SettingError("ui_url", reason.removeprefix(": "),
                               sep=": " if reason.startswith(":") else " ",
                               names=CONNECTION_NAMES) from None
        problem = number_problem(self.request_timeout, positive=True)
        if problem:
            raise UsageError(f"request timeout {problem}")
        if isinstance(self.retries, bool) or int(self.retries) < 0:
            raise UsageError(f"retries must be 0 or more, got {self.retries}")
        return self


def loopback(host: str) -> bool:
    """``localhost`` or a loopback address (where plain HTTP cannot be overheard)."""
    host = (host or "").strip("[]").lower()
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def cleartext_warning(base_url: str) -> str | None:
    """The warning for a key sent over plain HTTP to another machine (None when fine)."""
    parts = urlsplit(base_url)
    if parts.scheme != "http" or loopback(parts.hostname or ""):
        return None
    return (f"neens: warning: {parts.scheme}://{parts.hostname} is plain HTTP: the API key "
            "and every answer cross the network unencrypted (use https://)")


def missing_key_fix() -> str:
    """``pass --api-key or set NEENS_API_KEY (a nk_live_… project key)`` (the door's words)."""
    return phrase("api_key", CONNECTION_NAMES, "set") + " (a nk_live_… project key)"


def make_client(conn: Connection, log: Callable[[str], None] | None = None, *,
                require_key: bool = True) -> NeensClient:
    """The one place a :class:`NeensClient` is built: the same deadline and retries for all.
    A ``http://`` base URL off this machine is warned about once (``log``, else stderr).
    Without a key (and ``require_key``) it refuses before any request: Neens answers every
    keyless call with 401 anyway."""
    from neens_action.api.client import NeensClient

    if require_key and not (conn.api_key or "").strip():
        raise SettingError("api_key", f"no Neens API key: {missing_key_fix()}", lead=False,
                           names=CONNECTION_NAMES)

    warning = cleartext_warning(conn.base_url)
    if warning:
        (log or (lambda line: print(line, file=sys.stderr, flush=True)))(warning)
    return NeensClient(conn.base_url, conn.api_key, conn.project_id,
                       timeout=conn.request_timeout, retries=conn.retries, **answer_limits())


MAX_PARALLEL = 256  # agent processes at a time (concurrency, workers)


def number(*, lo: float | None = None, hi: float | None = None,
           positive: bool = False) -> Rule:
    """The rule "a finite number within bounds"."""

    def rule(field: str, value: Any) -> None:
        check_number(field, value, lo=lo, hi=hi, positive=positive)

    return rule


def count(least: int) -> Rule:
    """The rule "a whole number, ``least`` or more"."""

    def rule(field: str, value: Any) -> None:
        if value is not None and (isinstance(value, bool) or int(value) < least):
            raise SettingError(field, f"must be {least} or more, got {value}")

    return rule


def parallel(field: str, value: Any) -> None:
    """``concurrency`` / ``workers``: 1 to 256 agents at a time."""
    count(1)(field, value)
    if value is not None and int(value) > MAX_PARALLEL:
        raise SettingError(field, f"must be at most {MAX_PARALLEL}, got {value}")


def check_parallel(concurrency: int, workers: int | None) -> None:
    """Worker mode runs ``workers`` items at a time: ``concurrency`` may only repeat it."""
    if workers is not None and int(concurrency) not in (1, int(workers)):
        raise SettingError("workers", [f"{workers} runs {workers} item(s) at a time: leave out ",
                                       Ref("concurrency"), f" (got {concurrency})"])


# the value rules every agent-running settings class shares
EXECUTION_RULES: Rules = {
    "concurrency": parallel, "workers": parallel, "timeout": number(positive=True),
    "poll_interval": number(positive=True), "poll_timeout": number(positive=True),
}


# the caps on what a server may send (generous defaults in neens_action/api)
LIMIT_ENV = {"request_budget": "NEENS_REQUEST_BUDGET", "max_body_bytes": "NEENS_MAX_BODY_BYTES",
             "max_items": "NEENS_MAX_ITEMS"}


def answer_limits(environ: Mapping[str, str] | None = None) -> dict[str, float]:
    """``NEENS_REQUEST_BUDGET`` (seconds per request, body included), ``NEENS_MAX_BODY_BYTES``
    and ``NEENS_MAX_ITEMS``, when set; a bad value is a UsageError naming the variable."""
    env = os.environ if environ is None else environ
    limits: dict[str, float] = {}
    for attr, var in LIMIT_ENV.items():
        raw = env.get(var, "").strip()
        if not raw:
            continue
        try:
            value = float(raw) if attr == "request_budget" else int(raw)
        except ValueError:
            raise UsageError(f"{var} must be a number, got {raw[:40]!r}") from None
        problem = number_problem(value, positive=True)
        if problem:
            raise UsageError(f"{var} {problem}")
        limits[attr] = value
    return limits
