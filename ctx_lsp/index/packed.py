"""One layout for state kept in the index cache as flat columns: a JSON header (the string
columns, and each int array's length) + NUL + the arrays' native bytes.

The search postings (`search.PostingsImage`) and the reference graph (`graph.image`) are
both stored this way (`index/derived.py`); reading back is a JSON decode and a few
`array.frombytes` calls. `unpack` checks only the layout — each image checks its own
invariants after."""

from __future__ import annotations

import json
import sys
from array import array
from collections.abc import Mapping, Sequence
from itertools import repeat

__all__ = ["ARRAY_FORMAT", "pack", "unpack"]

ARRAY_FORMAT = f"i{array('i').itemsize}{sys.byteorder}"
"""Columns are native int arrays: bytes written on another machine layout are not read
(the formats' version strings include this)."""


def pack(strings: Mapping[str, list[str]], arrays: Mapping[str, array]) -> bytes:
    header: dict[str, object] = dict(strings)
    header["lengths"] = [len(column) for column in arrays.values()]
    parts = [json.dumps(header, ensure_ascii=False, separators=(",", ":")).encode("utf-8", "surrogatepass"), b"\0"]
    parts.extend(column.tobytes() for column in arrays.values())
    return b"".join(parts)


def unpack(
    value: bytes, string_names: Sequence[str], array_names: Sequence[str]
) -> tuple[dict[str, list[str]], dict[str, array]] | None:
    """The string columns and int arrays `pack` wrote, in the order named, or None if the
    bytes do not hold to the layout (a column cut short, a header that is not a list of
    strings per name, bytes left over)."""
    cut = value.find(b"\0")
    if cut < 0:
        return None
    try:
        header = json.loads(value[:cut].decode("utf-8", "surrogatepass"))
        lengths = header["lengths"]
        strings = {name: header[name] for name in string_names}
    except (ValueError, KeyError, TypeError):
        return None
    if not isinstance(lengths, list) or len(lengths) != len(array_names):
        return None
    if not all(isinstance(v, list) and all(map(isinstance, v, repeat(str))) for v in strings.values()):
        return None
    arrays: dict[str, array] = {}
    offset = cut + 1
    size = array("i").itemsize
    view = memoryview(value)  # slices without copies
    for name, length in zip(array_names, lengths):
        if type(length) is not int or length < 0:
            return None
        chunk = view[offset : offset + length * size]
        if len(chunk) != length * size:  # cut short: frombytes would raise on a partial item
            return None
        column = array("i")
        column.frombytes(chunk)
        arrays[name] = column
        offset += length * size
    if offset != len(value):
        return None
    return strings, arrays
