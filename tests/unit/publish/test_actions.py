from __future__ import annotations

import io
import json
import re
from pathlib import Path

import pytest

from neens_action.publish.actions import (
    ANNOTATION_CAP,
    Commands,
    GuardedStream,
    JsonStream,
    format_outputs,
    summary_room,
    write_outputs,
    write_summary,
)
from tests.fakes.gh_runner_log import run_commands
from tests.fakes.github_server import parse_outputs


def _commands() -> tuple[Commands, io.StringIO]:
    stream = io.StringIO()
    return Commands(stream), stream


def test_mask_skips_empty_and_masks_each_line() -> None:
    c, out = _commands()
    c.mask("")
    c.mask("   ")
    c.mask(None)
    c.mask("abc")
    c.mask("line1\nline2")
    assert out.getvalue().splitlines() == [
        "::add-mask::abc", "::add-mask::line1%0Aline2", "::add-mask::line1",
        "::add-mask::line2",
    ]


def test_stop_commands_wraps_untrusted_text_with_a_random_token() -> None:
    c, out = _commands()
    c.echo("::error::pwned\n::add-mask::x")
    c.echo("second")
    lines = out.getvalue().splitlines()
    first = re.fullmatch(r"::stop-commands::(neens-[0-9a-f]{32})", lines[0])
    assert first is not None
    token = first.group(1)
    # shown as text (made inert as well) while commands are paused
    assert lines[1:4] == ["\u200b::error::pwned", "\u200b::add-mask::x", f"::{token}::"]
    assert run_commands(out.getvalue()) == []
    second = lines[4].split("::")[2]
    assert second != token  # a fresh token every time
    assert not c.paused


def test_annotations_capped_at_ten_per_kind() -> None:
    c, out = _commands()
    for i in range(15):
        c.error(f"e{i}", title="t:1,2")
        c.warning(f"w{i}\nnext")
    lines = out.getvalue().splitlines()
    errors = [x for x in lines if x.startswith("::error")]
    warnings = [x for x in lines if x.startswith("::warning")]
    assert len(errors) == ANNOTATION_CAP == len(warnings)
    assert errors[0] == "::error title=t%3A1%2C2::e0"
    assert warnings[0] == "::warning::w0%0Anext"
    assert "neens: error: e14" in lines and "neens: warning: w14 next" in lines
    assert c.dropped == {"error": 5, "warning": 5}


def test_annotation_while_paused_resumes_and_pauses_again() -> None:
    c, out = _commands()
    c.stop()
    c.notice("hello")
    assert c.paused
    lines = out.getvalue().splitlines()
    assert lines[0].startswith("::stop-commands::")
    assert lines[1] == f"::{lines[0].split('::')[2]}::"
    assert lines[2] == "::notice::hello"
    assert lines[3].startswith("::stop-commands::")


def test_unknown_annotation_kind() -> None:
    c, _ = _commands()
    with pytest.raises(ValueError):
        c.annotate("debug", "x")


def test_outputs_single_and_multi_line() -> None:
    text = format_outputs({"exit-code": "1", "verdict": "blocked", "notes": "a\nb\nc",
                           "empty": ""})
    lines = text.splitlines()
    assert lines[:2] == ["exit-code=1", "verdict=blocked"]
    m = re.fullmatch(r"notes<<(ghadelimiter_[0-9a-f]{32})", lines[2])
    assert m is not None
    assert lines[3:7] == ["a", "b", "c", m.group(1)]
    assert lines[7] == "empty="


def test_delimiter_never_appears_in_value(monkeypatch: pytest.MonkeyPatch) -> None:
    import neens_action.publish.actions as actions

    tokens = iter(["0" * 32, "1" * 32])
    monkeypatch.setattr(actions.secrets, "token_hex", lambda n: next(tokens))
    text = format_outputs({"x": f"ghadelimiter_{'0' * 32}\nmore"})
    assert text.startswith(f"x<<ghadelimiter_{'1' * 32}\n")


def test_bad_output_name() -> None:
    with pytest.raises(ValueError):
        format_outputs({"bad name": "x"})


def test_write_outputs_appends(tmp_path: Path) -> None:
    path = tmp_path / "out"
    path.write_text("earlier=1\n")
    write_outputs(path, {"run-id": "ppr_1"})
    assert path.read_text() == "earlier=1\nrun-id=ppr_1\n"


def test_summary_room_accounts_for_earlier_content(tmp_path: Path) -> None:
    path = tmp_path / "summary.md"
    assert summary_room(path, 100) == 100
    path.write_text("x" * 30)
    assert summary_room(path, 100) == 70
    assert write_summary(path, "€") == 3
    assert summary_room(path, 100) == 67
    path.write_text("x" * 200)
    assert summary_room(path, 100) == 0


def test_outputs_round_trip_through_the_runner_format(tmp_path: Path) -> None:
    values = {"verdict": "warned", "reasons": "line one\nline = two\n\nlast<<x", "k": "a=b"}
    path = tmp_path / "out"
    write_outputs(path, values)
    assert parse_outputs(path.read_text()) == values


@pytest.mark.parametrize("parts", [
    ["x ...##", "[set-output name=a;]v\n"],
    ["#", "#", "[set-output name=a;]v\n"],
    ["...#", "#[set-output name=a;]v\n"],
    ["\n  :", ":warning::x\n"],
    [":", ":", "warning::x\n"],
    ["  ", "::warning::x\n"],
    ["a\r", "::error::y\n"],
])
def test_guarded_stream_keeps_state_across_writes(parts) -> None:
    buf = io.StringIO()
    stream = GuardedStream(buf)
    for part in parts:
        stream.write(part)
    assert run_commands(buf.getvalue()) == []
    assert buf.getvalue().replace("\u200b", "") == "".join(parts)


def test_json_stream_is_inert_and_parses_to_the_same_values() -> None:
    doc = {"gate": "x ##[set-output name=p;]y", "n": "##", "m": "::warning::z"}
    buf = io.StringIO()
    stream = JsonStream(buf)
    text = json.dumps(doc, indent=2)
    cut = text.index("##[") + 2
    stream.write(text[:cut])
    stream.write(text[cut:])
    assert run_commands(buf.getvalue()) == [] and json.loads(buf.getvalue()) == doc
