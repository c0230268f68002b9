"""Human links and CI context on a Report, attached once before anything is rendered.

Links are built only from configuration we trust: the ``ui-url`` template (input ``ui-url``,
flag ``--ui-url``, variable ``NEENS_UI_URL``) for Neens pages, and the CI platform's own
variables for the job. The API path of a run is JSON, not a page, so without ``ui-url``
runs are not linked. The context is saved in the JSON result, so ``neens report``
re-renders the same links without a CI environment.

Template variables (see docs/internals.md, "Report links"):

- ``{run_id}`` (required): the run's id, e.g. ``https://app.example/runs/{run_id}``; also
  links the baseline run.
- ``{item_id}`` (optional): the item's id, in the query or the fragment, e.g.
  ``https://app.example/runs/{run_id}?item={item_id}`` or ``…/runs/{run_id}#{item_id}``.
  Each failing item then links to its page; the run link is the template without the part
  holding ``{item_id}``.

Ids are filled in only when they are plain (letters, digits, ``._:-``), so untrusted text
never shapes a link target.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from typing import TYPE_CHECKING
from urllib.parse import quote

from neens_action.errors import UsageError

if TYPE_CHECKING:  # the settings check ui-url before a run: the report types come later
    from neens_action.ci.platforms import Platform
    from neens_action.report.model import ItemVerdict, Report

RUN_ID = "{run_id}"
ITEM_ID = "{item_id}"
EXAMPLE = "https://app.example/runs/{run_id}"
_SAFE_ID = re.compile(r"^[A-Za-z0-9._:-]{1,128}$")
_HTTP = re.compile(r"^https?://[^\s<>()\"'`]+$")
_PLACEHOLDER = re.compile(r"\{[^{}]*\}")


def _run_template(template: str) -> str | None:
    """The run page's template: ``template`` without the query parameter or fragment that
    holds ``{item_id}`` (None when ``{item_id}`` is in the path: no run page can be cut)."""
    at = template.find(ITEM_ID)
    if at < 0:
        return template
    hash_at = template.find("#")
    if 0 <= hash_at < at:
        return template[:hash_at]
    query_at = template.find("?")
    if query_at < 0 or query_at > at:
        return None
    end = hash_at if hash_at > at else len(template)
    params = [p for p in template[query_at + 1:end].split("&") if ITEM_ID not in p]
    return template[:query_at] + ("?" + "&".join(params) if params else "") + template[end:]


def check_ui_url(template: str | None, flag: str = "--ui-url") -> str:
    """The ``ui-url`` template, checked ("" when not set); a UsageError says what to fix."""
    t = (template or "").strip()
    if not t:
        return ""
    unknown = sorted(set(_PLACEHOLDER.findall(t)) - {RUN_ID, ITEM_ID})
    if unknown:
        raise UsageError(f"{flag} knows the variables {RUN_ID} and {ITEM_ID}, "
                         f"not {', '.join(unknown)[:60]}")
    if RUN_ID not in t:
        raise UsageError(f"{flag} must contain {RUN_ID}, e.g. {EXAMPLE}")
    if not _HTTP.match(t.replace(RUN_ID, "r").replace(ITEM_ID, "i")):
        raise UsageError(f"{flag} must be an http(s) URL template such as {EXAMPLE}, "
                         f"got {t[:80]!r}")
    run = _run_template(t)
    if run is None or RUN_ID not in run:
        raise UsageError(f"{flag}: put {ITEM_ID} in the query or the fragment, e.g. "
                         f"{EXAMPLE}?item={ITEM_ID}")
    return t


def _fill(template: str, **ids: str) -> str:
    for name, value in ids.items():
        if not _SAFE_ID.match(value or ""):
            return ""
        template = template.replace("{" + name + "}", quote(value, safe=":"))
    return template if _HTTP.match(template) and "{" not in template else ""


def ui_link(template: str, run_id: str) -> str:
    """The run page from ``template``, or "" (no or bad template, unsafe id)."""
    try:
        run = _run_template(check_ui_url(template))
    except UsageError:
        return ""
    return _fill(run, run_id=run_id) if run else ""


def item_link(template: str, run_id: str, item_id: str) -> str:
    """The item page from ``template`` (only when it has ``{item_id}``), or ""."""
    try:
        t = check_ui_url(template)
    except UsageError:
        return ""
    return _fill(t, run_id=run_id, item_id=item_id) if ITEM_ID in t else ""


def ci_context(environ: Mapping[str, str], platform: Platform | None = None) -> dict[str, str]:
    """Where the report was made: the platform (:mod:`neens_action.ci.platforms`; detected from
    ``environ`` when not given) and the URL of its job (the page holding the summary)."""
    if platform is None:
        from neens_action.ci import platforms

        platform = platforms.detect(environ)
    env = {k: v for k, v in environ.items() if isinstance(v, str)}
    url = platform.job_url(env)
    return {"platform": platform.context_name, "job_url": url if _HTTP.match(url) else ""}


def _linked(template: str, run_id: str, item: ItemVerdict) -> ItemVerdict:
    item.link = item_link(template, run_id, item.item_id)
    return item


def attach(report: Report, *, ui_url: str = "", environ: Mapping[str, str] | None = None,
           baseline_run_id: str = "", platform: Platform | None = None) -> Report:
    """Fill ``run_url``, item links, ``links`` and ``context`` (idempotent). ``ui_url`` (the
    setting) wins over ``NEENS_UI_URL`` in ``environ``; ``platform`` is the one the world
    resolved (detected from ``environ`` when not given)."""
    from neens_action.spill import Spill

    template = (ui_url or (environ or {}).get("NEENS_UI_URL", "")).strip()
    if report.kind != "sweep":
        report.run_url = ui_link(template, report.run_id)
        if ITEM_ID in template and report.run_id:
            if isinstance(report.items, Spill):  # spilled: linked as each is read back
                report.items.view = functools.partial(_linked, template, report.run_id)
            else:
                for item in report.items:
                    item.link = item_link(template, report.run_id, item.item_id)
    base = ui_link(template, baseline_run_id)
    if base:
        report.links["baseline"] = base
    if environ is not None:
        report.context = {k: v for k, v in ci_context(environ, platform).items() if v}
        if report.context.get("job_url"):
            report.links.setdefault("summary", report.context["job_url"])
    return report
