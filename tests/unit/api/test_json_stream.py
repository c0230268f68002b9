"""decode_chunks: the same answer as json.loads, however the body is cut into chunks."""

from __future__ import annotations

import json
import random

import pytest

from neens_action.api.json_stream import decode_chunks


def cut(data: bytes, rng: random.Random, *, most: int = 7) -> list[bytes]:
    """``data`` in random pieces of 1..most bytes (multi-byte characters split too)."""
    out, i = [], 0
    while i < len(data):
        n = rng.randint(1, most)
        out.append(data[i:i + n])
        i += n
    return out


def value(rng: random.Random, depth: int = 0):
    kinds = ["int", "float", "str", "bool", "null"] + (["list", "dict"] if depth < 3 else [])
    kind = rng.choice(kinds)
    if kind == "int":
        return rng.choice([0, -1, 7, 123456789012345, -98765])
    if kind == "float":
        return rng.choice([0.5, -1e-7, 3.14159, 2.5e300, 1e20])
    if kind == "str":
        return "".join(rng.choice(["a", "é", "\"", "\\", "\n", "✓", "😀", " ", "}", "]", ","])
                       for _ in range(rng.randint(0, 12)))
    if kind == "bool":
        return rng.choice([True, False])
    if kind == "null":
        return None
    if kind == "list":
        return [value(rng, depth + 1) for _ in range(rng.randint(0, 4))]
    return {f"k{i}{rng.choice(['', 'é', ' '])}": value(rng, depth + 1)
            for i in range(rng.randint(0, 4))}


def run_object(rng: random.Random) -> dict:
    doc = {f"f{i}": value(rng) for i in range(rng.randint(0, 5))}
    doc["items"] = [value(rng) for _ in range(rng.randint(0, 30))]
    doc.update({f"g{i}": value(rng) for i in range(rng.randint(0, 3))})
    return doc


@pytest.mark.parametrize("seed", range(200))
def test_same_as_json_loads_for_any_chunking(seed):
    rng = random.Random(seed)
    doc = run_object(rng)
    text = json.dumps(doc, ensure_ascii=rng.random() < 0.3,
                      indent=rng.choice([None, 1, "\t"]))
    data = text.encode()
    assert decode_chunks(cut(data, rng)) == json.loads(text)
    assert decode_chunks([data]) == json.loads(text)


def test_elements_pass_through_the_function_one_at_a_time_and_none_is_dropped():
    doc = {"id": "r", "items": [{"n": i, "passed": i % 3 == 0} for i in range(10)], "z": 1}
    seen = []

    def element(row):
        seen.append(row["n"])
        return row["n"] if row["passed"] else None

    out = decode_chunks(cut(json.dumps(doc).encode(), random.Random(1)), element=element)
    assert out == {"id": "r", "items": [0, 3, 6, 9], "z": 1}
    assert seen == list(range(10))


def test_element_none_drops_the_list_and_other_keys_are_untouched():
    doc = {"items": [1, 2, 3], "nested": {"items": [4]}, "after": [5]}
    assert decode_chunks([json.dumps(doc).encode()], element=None) == {
        "nested": {"items": [4]}, "after": [5]}


def test_a_key_that_is_not_a_list_is_decoded_as_usual():
    assert decode_chunks([b'{"items": null, "x": 1}'], element=None) == {"items": None, "x": 1}
    assert decode_chunks([b'{"items": {"a": 1}}']) == {"items": {"a": 1}}


@pytest.mark.parametrize("number", ["1", "12345", "-0.5", "1e10", "3.25E-3"])
def test_numbers_cut_at_every_position(number):
    data = f'{{"items":[{number},{number}],"n":{number}}}'.encode()
    expected = json.loads(data)
    for at in range(1, len(data)):
        assert decode_chunks([data[:at], data[at:]]) == expected, at


@pytest.mark.parametrize("body", [b"[1, 2]", b'"text"', b"42", b"null", b"  [ ]  "])
def test_other_documents_decode_whole(body):
    assert decode_chunks(cut(body, random.Random(0), most=2)) == json.loads(body)


def test_empty_body_is_none():
    assert decode_chunks([]) is None
    assert decode_chunks([b"", b"  \n"]) is None


@pytest.mark.parametrize("body", [
    b"<html><body>502 Bad Gateway</body></html>",
    b'{"items": [1, 2',  # cut short
    b'{"items": [1, 2]',  # no closing brace
    b'{"a": 1,}',
    b'{"a" 1}',
    b'{1: 2}',
    b'{"a": 1} trailing',
    b'{"items": [1 2]}',
    b'{"a": tru}',
    b"\xff\xfe{}",
])
def test_malformed_bodies_raise_value_error(body):
    with pytest.raises(ValueError):
        decode_chunks(cut(body, random.Random(2), most=3))


def test_a_large_run_is_decoded_without_keeping_its_rows():
    rows = [{"datasetVersionItemId": f"b_{i}", "input": f"prompt {i} " * 20, "passed": True}
            for i in range(5000)]
    data = json.dumps({"id": "r", "status": "completed", "items": rows}).encode()
    chunks = [data[i:i + 65536] for i in range(0, len(data), 65536)]
    count = []
    out = decode_chunks(chunks, element=lambda row: count.append(1))
    assert out == {"id": "r", "status": "completed", "items": []} and len(count) == 5000
