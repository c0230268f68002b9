"""The worker protocol's pure parts: the item line, the worker's environment, reading
answers (malformed lines included) and splitting a worker's stdout into lines."""

from __future__ import annotations

import json

import pytest

from neens_action.agents.correlation import ItemEnv, SweepTag
from neens_action.agents.worker_protocol import (
    ITEM_VARS,
    LineBuffer,
    ProtocolError,
    is_protocol_line,
    item_message,
    parse_reply,
    worker_env,
)

BASE = {"PATH": "/bin", "OTEL_RESOURCE_ATTRIBUTES": "service.name=refunds,team=a%2Cb",
        "NEENS_API_KEY": "nk_live_secret"}


def test_item_line_carries_the_per_item_environment_and_resource():
    env = ItemEnv(run_id="ppr_1", version_label="v 1",
                  sweep=SweepTag("sw_1", "haiku", 2, "claude-haiku"), base=BASE)
    line = item_message("it/1", "Refund $5?\nplease", env("it/1", "Refund $5?\nplease"))
    assert line.endswith(b"\n") and line.count(b"\n") == 1  # one line, whatever the input
    msg = json.loads(line)
    assert msg["neens"] == "item" and msg["id"] == "it/1" and msg["input"] == "Refund $5?\nplease"
    assert msg["resource"] == {"neens.eval_run_id": "ppr_1", "neens.dataset_item_id": "it/1",
                               "neens.version_label": "v 1", "neens.sweep_id": "sw_1",
                               "neens.sweep_arm": "haiku", "neens.sweep_rep": "2"}
    assert set(msg["env"]) <= set(ITEM_VARS)
    assert msg["env"]["NEENS_DATASET_ITEM_ID"] == "it/1"
    assert msg["env"]["NEENS_EVAL_MODEL"] == "claude-haiku"
    assert msg["env"]["OTEL_RESOURCE_ATTRIBUTES"].startswith("service.name=refunds,team=a%2Cb,")
    assert "NEENS_API_KEY" not in msg["env"] and "nk_live_secret" not in line.decode()


def test_worker_environment_drops_item_variables_and_keeps_the_users_attributes():
    env = ItemEnv(run_id="ppr_1", version_label="v1", base=BASE)("it_1", "hi")
    wenv = worker_env(env)
    assert wenv["NEENS_WORKER_PROTOCOL"] == "1"
    assert not set(ITEM_VARS[:-1]) & set(wenv) and "NEENS_ITEM_INPUT" not in wenv
    assert wenv["OTEL_RESOURCE_ATTRIBUTES"] == "service.name=refunds,team=a%2Cb"
    assert wenv["NEENS_API_KEY"] == "nk_live_secret" and wenv["PATH"] == "/bin"
    bare = worker_env(ItemEnv(run_id="r", version_label="v", base={"PATH": "/bin"})("i", ""))
    assert "OTEL_RESOURCE_ATTRIBUTES" not in bare


def test_valid_answers():
    ok = parse_reply(b'{"neens": "done", "id": "it_1", "ok": true, "output": "hi"}\n', "it_1")
    assert ok.ok and ok.output == "hi" and ok.error == ""
    bad = parse_reply(b'{"neens":"done","id":"it_1","ok":false,"error":"no"}', "it_1")
    assert not bad.ok and bad.error == "no"


@pytest.mark.parametrize(("line", "why"), [
    (b'{"neens": "done", "id": ', "not JSON"),
    (b'{"neens"}', "not JSON"),
    (b'{"neens": "ready"}', "unknown message 'ready'"),
    (b'{"neens": "done", "id": "it_2", "ok": true}', "an answer for item 'it_2' while 'it_1'"),
    (b'{"neens": "done", "ok": true}', "an answer for item 'None'"),
    (b'{"neens": "done", "id": "it_1", "ok": "yes"}', "'ok' must be true or false"),
    (b'{"neens": "done", "id": "it_1", "ok": true, "output": 5}', "must be strings"),
])
def test_malformed_protocol_lines_are_errors(line, why):
    assert is_protocol_line(line)
    with pytest.raises(ProtocolError, match=why.replace("(", r"\(")):
        parse_reply(line, "it_1")


def test_only_lines_starting_with_the_marker_are_protocol_lines():
    assert is_protocol_line(b'  {"neens": "done"}\n')
    for line in (b"hello\n", b'{"id": "it_1", "ok": true}\n', b'["neens"]\n', b"\n",
                 b'{ "neens": "done"}\n'):
        assert not is_protocol_line(line)


def test_line_buffer_splits_joins_and_caps():
    buf = LineBuffer(cap=16)
    assert buf.feed(b"ab") == []
    assert buf.feed(b"c\nde\nf") == [(b"abc\n", False), (b"de\n", False)]
    assert buf.feed(b"g" * 20) == [(b"f" + b"g" * 20, True)]  # too long: out in a piece
    assert buf.feed(b"h") == [] and buf.rest() == b"h" and buf.rest() == b""
