"""``neens doctor``: one line per check, with the fix for each failure; exit 0 only if all pass."""

from __future__ import annotations

import click

from neens_action.world import World


@click.command("doctor", context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--base-url", envvar="NEENS_BASE_URL", default="", help="Neens API origin "
              "(env NEENS_BASE_URL).")
@click.option("--api-key", envvar="NEENS_API_KEY", default="", help="nk_live_... project key "
              "(env NEENS_API_KEY).")
@click.option("--project-id", envvar="NEENS_PROJECT_ID", default="", help="X-Neens-Project-Id.")
def doctor_command(base_url: str, api_key: str, project_id: str) -> int:
    """Check the base URL, the key and the agents' OTLP settings before a run."""
    from neens_action.doctor import run_checks
    from neens_action.settings.connection import Connection, make_client

    world = World()
    base_url = base_url.strip().rstrip("/")
    conn = Connection(base_url=base_url, api_key=api_key or None,
                      project_id=project_id or None, request_timeout=10.0, retries=1)
    client = make_client(conn, require_key=False) if base_url else None
    world.log(f"neens doctor: {base_url or '(no base URL)'}")
    checks = run_checks(client, base_url, api_key or None, world.environ)
    for check in checks:
        world.log(check.line())
    failed = sum(not c.ok for c in checks)
    world.log(f"{len(checks) - failed}/{len(checks)} checks passed")
    return 0 if failed == 0 else 2
