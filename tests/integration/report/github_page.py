"""Markdown rendered the way GitHub shows a PR comment, measured in a real browser.

cmark-gfm with GitHub's extensions makes the HTML; it goes into a page styled like GitHub's
comment body (a 900 px column, GitHub's font stack, its table rules: ``display: block;
width: max-content; max-width: 100%; overflow: auto``, cells padded 6px 13px with borders,
14 px text). Headless Chromium lays the page out and a script in the page writes what it
measured into the DOM, which ``--dump-dom`` hands back.
"""

from __future__ import annotations

import html
import json
import re
import shutil
import subprocess
from pathlib import Path

import cmarkgfm
from cmarkgfm.cmark import Options

COLUMN_PX = 900
INSTALL = "apt-get install -y chromium"
CSS = """
body { margin: 0; padding: 16px; background: #fff; }
.markdown-body { width: 900px; box-sizing: border-box; color: #1f2328;
  font-family: -apple-system, BlinkMacSystemFont, "Segoe UI", "Noto Sans", Helvetica, Arial,
    sans-serif, "Apple Color Emoji", "Segoe UI Emoji";
  font-size: 14px; line-height: 1.5; word-wrap: break-word; margin-bottom: 32px; }
.markdown-body table { border-spacing: 0; border-collapse: collapse; display: block;
  width: max-content; max-width: 100%; overflow: auto; margin-top: 0; margin-bottom: 16px; }
.markdown-body table th { font-weight: 600; }
.markdown-body table th, .markdown-body table td { padding: 6px 13px;
  border: 1px solid #d1d9e0; }
.markdown-body table tr { background-color: #fff; border-top: 1px solid #d1d9e0b3; }
.markdown-body table tr:nth-child(2n) { background-color: #f6f8fa; }
.markdown-body code { padding: .2em .4em; margin: 0; font-size: 85%; white-space: break-spaces;
  background-color: #818b981f; border-radius: 6px;
  font-family: ui-monospace, SFMono-Regular, "SF Mono", Menlo, Consolas, "Liberation Mono",
    monospace; }
.markdown-body h3, .markdown-body h4 { margin-top: 24px; margin-bottom: 16px;
  font-weight: 600; line-height: 1.25; }
.markdown-body blockquote { margin: 0 0 16px; padding: 0 1em; color: #59636e;
  border-left: .25em solid #d1d9e0; }
.markdown-body p, .markdown-body ul, .markdown-body details { margin-top: 0;
  margin-bottom: 16px; }
"""
# Per comment: each table's scrollWidth and clientWidth, the text outside code spans, the
# text of the code spans, every link target, and the comment's height.
SCRIPT = """
const out = [];
for (const body of document.querySelectorAll('.markdown-body')) {
  const tables = [...body.querySelectorAll('table')].map(
    t => ({scroll: t.scrollWidth, client: t.clientWidth}));
  const copy = body.cloneNode(true);
  const code = [...copy.querySelectorAll('code, pre')].map(c => c.textContent);
  copy.querySelectorAll('code, pre').forEach(c => c.remove());
  out.push({name: body.dataset.name, tables, text: copy.textContent, code,
            links: [...body.querySelectorAll('a')].map(a => a.getAttribute('href') || ''),
            height: body.getBoundingClientRect().bottom});
}
const pre = document.createElement('pre');
pre.id = 'neens-measure';
pre.textContent = JSON.stringify(out);
document.body.appendChild(pre);
"""


def chromium() -> str:
    """The Chromium binary; a clear failure (never a skip) when it is missing."""
    for name in ("chromium", "chromium-browser", "google-chrome"):
        found = shutil.which(name)
        if found:
            return found
    raise AssertionError(f"Chromium is needed to measure the rendered comments: {INSTALL} "
                         "(scripts/test installs it in CI)")


def to_html(markdown: str) -> str:
    """GitHub's renderer: cmark-gfm with its extensions; raw HTML kept (GitHub keeps
    ``details``, ``summary``, ``sub`` and ``br``; our untrusted text is escaped anyway)."""
    return cmarkgfm.github_flavored_markdown_to_html(markdown, options=Options.CMARK_OPT_UNSAFE)


def page(comments: dict[str, str], *, measure: bool = True) -> str:
    bodies = "".join(f'<div class="markdown-body" data-name="{html.escape(name)}">'
                     f"{to_html(text)}</div>" for name, text in comments.items())
    script = f"<script>{SCRIPT}</script>" if measure else ""
    return (f'<!doctype html><html><head><meta charset="utf-8"><style>{CSS}</style></head>'
            f"<body>{bodies}{script}</body></html>")


def _run(args: list[str], timeout: float) -> str:
    done = subprocess.run([chromium(), "--headless=new", "--no-sandbox", "--disable-gpu",
                           "--hide-scrollbars", *args], capture_output=True, text=True,
                          timeout=timeout, check=False)
    if done.returncode != 0:
        raise AssertionError(f"chromium failed ({done.returncode}): {done.stderr[-2000:]}")
    return done.stdout


def measure(comments: dict[str, str], work: Path, timeout: float = 60) -> list[dict]:
    """What the browser measured, one entry per comment (in order)."""
    path = (work / "comments.html").resolve()
    path.write_text(page(comments), encoding="utf-8")
    dom = _run([f"--window-size={COLUMN_PX + 100},2000", "--dump-dom", path.as_uri()], timeout)
    found = re.search(r'<pre id="neens-measure">(.*?)</pre>', dom, re.S)
    assert found, "the measuring script did not run"
    return json.loads(html.unescape(found.group(1)))


def screenshot(markdown: str, png: Path, timeout: float = 60) -> None:
    """A PNG of one comment as GitHub lays it out (as tall as the comment)."""
    png = png.resolve()
    work = png.with_suffix(".html")
    height = int(measure({png.stem: markdown}, png.parent, timeout)[0]["height"]) + 32
    work.write_text(page({png.stem: markdown}, measure=False), encoding="utf-8")
    _run([f"--window-size={COLUMN_PX + 32},{height}", f"--screenshot={png}", work.as_uri()],
         timeout)
    work.unlink()
