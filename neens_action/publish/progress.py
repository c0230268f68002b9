"""The sticky PR/MR comment while a run is going: posted once the items are known, before
the first agent starts, and edited into the verdict at the end (the same marker)."""

from __future__ import annotations

from datetime import datetime

from neens_action import __version__
from neens_action.text import md_code, md_link


def progress_body(marker: str, *, items: int, dataset: str, started: datetime,
                  job_url: str | None) -> str:
    """``⏳ Neens eval running: 3 items against `ds_refunds`…, started 2026-12-02 15:58 UTC``,
    with the job link when there is one."""
    what = f"{items} item{'s' if items != 1 else ''}"
    against = f" against {md_code(dataset, 80)}" if dataset else ""
    line = (f"⏳ **Neens eval running**: {what}{against}…, started "
            f"{started:%Y-%m-%d %H:%M} UTC")
    if job_url:
        line += f" · {md_link('follow it in the CI job', job_url)}"
    return (f"{marker}\n\n{line}\n\n<sub>neens-action {__version__} · the verdict replaces "
            "this comment when the run ends</sub>\n")
