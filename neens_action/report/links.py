"""Human links and CI context on a Report, attached once before anything is rendered.

Links are built only from configuration we trust: the ``ui-url`` template (``NEENS_UI_URL``,
e.g. ``https://app.example/runs/{run_id}``) for Neens pages, and the CI platform's own
variables for the job. The API path of a run is JSON, not a page, so without ``ui-url``
runs are not linked. The context is saved in the JSON result, so ``neens report``
re-renders the same links without a CI environment.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from neens_action.report.model import Report

_SAFE_ID = re.compile(r"^[A-Za-z0-9._:-]{1,128}$")
_HTTP = re.compile(r"^https?://[^\s<>()\"'`]+$")


def ui_link(template: str, run_id: str) -> str:
    """``template`` with ``{run_id}`` filled in, or "" (bad template, unsafe id)."""
    if not template or "{run_id}" not in template or not _SAFE_ID.match(run_id or ""):
        return ""
    url = template.replace("{run_id}", run_id)
    return url if _HTTP.match(url) else ""


def ci_context(environ: Mapping[str, str]) -> dict[str, str]:
    """Where the report was made: platform, job URL (and the run page holding the summary)."""
    env = {k: v.strip() for k, v in environ.items() if isinstance(v, str)}
    if env.get("GITHUB_ACTIONS") == "true":
        server = env.get("GITHUB_SERVER_URL", "https://github.com")
        repo, run_id = env.get("GITHUB_REPOSITORY", ""), env.get("GITHUB_RUN_ID", "")
        run = f"{server}/{repo}/actions/runs/{run_id}"
        return {"platform": "github", "job_url": run if _HTTP.match(run) else ""}
    if env.get("GITLAB_CI") or env.get("CI_JOB_URL"):
        url = env.get("CI_JOB_URL", "")
        return {"platform": "gitlab", "job_url": url if _HTTP.match(url) else ""}
    if env.get("JENKINS_URL") or env.get("BUILD_URL"):
        url = env.get("BUILD_URL", "")
        return {"platform": "jenkins", "job_url": url if _HTTP.match(url) else ""}
    return {"platform": "local", "job_url": ""}


def attach(report: Report, *, ui_url: str = "", environ: Mapping[str, str] | None = None,
           baseline_run_id: str = "") -> Report:
    """Fill ``run_url``, ``links`` and ``context`` (idempotent)."""
    template = (ui_url or (environ or {}).get("NEENS_UI_URL", "")).strip()
    report.run_url = ui_link(template, report.run_id) if report.kind != "sweep" else ""
    base = ui_link(template, baseline_run_id)
    if base:
        report.links["baseline"] = base
    if environ is not None:
        report.context = {k: v for k, v in ci_context(environ).items() if v}
        if report.context.get("job_url"):
            report.links.setdefault("summary", report.context["job_url"])
    return report
