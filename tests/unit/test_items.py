"""Per-item data kept small: the prompt spool, the terminal-run digest, slim rows."""

from __future__ import annotations

import os
import sys
import tempfile
import threading

import pytest

from neens_action.items import (
    READ_AHEAD,
    SHOWN_ITEMS,
    FrozenItem,
    ItemDigest,
    ItemSpool,
    frozen_item,
    slim_run_item,
)

PROMPTS = ["Refund for order 1 ($1.00)?", "", "multi\nline\r\nprompt", "naïve ✓ 😀 \u0000 end",
           "lone surrogate \ud800 from a JSON escape",
           "x" * 200_000, '{"json": "inside"}']


def test_frozen_item_reads_every_id_spelling_and_stringifies_inputs():
    assert frozen_item({"item_id": "a", "input": "q"}) == FrozenItem("a", "q")
    assert frozen_item({"itemId": "b", "input": None}) == FrozenItem("b", "")
    assert frozen_item({"id": 7, "input": {"q": "é"}}) == FrozenItem("7", '{"q": "é"}')
    assert frozen_item({"input": "no id"}) == FrozenItem("", "no id")
    assert frozen_item("not a row") is None


def test_spool_round_trips_every_prompt_exactly():
    with ItemSpool() as spool:
        for n, text in enumerate(PROMPTS):
            spool.add({"item_id": f"it_{n}" + ("é✓" if n % 2 else ""), "input": text})
        assert len(spool) == len(PROMPTS)
        assert [item.input for item in spool] == PROMPTS
        assert [item.item_id for item in spool][:3] == ["it_0", "it_1é✓", "it_2"]
        last = len(PROMPTS) - 1
        assert spool[-1] == FrozenItem(f"it_{last}" + ("é✓" if last % 2 else ""), PROMPTS[-1])
        assert spool[1:3] == [FrozenItem("it_1é✓", ""), FrozenItem("it_2", PROMPTS[2])]
        with pytest.raises(IndexError):
            spool[len(PROMPTS)]
        assert spool.first_without_id is None


def test_spool_keeps_prompts_on_disk_not_in_memory():
    with ItemSpool() as spool:
        assert spool._memory is None  # a file here, not a list
        for n in range(2000):
            spool.add({"item_id": f"it_{n}", "input": "p" * 1000})
        assert os.fstat(spool._file.fileno()).st_size > 2000 * 1000
        assert os.fstat(spool._file.fileno()).st_nlink == 0  # unlinked: nothing left behind
        kept = sys.getsizeof(spool._offsets) + sys.getsizeof(spool._key_sizes)
        assert kept < 2001 * 16  # ~12 bytes per item, not the 1,000 of its prompt


def test_spool_reads_concurrently_from_many_threads():
    with ItemSpool() as spool:
        for n in range(500):
            spool.add({"item_id": f"it_{n}", "input": f"prompt {n} " + "é" * (n % 17)})
        bad: list[int] = []

        def read(start: int) -> None:
            for n in range(start, 500, 8):
                item = spool[n]
                if item != FrozenItem(f"it_{n}", f"prompt {n} " + "é" * (n % 17)):
                    bad.append(n)

        threads = [threading.Thread(target=read, args=(k,)) for k in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert bad == []


def test_spool_reads_back_in_blocks_of_bounded_size(monkeypatch):
    reads: list[int] = []
    real = os.pread
    monkeypatch.setattr(os, "pread", lambda fd, n, at: reads.append(n) or real(fd, n, at))
    with ItemSpool() as spool:
        for n in range(600):
            spool.add({"item_id": f"it_{n}", "input": f"short {n}"})
        for n in range(30):
            spool.add({"item_id": f"big_{n}", "input": str(n) * 100_000})
        items = list(spool)
        assert [i.item_id for i in items[598:601]] == ["it_598", "it_599", "big_0"]
        assert items[-1] == FrozenItem("big_29", "29" * 100_000)
        assert len(reads) < 600 // READ_AHEAD + 30  # blocks, not one read per item
        assert max(reads) <= 1 << 20  # never more than 1 MiB of prompts in memory at once
        assert spool[3] == FrozenItem("it_3", "short 3")  # going back reads that block again


def test_spool_reset_starts_again_for_a_retried_read():
    with ItemSpool() as spool:
        spool.add({"item_id": "", "input": "first attempt, no id"})
        spool.add({"item_id": "a", "input": "old"})
        assert spool.first_without_id == 1
        spool.reset()
        spool.add({"item_id": "a", "input": "new"})
        assert list(spool) == [FrozenItem("a", "new")] and spool.first_without_id is None


def test_spool_falls_back_to_memory_without_a_temporary_directory(monkeypatch):
    def refuse(*args, **kwargs):
        raise OSError(30, "Read-only file system")

    monkeypatch.setattr(tempfile, "TemporaryFile", refuse)
    with ItemSpool() as spool:
        spool.add({"item_id": "a", "input": "q"})
        spool.add({"input": "no id"})
        assert list(spool) == [FrozenItem("a", "q"), FrozenItem("", "no id")]
        assert spool.first_without_id == 2
        spool.reset()
        assert len(spool) == 0


def test_slim_rows_keep_only_what_the_report_reads_and_share_repeated_texts():
    row = {"datasetVersionItemId": "b_1", "input": "q", "passed": False, "score": 0.2,
           "output": "x" * 5000, "scores": {"a": 1}, "latencyMs": 3, "reason": None,
           "error": "no " + "trace captured"}
    slim = slim_run_item(row)
    assert slim == {"datasetVersionItemId": "b_1", "input": "q", "passed": False,
                    "score": 0.2, "error": "no trace captured"}
    other = slim_run_item(dict(row, error="no trace " + "captured"))
    assert other["error"] is slim["error"]  # one copy for 10,000 rows
    assert slim_run_item(["not", "a", "row"]) == ["not", "a", "row"]


def test_digest_counts_everything_and_keeps_the_first_rows_that_did_not_pass():
    digest = ItemDigest(limit=3)
    for n in range(100):
        passed = True if n % 2 else (False if n % 4 == 0 else None)
        digest.add({"datasetVersionItemId": f"b_{n}", "input": "q", "passed": passed,
                    "output": "big"})
    digest.add("junk")
    assert (digest.total, digest.passed, digest.not_passing) == (100, 50, 50)
    assert [r.item_id for r in digest.rows] == ["b_0", "b_2", "b_4"]
    assert all(r.output == "" for r in digest.rows)  # kept slim
    digest.reset()
    assert (digest.total, digest.passed, digest.rows) == (0, 0, [])
    assert ItemDigest().limit == SHOWN_ITEMS
