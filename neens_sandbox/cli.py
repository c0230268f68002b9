"""``neens sandbox serve`` / ``python -m neens_sandbox serve``: run the local Neens server until
SIGINT/SIGTERM (exit 0).

The sandbox is its own package: this module is its whole command line. ``neens sandbox ...``
(the ``neens`` CLI of ``neens_action``) loads :data:`sandbox_group` lazily by name, and
``python -m neens_sandbox ...`` runs :func:`main`; both print the same lines. Bad input is ONE
line on stderr (``neens: error: ...``) and exit 2; an interrupt before serving is exit 130.
"""

from __future__ import annotations

import gc
import importlib.util
import signal
import sys
import threading
from pathlib import Path

import click

# The OTLP receiver decodes protobuf with the official generated messages (the ``sandbox``
# extra). Checked here, when the command line loads, so a missing dependency is reported
# before anything runs instead of as a failure of the first /v1/traces request.
if importlib.util.find_spec("opentelemetry.proto") is None:
    raise ModuleNotFoundError("opentelemetry-proto is not installed", name="opentelemetry.proto")

PROG = "neens sandbox"
CONTEXT = {"help_option_names": ["-h", "--help"], "max_content_width": 100}
EXIT_ERROR = 2
EXIT_INTERRUPTED = 130


class ServeError(click.ClickException):
    """Bad input or an environment problem the user can fix: one line, exit 2."""

    exit_code = EXIT_ERROR

    def __init__(self, message: str) -> None:
        super().__init__(" ".join(message.split()))


CHAOS_KINDS = ("500", "429", "drop", "stall")


@click.group("sandbox", context_settings=CONTEXT)
def sandbox_group() -> None:
    """The local Neens sandbox (a Neens-compatible server for tests and demos)."""


def _parse_kinds(text: str) -> tuple[str, ...]:
    kinds = tuple(k.strip() for k in text.split(",") if k.strip())
    bad = [k for k in kinds if k not in CHAOS_KINDS]
    if bad or not kinds:
        raise ServeError(f"--chaos-kinds: expected a list of {', '.join(CHAOS_KINDS)}")
    return kinds


@sandbox_group.command("serve")
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to bind.")
@click.option("--port", type=click.IntRange(0, 65535), default=8787, show_default=True,
              help="Port (0 picks a free one; the line printed on start names it).")
@click.option("--db", "db_path", required=True, type=click.Path(dir_okay=False),
              help="SQLite file holding all state (created if missing; kept across restarts).")
@click.option("--seed", "seed_path", required=True, type=click.Path(dir_okay=False),
              help="YAML seed: keys, pricing, judges, datasets, connections, gates, production.")
@click.option("--api-key", envvar="NEENS_SANDBOX_API_KEY", default=None,
              help="Extra accepted API key (besides the seed's api_keys). Never printed whole.")
@click.option("--grace", type=click.FloatRange(0, 3600), default=3.0, show_default=True,
              help="Seconds after /start (+ score delay) to wait for missing traces.")
@click.option("--score-delay", type=click.FloatRange(0, 3600), default=0.0, show_default=True,
              help="Scoring takes this long after /start (as LLM judges do).")
@click.option("--chaos", type=click.FloatRange(0, 1), default=0.0, show_default=True,
              help="Fraction of API requests (never /v1/traces) that get an injected fault.")
@click.option("--chaos-seed", type=int, default=None, help="Seed for the chaos RNG.")
@click.option("--chaos-kinds", default=",".join(CHAOS_KINDS), show_default=True,
              help="Faults to pick from: 500, 429, drop, stall.")
@click.option("--push-async", is_flag=True, default=False,
              help="POST /run answers 'running' and calls the agent in the background.")
@click.option("--finish-on-ingest", is_flag=True, default=False,
              help="Inline queue: a run whose every item was captured finishes without "
                   "/start (a later /start answers 409).")
def serve_command(
    host: str, port: int, db_path: str, seed_path: str, api_key: str | None, grace: float,
    score_delay: float, chaos: float, chaos_seed: int | None, chaos_kinds: str,
    push_async: bool, finish_on_ingest: bool,
) -> int:
    """Serve the Neens API (and the OTLP receiver at /v1/traces, /v1/logs, /v1/metrics) from a
    SQLite file."""
    from neens_sandbox.app import build_server
    from neens_sandbox.context import Context, Options
    from neens_sandbox.db import Database
    from neens_sandbox.seed import SeedError, apply_seed, load_seed

    kinds = _parse_kinds(chaos_kinds)
    try:
        seed = load_seed(seed_path)
    except SeedError as exc:
        raise ServeError(str(exc)) from None
    keys = list(seed.api_keys)
    if api_key is not None:
        if not api_key.strip():
            raise ServeError("--api-key is empty")
        keys.insert(0, api_key.strip())
    if not keys:
        raise ServeError("no API key: pass --api-key or list api_keys in the seed file")
    if Path(db_path).parent and not Path(db_path).parent.exists():
        raise ServeError(f"--db: directory {Path(db_path).parent} does not exist")
    options = Options(grace=grace, score_delay=score_delay, push_async=push_async,
                      chaos=chaos, chaos_seed=chaos_seed, chaos_kinds=kinds,
                      finish_on_ingest=finish_on_ingest)
    try:
        db = Database.open(db_path)
    except Exception as exc:
        raise ServeError(f"cannot open database {db_path}: {exc}") from None
    ctx = Context(db=db, options=options, api_keys=set(keys))
    try:
        from neens_sandbox.app import load_routes

        load_routes()  # registers every table before seeding
        db.ensure_schema()
        apply_seed(db, seed)
        server = build_server(ctx, host, port)
    except OSError as exc:
        db.close()
        raise ServeError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None
    except Exception as exc:
        db.close()
        raise ServeError(f"cannot start the sandbox: {type(exc).__name__}: {exc}") from None
    # The server keeps large acyclic structures (decoded items of the runs being polled, a
    # terminal run's figures): with the default thresholds every 700 allocations start a
    # collection and the full ones walk all of it (a 10,000-item /start: 0.1-0.25 s more,
    # varying). The seed's objects are frozen out of the walk and collections come rarer.
    gc.freeze()
    gc.set_threshold(50_000, 50, 50)
    stop = threading.Event()

    def on_signal(signum: int, frame: object) -> None:
        stop.set()

    # Before the "listening" line: a signal sent as soon as it is read stops cleanly (exit 0).
    signal.signal(signal.SIGINT, on_signal)
    signal.signal(signal.SIGTERM, on_signal)
    bound_host, bound_port = server.server_address[:2]
    shown = keys[0][:8] + "…"
    print(f"sandbox listening on http://{bound_host}:{bound_port} (api key: {shown})", flush=True)
    ctx.log(f"db={db_path} seed={seed_path} grace={grace}s score-delay={score_delay}s "
            f"chaos={chaos} push={'async' if push_async else 'inline'}")
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.2},
                              daemon=True, name="sandbox-http")
    thread.start()
    while not stop.wait(0.5):
        if not thread.is_alive():
            break
    ctx.log("shutting down")
    server.shutdown()
    server.server_close()
    db.close()
    sys.stdout.flush()
    return 0


def main(argv: list[str] | None = None) -> int:
    """Run the sandbox command line; map every outcome to an exit code (0, 2 or 130)."""
    try:
        result = sandbox_group.main(args=argv, prog_name=PROG, standalone_mode=False)
    except click.exceptions.Exit as exc:  # --help
        return int(exc.exit_code)
    except (click.exceptions.Abort, KeyboardInterrupt):
        click.echo("neens: interrupted", err=True)
        return EXIT_INTERRUPTED
    except click.ClickException as exc:  # bad flags (click) or ServeError
        ctx = getattr(exc, "ctx", None)
        hint = f" (see '{ctx.command_path} --help')" if ctx is not None else ""
        click.echo(f"neens: error: {exc.format_message()}{hint}", err=True)
        return EXIT_ERROR
    return int(result or 0)
