"""``neens report RESULT.json --format markdown|comment|text|junit``: re-render a saved result.

The JSON result (``--json``, the CI step's ``result-file``) carries the whole report, CI
context and links included, so this needs neither a CI environment nor a server:
``--format markdown`` prints the job summary byte for byte as the CI step wrote it,
``comment`` the PR/MR comment, ``text`` the console summary, ``junit`` the JUnit XML.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

import click

from neens_action.errors import EXIT_ERROR

FORMATS = ("markdown", "comment", "text", "junit")
PREVIEW_MARKER = "<!-- neens-eval-action preview -->"


@click.command("report")
@click.argument("result", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="markdown",
              show_default=True, help="Which surface to render.")
def report_command(result: Path, fmt: str) -> None:
    """Re-render a saved JSON result (preview the PR comment, rebuild the job summary)."""
    from neens_action.cli.report_doc import BadDocument, load

    def fail(reason: str) -> None:
        click.echo(f"neens: error: cannot read {result} as a Neens result: {reason}", err=True)
        sys.exit(EXIT_ERROR)

    try:
        report = load(result.read_text(encoding="utf-8"))
    except OSError as exc:
        fail(exc.strerror or str(exc))
    except UnicodeDecodeError:
        fail("it is not UTF-8 text")
    except BadDocument as exc:
        fail(str(exc))
    except (ValueError, TypeError) as exc:
        fail(" ".join(str(exc).split())[:200])
    try:
        text = render(report, fmt)
    except (ValueError, TypeError, AttributeError, KeyError, IndexError, RecursionError) as exc:
        # the shape was checked: a value the renderers still cannot take is one line too
        fail(f"{type(exc).__name__} while rendering it as {fmt}")
    sys.stdout.write(text)


def render(report: object, fmt: str) -> str:
    from neens_action.report.model import Report

    assert isinstance(report, Report)
    if fmt == "markdown":
        from neens_action.report.render.markdown import render_summary

        return render_summary(report)
    if fmt == "comment":
        from neens_action.report.render.markdown import render_comment

        return render_comment(report, marker=PREVIEW_MARKER)
    if fmt == "text":
        from neens_action.report.render.text import render as render_text

        return render_text(report).lstrip("\n") + "\n"
    from neens_action.report.render import junit

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "junit.xml"
        junit.write(report, str(path))
        return path.read_text(encoding="utf-8")
