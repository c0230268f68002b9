"""Secrets are redacted by every writer (neens_action/redact.py), in every usual spelling."""

from __future__ import annotations

import base64
import io
import json
from pathlib import Path
from urllib.parse import quote

import pytest

from neens_action import redact
from neens_action.publish.actions import (
    Commands,
    GuardedStream,
    JsonStream,
    write_outputs,
    write_summary,
)
from neens_action.publish.gitlab import write_dotenv
from neens_action.publish.publishers import write_file

KEY = "nk_live_s3cr3t/key+with=odd&chars"
TOKEN = "ghs_abcdefghijklmnop1234"


@pytest.fixture(autouse=True)
def registered():
    redact.clear()
    redact.register_environ({"NEENS_API_KEY": KEY, "GITHUB_TOKEN": TOKEN, "CI": "true"})
    yield
    redact.clear()


def spellings(secret: str) -> list[str]:
    raw = secret.encode()
    return [secret, quote(secret, safe=""), base64.b64encode(raw).decode(),
            base64.urlsafe_b64encode(raw).decode().rstrip("=")]


def leak() -> str:
    return "\n".join(f"Authorization: Bearer {s} and {t}"
                     for s, t in zip(spellings(KEY), spellings(TOKEN), strict=True))


def _clean(text: str) -> None:
    for secret in (KEY, TOKEN):
        for form in spellings(secret):
            assert form not in text, form


def test_redact_every_spelling() -> None:
    out = redact.redact(leak())
    _clean(out)
    assert out.count(redact.MASK) == 8
    assert redact.redact("true CI ordinary") == "true CI ordinary"  # short values are not secrets


def test_every_writer_redacts(tmp_path: Path) -> None:
    write_file(tmp_path / "result.json", json.dumps({"output": leak()}))
    write_summary(tmp_path / "summary.md", leak())
    write_outputs(tmp_path / "out.txt", {"x": leak()})
    write_dotenv(tmp_path / "neens.env", {"NEENS_X": leak()})
    for name in ("result.json", "summary.md", "out.txt", "neens.env"):
        _clean((tmp_path / name).read_text())
    json.loads((tmp_path / "result.json").read_text())


def test_console_streams_redact() -> None:
    for make in (GuardedStream, JsonStream, redact.Redacted):
        buf = io.StringIO()
        make(buf).write(leak())
        _clean(buf.getvalue())
    buf = io.StringIO()
    commands = Commands(GuardedStream(buf))
    commands.error(leak(), title=KEY)
    commands.echo(leak())
    _clean(buf.getvalue())


def test_masks_are_still_written_as_is() -> None:
    buf = io.StringIO()
    Commands(GuardedStream(buf)).mask(KEY)
    assert f"::add-mask::{KEY}" in buf.getvalue()
