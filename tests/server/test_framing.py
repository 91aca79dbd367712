"""Tests for ctx_lsp/server/framing.py: bad headers resynchronise, absurd lengths are refused
without being allocated, and any chunking of the bytes gives the same frames."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ctx_lsp.server.framing import (
    HEAD_BYTES,
    INVALID_REQUEST,
    MAX_HEADER_BYTES,
    PARSE_ERROR,
    BadFrame,
    Event,
    Frame,
    FrameDecoder,
)

GOOD = {"jsonrpc": "2.0", "id": 2, "method": "ctx/search", "params": {"query": "x"}}
GOOD_BODY = json.dumps(GOOD).encode()
FIRST = {"jsonrpc": "2.0", "id": 1, "method": "ctx/search", "params": {"query": "first"}}


def frame(body: bytes | dict, length: int | str | None = None, header: str = "Content-Length") -> bytes:
    data = body if isinstance(body, bytes) else json.dumps(body).encode()
    return f"{header}: {len(data) if length is None else length}\r\n\r\n".encode() + data


def decode(data: bytes, chunk: int | None = None, max_frame_bytes: int = 1000) -> list[Event]:
    decoder = FrameDecoder(max_frame_bytes)
    step = chunk or len(data) or 1
    events: list[Event] = []
    for i in range(0, len(data), step):
        events += decoder.feed(data[i : i + step])
    return events


def summary(events: list[Event]) -> list[tuple[str, object]]:
    return [("frame", e.body) if isinstance(e, Frame) else ("bad", e.code) for e in events]


CHUNKS = [None, 1, 7, 64]

ATTACKS = {
    # name: (bytes before the good frame, what is reported for them)
    "lowercase header is a header": (frame(FIRST, header="content-length"), [("frame", json.dumps(FIRST).encode())]),
    "length too small": (frame(FIRST, length=10), [("frame", json.dumps(FIRST).encode()[:10])]),
    "negative length": (frame(FIRST, length=-5), [("bad", PARSE_ERROR)]),
    "non-numeric length": (frame(FIRST, length="abc"), [("bad", PARSE_ERROR)]),
    "signed length": (frame(FIRST, length="+5"), [("bad", PARSE_ERROR)]),
    "length swallows the next frame": (frame(FIRST, length=400), [("bad", PARSE_ERROR)]),
    "length ends inside the next header": (b'Content-Length: 10\r\n\r\n{"x":', [("bad", PARSE_ERROR)]),
    "10**12": (frame(FIRST, length=10**12), [("bad", INVALID_REQUEST)]),
    "2**63-1": (frame(FIRST, length=2**63 - 1), [("bad", INVALID_REQUEST)]),
    "10**20": (frame(FIRST, length=10**20), [("bad", INVALID_REQUEST)]),
    "a thousand digits": (frame(FIRST, length="9" * 1000), [("bad", INVALID_REQUEST)]),
    "garbage lines": (b"hello\r\nworld\r\n\r\n", []),
    "garbage without newline": (b"x" * (3 * MAX_HEADER_BYTES), []),
    "headers without Content-Length": (b"Content-Type: x\r\n\r\n{}", [("bad", PARSE_ERROR)]),
    "conflicting lengths": (b"Content-Length: 5\r\n", [("bad", PARSE_ERROR)]),
    "blank lines between frames": (b"\r\n\r\n\n", []),
}


@pytest.mark.parametrize("chunk", CHUNKS)
@pytest.mark.parametrize("name", list(ATTACKS))
def test_the_stream_recovers_after_each_bad_header(name: str, chunk: int | None) -> None:
    """Ensure that after each malformed frame the next well-formed frame is decoded intact,
    whatever the read sizes, and that what was wrong is reported as it should be."""
    before, reported = ATTACKS[name]
    events = decode(before + frame(GOOD), chunk)
    assert summary(events) == [*reported, ("frame", GOOD_BODY)]


def test_an_oversized_frame_is_refused_with_its_start_and_never_buffered() -> None:
    """Ensure that a body over the limit is discarded as it streams (the decoder holds at
    most a few chunks, not the body) and refused with its first bytes, so the error can
    carry the request's id."""
    decoder = FrameDecoder(max_frame_bytes=1000)
    head = b'{"jsonrpc": "2.0", "id": 7, "method": "textDocument/didOpen", "params": {"text": "'
    events = decoder.feed(b"Content-Length: 5000000\r\n\r\n" + head)
    for _ in range(70):  # 4.5 MB of filler, 64 KB at a time
        events += decoder.feed(b"a" * 65536)
        assert len(decoder._buf) + len(decoder._body) + len(decoder._head) <= HEAD_BYTES + 2 * 65536
    refusals = [e for e in events if isinstance(e, BadFrame)]
    assert len(refusals) == 1 and refusals[0].code == INVALID_REQUEST
    assert refusals[0].head.startswith(head)
    assert "over the limit of 1000 bytes" in refusals[0].message
    events = decoder.feed(b"a" * (5000000 - len(head) - 70 * 65536) + frame(GOOD))
    assert summary(events) == [("frame", GOOD_BODY)]


def test_a_stalled_body_that_is_already_complete_json_is_refused() -> None:
    """Ensure that a body whose declared length is too large, with nothing after it, is
    refused once input stalls (the client is waiting for its answer), while a body that is
    merely incomplete keeps waiting."""
    decoder = FrameDecoder()
    assert decoder.feed(frame(FIRST, length=500)) == []
    assert decoder.mid_body
    [bad] = decoder.stalled()
    assert isinstance(bad, BadFrame) and bad.code == PARSE_ERROR and json.loads(bad.head) == FIRST
    assert summary(decoder.feed(frame(GOOD))) == [("frame", GOOD_BODY)]

    decoder = FrameDecoder()
    decoder.feed(frame(FIRST)[:-5])
    assert decoder.mid_body and decoder.stalled() == []
    assert summary(decoder.feed(frame(FIRST)[-5:])) == [("frame", json.dumps(FIRST).encode())]


def test_an_oversized_frame_is_refused_when_input_stalls() -> None:
    """Ensure that a client that sent an absurd length and waits gets its refusal without
    sending anything more."""
    decoder = FrameDecoder()
    assert decoder.feed(frame(FIRST, length=10**12)) == []
    [bad] = decoder.stalled()
    assert isinstance(bad, BadFrame) and bad.code == INVALID_REQUEST
    assert decoder.stalled() == []
    assert summary(decoder.feed(frame(GOOD))) == [("frame", GOOD_BODY)]


def test_a_header_line_inside_a_json_string_is_not_a_frame_boundary() -> None:
    """Ensure that a body quoting an HTTP header (escaped line breaks, as JSON requires) is
    one frame."""
    body = json.dumps({"jsonrpc": "2.0", "method": "x", "params": {"text": "Content-Length: 12\r\n\r\nhello"}})
    assert summary(decode(frame(body.encode()), 3, 10_000)) == [("frame", body.encode())]


garbage = st.one_of(
    st.binary(max_size=200),
    st.builds(
        lambda value, body: f"Content-Length: {value}\r\n\r\n".encode() + body,
        st.one_of(st.integers(-10, 10**15), st.text("0123456789+- abc", max_size=25)),
        st.binary(max_size=100),
    ),
    st.sampled_from([b"\r\n", b"Content-Length: 5\r\n", b"content-length:3\r\n\r\n{}", b'{"jsonrpc": "2.0"']),
)


@settings(max_examples=300, deadline=None)
@given(st.lists(garbage, max_size=4), st.sampled_from([None, 1, 5, 64]))
def test_any_garbage_then_two_frames_decodes_the_last(pieces: list[bytes], chunk: int | None) -> None:
    """Ensure that whatever bytes come first, of two well-formed frames sent after them the
    second is decoded intact (the first may be claimed as the body of a frame the garbage
    started, as its declared length says), and that no event is lost or invented between."""
    data = b"".join(pieces) + frame(FIRST) + frame(GOOD)
    events = decode(data, chunk, max_frame_bytes=10_000)
    frames = [e.body for e in events if isinstance(e, Frame)]
    assert frames and frames[-1] == GOOD_BODY
    assert summary(events) == summary(decode(data, None, max_frame_bytes=10_000))


def test_leading_zeros_do_not_make_a_length_absurd() -> None:
    """Ensure that `Content-Length: 000…042` is 42, not an oversized message."""
    body = json.dumps(GOOD).encode()
    data = f"Content-Length: {'0' * 30}{len(body)}\r\n\r\n".encode() + body
    assert summary(decode(data)) == [("frame", GOOD_BODY)]
