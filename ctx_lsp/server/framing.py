"""The byte stream → frames: LSP's `Content-Length` framing, read so that no input wedges it.

Why not pygls's reader (`pygls/io_.py` `run_async`, 2.1.1): it matches exactly
`Content-Length: (\\d+)\\r\\n` and keeps the first length it sees until a body is read.
- A lowercase `content-length`, or a value of `-5`, `+5` or `abc`, is never matched, and
  after a bad header a good one is not matched either: every later frame is ignored while
  the process stays alive (issue 12).
- A length that is too small leaves the rest of the body to be read as headers; one that
  is too large reads the next frames as its body. Nothing resynchronises.
- An absurd length (10**12) is passed to `read(n)`, which tries to allocate it: the
  server exits.

Here headers are matched case-insensitively, a length over `max_frame_bytes` is refused
without being allocated (its bytes are discarded as they stream past), and after any bad
header the decoder resynchronises on the next `Content-Length:` header line. That is sound
because such a line never occurs inside a valid JSON body: a JSON string holds no raw line
break, and outside strings `content-length` is not a JSON token. So a header line found
inside a body proves that body's declared length wrong, and it is where the next frame
starts.

Pure (bytes in, events out), so it is tested without a process. The JSON-RPC error codes
of the refusals are chosen here; `envelope.py` turns them into responses.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

PARSE_ERROR = -32700
INVALID_REQUEST = -32600

MAX_FRAME_BYTES = 16 * 1024 * 1024
"""The largest body accepted (16 MiB; `ctx-lsp serve --max-frame-bytes` changes it); larger
bodies are refused with -32600, never allocated.

It bounds how long one message holds the event loop. A body is JSON-decoded on the loop
(`envelope.parse_body`), and moving that to a thread would not free the loop: `json.loads`
holds the GIL for the whole call (measured with a loop ticking every 5 ms: a 64 MiB didOpen
stopped it 0.28 s when decoded on the loop and 0.32 s in a thread; 31 MB of small objects
0.66 s and 0.50 s). At 16 MiB that is ~0.07 s for a document's text and ~0.3 s for the
densest JSON. A didOpen of this size is far past `index.max_file_bytes` (1 MB), which the
server does not track anyway; raise both together for larger buffers."""
MAX_HEADER_BYTES = 8 * 1024
"""A header block (a few short lines) longer than this is garbage, not headers."""
HEAD_BYTES = 64 * 1024
"""How much of a refused body is kept, to find its request id for the error response."""
MAX_LENGTH_DIGITS = 20
"""A Content-Length of more digits is over any limit: it is not even converted."""

HEADER_LINE = re.compile(rb"content-length[ \t]{0,8}:[ \t]{0,8}\d{1,20}[ \t]{0,8}\r?\n", re.IGNORECASE)
"""Where the next frame starts. Bounded repetitions keep every match under `OVERLAP`."""
OVERLAP = 64
"""Bytes searched again when more arrive, so a header line split across reads is found."""
HEADER_NAME = re.compile(rb"[A-Za-z0-9-]+")


@dataclass(frozen=True, slots=True)
class Frame:
    """One complete body, exactly as sent (not yet decoded or parsed)."""

    body: bytes


@dataclass(frozen=True, slots=True)
class BadFrame:
    """A frame that was sent but cannot be used: answer with this error. `head` is the
    start of its body, if any, to find a request id in."""

    code: int
    message: str
    head: bytes = b""


Event = Frame | BadFrame


class FrameDecoder:
    """Feed it bytes as they arrive; it returns the frames (and refusals) they complete."""

    def __init__(self, max_frame_bytes: int = MAX_FRAME_BYTES) -> None:
        self.max_frame_bytes = max_frame_bytes
        self._buf = bytearray()
        self._length: int | None = None
        """The declared length of the body being read; None while reading headers."""
        self._body = bytearray()
        self._scanned = 0
        self._skipping = False
        """True while discarding an oversized body."""
        self._skip_left = 0
        self._head = bytearray()
        self._tail = b""
        self._refused = False
        self._declared = ""
        self._resyncing = False
        """True after a bad header, until the next header line."""
        self.skipped_bytes = 0
        """Bytes discarded as garbage so far (for the log)."""

    @property
    def mid_body(self) -> bool:
        """A body has started and is not complete, or an oversized one is being skipped and
        not yet refused (see `stalled`)."""
        if self._skipping:
            return not self._refused
        return self._length is not None and bool(self._body)

    def feed(self, data: bytes) -> list[Event]:
        self._buf += data
        events: list[Event] = []
        while self._step(events):
            pass
        return events

    def stalled(self) -> list[Event]:
        """Nothing arrived for a while in the middle of a body. If what did arrive is a
        complete JSON value, the declared length was too large and the client is waiting
        for an answer: refuse it now. (An honest body is a complete value only at its last
        byte, bar trailing whitespace, so this never cuts a slow sender short.) An oversized
        message is refused now, with the id its first bytes show."""
        if not self.mid_body:
            return []
        if self._skipping:  # answer the oversized message now; its bytes are still skipped
            events: list[Event] = []
            self._refuse(events)
            return events
        body = bytes(self._body)
        stripped = body.strip()
        if not stripped.endswith((b"}", b"]")):
            return []
        try:
            json.loads(stripped)
        except (ValueError, RecursionError):
            return []
        declared = self._length
        self._end_body()
        return [
            BadFrame(
                PARSE_ERROR,
                f"Parse error: Content-Length {declared} is more than the {len(body)} bytes of the message "
                "(no more arrived); send the body's length in bytes (UTF-8)",
                body,
            )
        ]

    # ------------------------------------------------------------------ states
    def _step(self, events: list[Event]) -> bool:
        """Make progress with what is buffered; False when more bytes are needed."""
        if self._resyncing:
            return self._seek_header()
        if self._skipping:
            return self._skip(events)
        if self._length is not None:
            return self._read_body(events)
        return self._read_headers(events)

    def _read_headers(self, events: list[Event]) -> bool:
        buf = self._buf
        pos = 0
        digits = b""
        while True:
            newline = buf.find(b"\n", pos)
            if newline < 0 or newline > MAX_HEADER_BYTES:
                if len(buf) <= MAX_HEADER_BYTES:
                    return False  # the block is not complete yet
                self._resync(1, events, "Parse error: a header block over 8 KB" if pos else None)
                return True
            line = bytes(buf[pos:newline]).rstrip(b"\r")
            start, pos = pos, newline + 1
            if not line.strip():
                if start == 0:  # blank lines between frames: harmless
                    del buf[:pos]
                    pos = 0
                    continue
                break
            name, colon, value = line.partition(b":")
            if not colon or not HEADER_NAME.fullmatch(name.strip()):
                # Not a header: the rest of a body cut short, or noise. Reported only inside
                # a header block; noise between frames is only logged.
                message = f"Parse error: bad header line {_preview(line)}" if start else None
                self._resync(1, events, message)
                return True
            if name.strip().lower() != b"content-length":
                continue
            value = value.strip()
            if not value.isdigit() or (digits and value.lstrip(b"0") != digits.lstrip(b"0")):
                self._resync(
                    1,
                    events,
                    f"Parse error: bad header {_preview(line)}: expected 'Content-Length: <bytes>' "
                    "(a decimal count, once); skipped to the next Content-Length header",
                )
                return True
            digits = value
        if not digits:
            self._resync(
                1,
                events,
                "Parse error: a header block without Content-Length; "
                "every message needs 'Content-Length: <bytes>\\r\\n\\r\\n' before its body",
            )
            return True
        del buf[:pos]
        digits = digits.lstrip(b"0") or b"0"
        length = int(digits) if len(digits) <= MAX_LENGTH_DIGITS else None
        if length is None or length > self.max_frame_bytes:
            self._start_skip(length, digits)
            return True
        self._length = length
        self._body = bytearray()
        self._scanned = 0
        return True

    def _read_body(self, events: list[Event]) -> bool:
        assert self._length is not None
        need = self._length - len(self._body)
        if need and not self._buf:
            return False
        self._body += self._buf[:need]
        del self._buf[:need]
        found = HEADER_LINE.search(self._body, max(0, self._scanned - OVERLAP))
        if found is not None:
            cut = found.start()
            declared, body = self._length, bytes(self._body[:cut])
            self._buf[:0] = self._body[cut:]
            self._end_body()
            events.append(BadFrame(PARSE_ERROR, _overrun(declared, cut), body))
            return True
        self._scanned = len(self._body)
        if len(self._body) < self._length:
            return False
        partial = PARTIAL_HEADER.search(self._body, max(0, len(self._body) - OVERLAP))
        if partial is not None:
            # The declared length ends inside the next frame's header line.
            cut = partial.start()
            declared, body = self._length, bytes(self._body[:cut])
            self._buf[:0] = self._body[cut:]
            self._end_body()
            events.append(BadFrame(PARSE_ERROR, _overrun(declared, cut), body))
            return True
        events.append(Frame(bytes(self._body)))
        self._end_body()
        return True

    def _start_skip(self, length: int | None, digits: bytes) -> None:
        self._skipping = True
        self._skip_left = length if length is not None else 10 ** len(digits)
        self._declared = digits.decode("ascii").lstrip("0") or "0"
        self._head = bytearray()
        self._tail = b""
        self._refused = False

    def _skip(self, events: list[Event]) -> bool:
        """Discard an oversized body as it streams past, keeping its head, until its declared
        end or the next header line (its length may be a lie), whichever comes first."""
        if not self._buf:
            return False
        n = min(len(self._buf), self._skip_left)
        window = self._tail + bytes(self._buf[:n])
        found = HEADER_LINE.search(window)
        if found is not None:
            taken = found.start() - len(self._tail)
            if taken < 0:  # the header began in bytes already discarded: give them back
                self._buf[:0] = self._tail[taken:]
                taken = 0
            self._keep_head(bytes(self._buf[:taken]))
            del self._buf[:taken]
            self._finish_skip(events)
            return True
        self._keep_head(window[len(self._tail) :])
        self._tail = window[-OVERLAP:]
        del self._buf[:n]
        self._skip_left -= n
        if self._skip_left == 0:
            self._finish_skip(events)
        elif not self._refused and len(self._head) >= HEAD_BYTES:
            self._refuse(events)  # answer now; the rest is still discarded
        return True

    def _keep_head(self, data: bytes) -> None:
        if len(self._head) < HEAD_BYTES:
            self._head += data[: HEAD_BYTES - len(self._head)]

    def _refuse(self, events: list[Event]) -> None:
        self._refused = True
        events.append(
            BadFrame(
                INVALID_REQUEST,
                f"Invalid Request: a message of {self._declared} bytes is over the limit of "
                f"{self.max_frame_bytes} bytes (ctx-lsp serve --max-frame-bytes); it was skipped",
                bytes(self._head),
            )
        )

    def _finish_skip(self, events: list[Event]) -> None:
        if not self._refused:
            self._refuse(events)
        self._skipping = False
        self._head = bytearray()
        self._tail = b""

    def _end_body(self) -> None:
        self._length = None
        self._body = bytearray()
        self._scanned = 0

    def _resync(self, start: int, events: list[Event], message: str | None) -> None:
        """Drop what is buffered before `start` (never 0, where a header was just rejected,
        so there is always progress) and look for the next header line, reporting `message`
        if given. Until it is found, nothing else is parsed or reported."""
        if message is not None:
            events.append(BadFrame(PARSE_ERROR, message))
        start = max(start, 1)
        self.skipped_bytes += start
        del self._buf[:start]
        self._resyncing = True

    def _seek_header(self) -> bool:
        found = HEADER_LINE.search(self._buf)
        if found is None:
            drop = max(0, len(self._buf) - OVERLAP)  # keep what may begin a header line
            self.skipped_bytes += drop
            del self._buf[:drop]
            return False
        self.skipped_bytes += found.start()
        del self._buf[: found.start()]
        self._resyncing = False
        return True


def _overrun(declared: int, cut: int) -> str:
    return (
        f"Parse error: Content-Length {declared} is more than the message: the next frame's header "
        f"starts {cut} bytes into it; send the body's length in bytes (UTF-8)"
    )


def _partial_header_pattern() -> re.Pattern[bytes]:
    """The beginning of a header line at the very end of the bytes: `Cont`, `Content-Length: 4`."""
    parts = [re.escape(bytes([c])) for c in b"content-length"] + [rb"[ \t]{0,8}:[ \t]{0,8}\d{0,20}[ \t]{0,8}\r?"]
    pattern = b""
    for part in reversed(parts[1:]):
        pattern = b"(?:" + part + pattern + b")?"
    return re.compile(parts[0] + pattern + rb"\Z", re.IGNORECASE)


PARTIAL_HEADER = _partial_header_pattern()


def _preview(line: bytes, limit: int = 60) -> str:
    text = line[:limit].decode("utf-8", errors="replace")
    return repr(text + ("…" if len(line) > limit else ""))
