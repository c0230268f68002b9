from __future__ import annotations

from pathlib import Path

import pytest

from neens_action.publish.gitlab import DOTENV_LIMIT, DOTENV_MAX_KEYS, format_dotenv, write_dotenv


def test_dotenv_format() -> None:
    text = format_dotenv({"NEENS_VERDICT": "blocked", "NEENS_EXIT_CODE": "1",
                          "NEENS_PASS_RATE": "", "NEENS_RUN_ID": "ppr_1"})
    assert text == (
        "NEENS_VERDICT=blocked\nNEENS_EXIT_CODE=1\nNEENS_PASS_RATE=\nNEENS_RUN_ID=ppr_1\n"
    )


@pytest.mark.parametrize("key", ["NEENS-VERDICT", "NEENS VERDICT", "", "NÉ", "A=B"])
def test_dotenv_keys_letters_digits_underscore(key: str) -> None:
    with pytest.raises(ValueError):
        format_dotenv({key: "x"})


def test_dotenv_values_are_single_line_and_short() -> None:
    text = format_dotenv({"A": "line1\nline2\r\n\x00end", "B": "x" * 5000})
    lines = text.splitlines()
    assert lines[0] == "A=line1 line2 end"
    assert len(lines) == 2 and len(lines[1]) <= 1002


def test_dotenv_stays_under_5kb() -> None:
    values = {f"K{i}": "v" * 900 for i in range(15)}
    text = format_dotenv(values)
    assert len(text.encode()) < DOTENV_LIMIT
    assert text.count("\n") == 5  # whole lines only: 6 x 904 bytes would pass 5 KB


def test_dotenv_key_cap() -> None:
    text = format_dotenv({f"K{i}": "1" for i in range(30)})
    assert text.count("\n") == DOTENV_MAX_KEYS


def test_write_dotenv(tmp_path: Path) -> None:
    path = write_dotenv(tmp_path / "sub" / "neens.env", {"NEENS_EXIT_CODE": "0"})
    assert path.read_text() == "NEENS_EXIT_CODE=0\n"
