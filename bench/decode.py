"""Streamed decoding of a large value outside ``items`` (issue 17): linear, not quadratic.

``python -m bench.decode`` decodes a body whose ``meta`` value is 4 MiB (and a 4 MiB
``items`` list) through :func:`neens_action.api.json_stream.decode_chunks` in 64 KiB
chunks, as the client reads it, and prints the time against one ``json.loads`` of the same
bytes. Target: under 4x.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator

from neens_action.api.json_stream import decode_chunks

CHUNK = 64 * 1024


def _chunks(data: bytes) -> Iterator[bytes]:
    for i in range(0, len(data), CHUNK):
        yield data[i:i + CHUNK]


def _best(fn, runs: int = 5) -> float:
    best = float("inf")
    for _ in range(runs):
        started = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - started)
    return best


def body(kind: str, size: int = 4 * 1024 * 1024) -> bytes:
    row = {"k": "value", "n": 12345, "f": 1.5, "ok": True}
    one = len(json.dumps(row)) + 1
    rows = [row] * (size // one)
    doc = {"id": "ppr_1", "meta": rows, "items": []} if kind == "value" else {
        "id": "ppr_1", "items": rows}
    return json.dumps(doc).encode()


def main() -> None:
    for kind in ("value", "items"):
        data = body(kind)
        base = _best(lambda data=data: json.loads(data))
        ours = _best(lambda data=data: decode_chunks(_chunks(data)))
        print(f"decode 4 MiB {kind:5s} ({len(data) / 2**20:.1f} MiB): json.loads "
              f"{base * 1000:.0f} ms, streamed {ours * 1000:.0f} ms = {ours / base:.2f}x")


if __name__ == "__main__":
    main()
