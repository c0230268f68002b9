"""Publishers: what the CI front door does with a finished Report on each platform.

Each is built from a :class:`PublishConfig` alone and has ``publish(report, outcome,
result_json) -> dict[str, str]`` (the CI outputs), as ``pipeline.execute`` calls it; each
platform's entry in :mod:`neens_action.ci.platforms` names its publisher. A publisher never
changes the exit code: a step that fails (a file that cannot be written, an API that
refuses) becomes a notice or a warning line.

- :class:`FilesPublisher` (every platform): the JSON result and the Markdown summary as files
  in the workspace (artifacts), failing agents' output echoed to the log.
- :class:`GitHubPublisher`: + job summary, annotations, sticky PR comment, ``$GITHUB_OUTPUT``.
- :class:`GitLabPublisher`: + sticky MR note and the dotenv report.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from neens_action.outcome import Invocation, Outcome
from neens_action.publish.actions import Commands, summary_room, write_outputs, write_summary
from neens_action.publish.progress import StickyProgress, sticky_key
from neens_action.redact import redact
from neens_action.report.model import Report
from neens_action.report.render.markdown import SUMMARY_LIMIT_BYTES, render_comment, render_summary
from neens_action.spill import Filtered, Spill
from neens_action.text import scrub_text

ECHO_INVOCATIONS = 10  # failing agents whose output is echoed
ECHO_CHARS = 16 * 1024  # tail of each one's output


@dataclass
class PublishConfig:
    """Everything a publisher needs besides the report (built once by the CI front door)."""

    environ: Mapping[str, str] = field(repr=False)  # the job's: secrets in it
    workspace: Path
    mode: str = "run"
    result_file: Path | None = None
    summary_file: Path | None = None
    dotenv_file: Path | None = None
    summary: bool = True
    comment: str = "update"  # update | new | off
    comment_author: str = ""  # the login our PR comments are written as ("" = ask the token)
    matrix_key: str = ""
    commit: str = ""  # the short commit the job is for (named by the running comment)
    token: str = field(default="", repr=False)  # the platform's API token (its table entry)
    commands: Commands | None = None  # workflow commands (GitHub), shielded by the front door
    timeout: float = 20.0
    log: Callable[[str], None] = field(default=print, repr=False)


def write_file(path: Path, text: str | Iterable[str]) -> Path:
    """Atomic write, mode 0644 (a later CI step may run as another user). ``text`` may come
    in pieces (each redacted on its own: a piece ends between two JSON values)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            for piece in [text] if isinstance(text, str) else text:
                fh.write(redact(scrub_text(piece)))
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def result_text(result_json: Any) -> str:
    return "".join(result_pieces(result_json))


def result_pieces(result_json: Any) -> Iterator[str]:
    """The result file's text, in pieces (a document's spilled item lists streamed)."""
    if isinstance(result_json, str):
        yield result_json if result_json.endswith("\n") else result_json + "\n"
        return
    from neens_action.report.render.json import chunks

    yield from chunks(result_json, allow_nan=True)
    yield "\n"


def base_outputs(report: Report) -> dict[str, str]:
    outputs = {
        "exit-code": str(report.exit_code),
        "verdict": report.verdict,
        "run-id": report.run_id,
        "pass-rate": "",
        "regressions": "",
    }
    outputs.update({k: "" if v is None else str(v) for k, v in report.outputs.items()})
    return outputs


def failing_invocations(outcome: Outcome | None) -> Sequence[Invocation]:
    """The invocations that did not succeed (of spilled ones, a view read from disk)."""
    if outcome is None:
        return []
    invocations = getattr(outcome, "invocations", [])
    if isinstance(invocations, Spill):
        return Filtered(invocations, _failed)
    return [inv for inv in invocations if not inv.ok]


def _failed(inv: Invocation) -> bool:
    return not inv.ok


class FilesPublisher(StickyProgress):
    """Artifacts in the workspace + agent output in the log (Jenkins and any other CI)."""

    def __init__(self, config: PublishConfig) -> None:
        self.config = config

    def log(self, line: str) -> None:
        self.config.log(line)

    def relative(self, path: Path) -> str:
        try:
            return str(path.resolve().relative_to(self.config.workspace.resolve()))
        except ValueError:
            return str(path)

    def write_artifacts(self, report: Report, result_json: Any) -> dict[str, str]:
        outputs: dict[str, str] = {"result-json": ""}
        cfg = self.config
        if cfg.result_file is not None and result_json is not None:
            try:
                write_file(cfg.result_file, result_pieces(result_json))
                outputs["result-json"] = self.relative(cfg.result_file)
            except OSError as exc:
                self.log(f"neens: warning: could not write {cfg.result_file}: {exc.strerror}")
        if cfg.summary_file is not None:
            try:
                write_file(cfg.summary_file, render_summary(report))
            except OSError as exc:
                self.log(f"neens: warning: could not write {cfg.summary_file}: {exc.strerror}")
        return outputs

    def echo_agents(self, outcome: Outcome | None, printer: Callable[[str], None]) -> None:
        failing = failing_invocations(outcome)
        for inv in failing[:ECHO_INVOCATIONS]:
            printer(f"--- agent output, item {inv.item_id} ({inv.error or inv.returncode}) ---")
            text = inv.output[-ECHO_CHARS:] if inv.output else "(no output)"
            printer(text)
        if len(failing) > ECHO_INVOCATIONS:
            printer(f"--- {len(failing) - ECHO_INVOCATIONS} more failing item(s) not shown ---")

    def sticky(self, report: Report) -> str:
        """Post ``report`` as the sticky PR/MR comment; its URL ("" where there is none)."""
        return ""

    def publish(self, report: Report, outcome: Outcome | None, result_json: Any) -> dict[str, str]:
        outputs = base_outputs(report)
        outputs.update(self.write_artifacts(report, result_json))
        if failing_invocations(outcome):
            self.echo_agents(outcome, self.log)
        return outputs


class GitHubPublisher(FilesPublisher):
    """Job summary, annotations, sticky PR comment and step outputs on GitHub Actions."""

    def __init__(self, config: PublishConfig, commands: Commands | None = None) -> None:
        super().__init__(config)
        commands = commands or config.commands
        if commands is None:
            raise ValueError("GitHubPublisher needs the front door's workflow commands")
        self.commands = commands

    def annotate(self, report: Report) -> None:
        c = self.commands
        if report.verdict == "errored":
            c.error(report.error or report.headline, title="Neens eval errored")
        elif report.exit_code == 1:
            c.error(report.headline, title="Neens gate blocked the build")
            if report.gate_passed is False:  # a passing server gate's reasons are not errors
                for reason in report.reasons:
                    c.error(reason, title="Neens gate")
            for line in report.policy:
                if line.status == "fail" and line.severity == "block":
                    c.error(f"{line.label}: {line.reason}", title="Neens policy")
        for warning in report.warnings:
            c.warning(warning, title="Neens")
        for line in report.policy:
            if line.status == "warn" or (line.status == "fail" and line.severity == "warn"):
                c.warning(f"{line.label}: {line.reason}", title="Neens policy (warn)")

    def echo(self, outcome: Outcome | None) -> None:
        failing = failing_invocations(outcome)
        if not failing:
            return
        title = f"Agent output of {len(failing)} failing item(s)"
        with self.commands.group(title), self.commands.stopped():
            self.echo_agents(outcome, self.log)

    def step_summary(self, report: Report) -> None:
        path = self.config.environ.get("GITHUB_STEP_SUMMARY", "")
        if not (self.config.summary and path):
            return
        room = summary_room(path, SUMMARY_LIMIT_BYTES)
        if room < 1024:
            self.commands.warning("the job summary is full: the Neens summary was not added")
            return
        try:
            write_summary(path, render_summary(report, limit=room))
        except OSError as exc:
            self.commands.warning(f"could not write the job summary: {exc.strerror}")

    def comment(self, report: Report) -> str:
        if self.config.comment == "off" or self.step_note(report):
            return ""
        from neens_action.publish.github import GitHubContext, marker, post_sticky_comment

        ctx = GitHubContext.from_env(self.config.environ)
        job, kind = sticky_key(ctx.job, self.config.mode)
        mark = marker(workflow=ctx.workflow, job=job, mode=kind, leg=self.config.matrix_key)
        body = self.headed(report, render_comment(report, marker=mark,
                                                  details_url=ctx.details_url))
        result = post_sticky_comment(ctx, token=self.config.token, body=body, mark=mark,
                                     mode=self.config.comment, timeout=self.config.timeout,
                                     author=self.config.comment_author)
        self.concluded = self.concluded or result.action != "skipped"
        for notice in result.notices:
            self.commands.notice(notice, title="Neens PR comment")
        for line in result.info:
            self.log(f"neens: {line}")
        return result.url

    sticky = comment

    def post_note(self, body: Callable[[str, str | None], str], mode: str) -> bool:
        from neens_action.publish.github import GitHubContext, marker, post_sticky_comment

        ctx = GitHubContext.from_env(self.config.environ)
        job, kind = sticky_key(ctx.job, self.config.mode)
        mark = marker(workflow=ctx.workflow, job=job, mode=kind, leg=self.config.matrix_key)
        result = post_sticky_comment(ctx, token=self.config.token, body=body(mark,
                                     ctx.details_url), mark=mark, mode=mode,
                                     timeout=self.config.timeout,
                                     author=self.config.comment_author)
        return result.action != "skipped"

    def _step(self, what: str, step: Callable[[], object]) -> None:
        """One publishing step; a failure is a warning and the next step still runs."""
        try:
            step()
        except Exception as exc:  # any text from the server must not stop the rest
            self.commands.warning(f"could not {what}: {type(exc).__name__}: {exc}")

    def _write_outputs(self, outputs: Mapping[str, str]) -> None:
        path = self.config.environ.get("GITHUB_OUTPUT", "")
        if not path:
            return
        for name, value in outputs.items():  # each on its own: one bad value loses only itself
            try:
                write_outputs(path, {name: value})
            except (OSError, ValueError) as exc:
                why = exc.strerror if isinstance(exc, OSError) else str(exc)
                self.commands.warning(f"could not write the step output {name}: {why}")

    def publish(self, report: Report, outcome: Outcome | None, result_json: Any) -> dict[str, str]:
        # $GITHUB_OUTPUT first: whatever happens later, `if: always()` steps read the verdict
        outputs = base_outputs(report)
        self._write_outputs(outputs)
        late: dict[str, str] = {}

        def artifacts() -> None:
            late.update(self.write_artifacts(report, result_json))

        def comment() -> None:
            late["comment-url"] = self.comment(report)

        self._step("write the artifacts", artifacts)
        self._step("echo the agents' output", lambda: self.echo(outcome))
        self._step("annotate", lambda: self.annotate(report))
        self._step("write the job summary", lambda: self.step_summary(report))
        self._step("post the PR comment", comment)
        late.setdefault("result-json", "")
        late.setdefault("comment-url", "")
        self._write_outputs(late)
        outputs.update(late)
        return outputs


class GitLabPublisher(FilesPublisher):
    """Sticky MR note and the dotenv report on GitLab CI (JUnit is the pipeline's)."""

    def echo(self, outcome: Outcome | None) -> None:
        failing = failing_invocations(outcome)
        if not failing:
            return
        # A collapsed log section; the payload itself is printed as is (GitLab runs no
        # commands from job output).
        self.log("\x1b[0Ksection_start:0:neens_agents[collapsed=true]\r\x1b[0K"
                 f"Agent output of {len(failing)} failing item(s)")
        self.echo_agents(outcome, self.log)
        self.log("\x1b[0Ksection_end:0:neens_agents\r\x1b[0K")

    def note(self, report: Report) -> str:
        if self.config.comment == "off" or self.step_note(report):
            return ""
        from neens_action.publish.gitlab import (
            GitLabContext,
            artifact_url,
            marker,
            post_sticky_note,
        )

        ctx = GitLabContext.from_env(self.config.environ)
        job, kind = sticky_key(ctx.job_name, self.config.mode)
        mark = marker(job=job, mode=kind, leg=self.config.matrix_key)
        # on GitLab the full summary is an artifact of the job, not part of its log
        artifact = artifact_url(ctx.job_url, self.config.workspace, self.config.summary_file)
        if artifact:
            report.links["summary"] = artifact
        body = self.headed(report, render_comment(
            report, marker=mark, details_url=artifact or ctx.job_url or None))
        result = post_sticky_note(ctx, token=self.config.token, body=body, mark=mark,
                                  mode=self.config.comment, timeout=self.config.timeout)
        self.concluded = self.concluded or result.action != "skipped"
        for notice in result.notices:
            self.log(f"neens: notice: {notice}")
        return result.url

    sticky = note

    def post_note(self, body: Callable[[str, str | None], str], mode: str) -> bool:
        from neens_action.publish.gitlab import GitLabContext, marker, post_sticky_note

        ctx = GitLabContext.from_env(self.config.environ)
        job, kind = sticky_key(ctx.job_name, self.config.mode)
        mark = marker(job=job, mode=kind, leg=self.config.matrix_key)
        result = post_sticky_note(ctx, token=self.config.token,
                                  body=body(mark, ctx.job_url or None), mark=mark, mode=mode,
                                  timeout=self.config.timeout)
        return result.action != "skipped"

    def publish(self, report: Report, outcome: Outcome | None, result_json: Any) -> dict[str, str]:
        from neens_action.publish.gitlab import write_dotenv

        outputs = base_outputs(report)
        outputs.update(self.write_artifacts(report, result_json))
        self.echo(outcome)
        outputs["comment-url"] = self.note(report)
        if self.config.dotenv_file is not None:
            values = {
                "NEENS_VERDICT": outputs["verdict"],
                "NEENS_EXIT_CODE": outputs["exit-code"],
                "NEENS_RUN_ID": outputs["run-id"],
                "NEENS_PASS_RATE": outputs["pass-rate"],
                "NEENS_REGRESSIONS": outputs["regressions"],
            }
            for key, name in (("NEENS_SWEEP_ID", "sweep-id"), ("NEENS_WINNER", "winner"),
                              ("NEENS_SUITE_ID", "suite-id")):
                if name in outputs:  # mode sweep / stress outputs
                    values[key] = outputs[name]
            try:
                write_dotenv(self.config.dotenv_file, values)
            except OSError as exc:
                self.log(f"neens: warning: could not write {self.config.dotenv_file}: "
                         f"{exc.strerror}")
        return outputs
