"""End to end, issue 12's protocol attacks on a real `python -m ctx_lsp serve`, in raw bytes
(tests/e2e/raw_client.py): every request is answered, a malformed frame gets the JSON-RPC
error the spec names, the stream recovers from any bad header, the event loop never waits
behind a huge message, and the process ends when LSP says it should.

Attacks that only need an answer share one server (`shared`); those that could wedge the
stream or end the process get their own (`server`).
"""

from __future__ import annotations

import json
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ctx_lsp.params import MAX_LIBRARY_NAME_CHARS
from ctx_lsp.server.framing import INVALID_REQUEST, MAX_FRAME_BYTES, PARSE_ERROR
from tests.e2e.helpers import write_workspace
from tests.e2e.raw_client import SERVE, RawServer, frame, notification, read_message, request

INVALID_PARAMS = -32602
PROMPT_S = 5.0
"""An answer that must not wait behind other work comes within this (it took 13–160 s)."""


@pytest.fixture(scope="module")
def shared(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RawServer]:
    with RawServer(write_workspace(tmp_path_factory.mktemp("shared"))) as server:
        server.initialize()
        yield server


@pytest.fixture
def server(tmp_path: Path) -> Iterator[RawServer]:
    with RawServer(write_workspace(tmp_path)) as raw:
        raw.initialize()
        yield raw


def answers(server: RawServer) -> None:
    """The server still answers a well-formed request."""
    reply = server.call("ctx/resolveLibrary", {"name": "pygls"})
    assert "result" in reply, reply


# ---------------------------------------------------------------- 1. no param is a message

EVERY_METHOD = [
    ("ctx/bundle", {"query": "VALUE", "budget": 3000}, "query"),
    ("ctx/outline", {"uri": "VALUE"}, "uri"),
    ("ctx/search", {"query": "VALUE"}, "query"),
    ("ctx/symbol", {"name": "VALUE"}, "name"),
    ("ctx/docs", {"library": "VALUE", "topic": "x"}, "library"),
    ("ctx/resolveLibrary", {"name": "VALUE"}, "name"),
    ("ctx/window", {"messages": "VALUE"}, "messages"),
    ("workspace/executeCommand", {"command": "ctx.status", "arguments": ["VALUE", 1]}, "arguments"),
]
LOOKALIKES = {"jsonrpc only": {"jsonrpc": "2.0"}, "a whole exit message": {"jsonrpc": "2.0", "id": 5, "method": "exit"}}


def with_value(params: dict[str, Any], value: Any) -> dict[str, Any]:
    return json.loads(json.dumps(params).replace('"VALUE"', json.dumps(value)))


@pytest.mark.parametrize("lookalike", list(LOOKALIKES))
@pytest.mark.parametrize(("method", "params", "field"), EVERY_METHOD, ids=[m for m, _, _ in EVERY_METHOD])
def test_a_param_holding_jsonrpc_is_answered_naming_the_field(
    shared: RawServer, method: str, params: dict[str, Any], field: str, lookalike: str
) -> None:
    """Ensure that a param value that is an object with a "jsonrpc" key is a param like any
    other: refused with -32602 naming its field (pygls took it for a message and dropped the
    request, for every method)."""
    error = shared.error(shared.request(method, with_value(params, LOOKALIKES[lookalike])))
    assert error["code"] == INVALID_PARAMS, error
    assert error["data"]["field"] == field and error["message"].startswith(field)
    answers(shared)


# ---------------------------------------------------------------- 2. malformed frames


def test_a_batch_gets_an_array_of_refusals(shared: RawServer) -> None:
    """Ensure that a batch (which LSP does not have) is answered as JSON-RPC says, one
    -32600 per request, in an array; an empty one with a single -32600."""
    shared.send([request(41, "ctx/search", {"query": "x"}), request(42, "shutdown")])
    replies = shared.batch_response()
    assert [(r["id"], r["error"]["code"]) for r in replies] == [(41, INVALID_REQUEST), (42, INVALID_REQUEST)]
    shared.send([])
    assert shared.error(None)["code"] == INVALID_REQUEST
    answers(shared)


ENVELOPES = [
    ("numeric method", {"jsonrpc": "2.0", "id": 51, "method": 5}, 51, INVALID_REQUEST, "'method'"),
    ("jsonrpc 1.0", {"jsonrpc": "1.0", "id": 52, "method": "ctx/search"}, 52, INVALID_REQUEST, "'jsonrpc'"),
    ("no jsonrpc", {"id": 53, "method": "ctx/search", "params": {"query": "x"}}, 53, INVALID_REQUEST, "'jsonrpc'"),
    ("not JSON", b"{this is not json", None, PARSE_ERROR, "Parse error"),
    ("a JSON string", b'"hello"', None, INVALID_REQUEST, "expected a JSON object"),
    ("a JSON number", b"42", None, INVALID_REQUEST, "expected a JSON object"),
    (
        "invalid UTF-8 in a string",
        b'{"jsonrpc": "2.0", "id": 54, "method": "ctx/search", "params": {"query": "\xff\xfe\xc0"}}',
        54,
        PARSE_ERROR,
        "UTF-8",
    ),
]


@pytest.mark.parametrize(
    ("body", "msg_id", "code", "words"), [case[1:] for case in ENVELOPES], ids=[case[0] for case in ENVELOPES]
)
def test_malformed_messages_get_the_spec_error(
    shared: RawServer, body: Any, msg_id: int | None, code: int, words: str
) -> None:
    """Ensure that each frame pygls dropped in silence gets JSON-RPC's error: -32700 for a
    body that is not (UTF-8) JSON, -32600 for JSON that is not a request; under the
    request's id when it has one, else null."""
    shared.send_bytes(frame(body))
    error = shared.error(msg_id)
    assert error["code"] == code and words in error["message"], error
    answers(shared)


# ---------------------------------------------------------------- 3. the stream recovers

FIRST = request(61, "ctx/search", {"query": "first"})
FIRST_LENGTH = len(json.dumps(FIRST))
BAD_HEADERS: dict[str, tuple[bytes, tuple[int | None, int] | None]] = {
    # name: (bytes sent before a good request, the (id, code) they are refused with)
    "length too small": (frame(FIRST, length=10), (None, PARSE_ERROR)),
    "negative length": (frame(FIRST, length=-5), (None, PARSE_ERROR)),
    "non-numeric length": (frame(FIRST, length="twelve"), (None, PARSE_ERROR)),
    "length with a plus sign": (frame(FIRST, length=f"+{FIRST_LENGTH}"), (None, PARSE_ERROR)),
    "length that swallows the next frame": (frame(FIRST, length=FIRST_LENGTH + 40), (61, PARSE_ERROR)),
    "garbage before the frame": (b"GET / HTTP/1.1\r\nsome bytes\r\n\r\nmore", None),
    "length 10**12": (frame(FIRST, length=10**12), (61, INVALID_REQUEST)),
    "length 2**63-1": (frame(FIRST, length=2**63 - 1), (61, INVALID_REQUEST)),
    "length 10**20": (frame(FIRST, length=10**20), (61, INVALID_REQUEST)),
}


@pytest.mark.parametrize("name", list(BAD_HEADERS))
def test_the_stream_recovers_after_a_bad_header(server: RawServer, name: str) -> None:
    """Ensure that after a bad Content-Length the server reports it (under the request's id
    when the frame shows it), resynchronises on the next `Content-Length:` header and
    answers the requests after it; that bytes that are no header at all are skipped; and
    that an absurd length is refused, never allocated, with the process alive (pygls never
    answered again, or exited)."""
    bad, refused = BAD_HEADERS[name]
    server.send_bytes(bad + frame(request(62, "ctx/search", {"query": "second"})))
    if refused is not None:
        msg_id, code = refused
        assert server.error(msg_id)["code"] == code
    assert "result" in server.response(62)
    answers(server)
    assert server.proc.poll() is None


def test_a_lowercase_header_is_a_header(server: RawServer) -> None:
    """Ensure that header names are matched case-insensitively, as HTTP-style headers are."""
    server.send_bytes(frame(request(71, "ctx/search", {"query": "x"}), header="content-length"))
    assert "result" in server.response(71)
    server.send_bytes(frame(request(72, "ctx/search", {"query": "x"}), header="CONTENT-LENGTH"))
    assert "result" in server.response(72)


def test_a_length_too_large_is_refused_once_input_stalls(server: RawServer) -> None:
    """Ensure that a client that declared more bytes than it sent, and now waits, gets an
    error under its request's id instead of waiting forever."""
    server.send_bytes(frame(request(81, "ctx/search", {"query": "x"}), length=500))
    error = server.error(81)
    assert error["code"] == PARSE_ERROR and "Content-Length 500" in error["message"]
    answers(server)


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise AssertionError("no VmRSS")


def test_a_frame_over_the_limit_is_skipped_without_being_held(server: RawServer) -> None:
    """Ensure that a message larger than the 16 MiB limit, really sent, is refused under its
    id while it streams past, never held in memory, and the request after it is answered."""
    assert "result" in server.call("ctx/bundle", {"query": "count tokens", "budget": 2000})  # all loaded
    before = rss_mb(server.proc.pid)
    head = b'{"jsonrpc": "2.0", "id": 91, "method": "ctx/search", "params": {"query": "'
    size = MAX_FRAME_BYTES + 8 * 1024 * 1024
    server.send_bytes(f"Content-Length: {size}\r\n\r\n".encode() + head)
    left, chunk = size - len(head), b"a" * (1024 * 1024)
    while left:
        server.send_bytes(chunk[:left])
        left -= min(left, len(chunk))
    error = server.error(91)
    assert error["code"] == INVALID_REQUEST and f"over the limit of {MAX_FRAME_BYTES} bytes" in error["message"]
    answers(server)
    assert rss_mb(server.proc.pid) - before < 40


def test_a_body_the_loop_would_decode_for_long_is_refused(server: RawServer) -> None:
    """Ensure that a 20 MiB didOpen, which the 64 MiB cap let through to be JSON-decoded on
    the event loop (the GIL makes a thread no better), is refused under the 16 MiB cap with
    -32600 naming the limit, never reaches the engine, and the next request is answered."""
    uri = (server.workspace or Path()).joinpath("big.py").as_uri()
    text = "x = 1\n" * (20 * 1024 * 1024 // 6)
    server.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "python", "version": 1,
                                                            "text": text}})  # fmt: skip
    error = server.error(None, timeout=30)
    assert error["code"] == INVALID_REQUEST and f"over the limit of {16 * 1024 * 1024} bytes" in error["message"]
    answers(server)
    status = server.call("workspace/executeCommand", {"command": "ctx.status"})["result"]
    assert status["refused"] == {}  # the engine never saw it (over index.max_file_bytes it would say so)


def test_the_frame_limit_is_configurable(tmp_path: Path) -> None:
    """Ensure that `serve --max-frame-bytes` sets the limit."""
    with RawServer(write_workspace(tmp_path), args=["--max-frame-bytes", "2000"]) as server:
        server.initialize()
        server.request("ctx/search", {"query": "x" * 3000}, msg_id=95)
        assert "over the limit of 2000 bytes" in server.error(95)["message"]
        answers(server)


# ---------------------------------------------------------------- 4. the loop never blocks


def big_python(megabytes: float) -> str:
    """About `megabytes` MB of Python (cut at a definition), many small functions."""
    size = int(megabytes * 1_000_000)
    line = "def handler_{0}(request):\n    return request.respond({0})\n\n"
    text = "".join(line.format(i) for i in range(size // len(line.format(0))))
    return text[: text.rfind("\n\n", 0, size) + 2]


def test_a_huge_did_open_does_not_stall_the_next_request(server: RawServer) -> None:
    """Ensure that a 9 MB didOpen (over index.max_file_bytes: not analysed, like a file that
    size on disk) leaves the next requests prompt, a bundle included (it stalled them 15 s)."""
    uri = (server.workspace or Path()).joinpath("big.py").as_uri()
    server.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "python", "version": 1,
                                                            "text": big_python(9)}})  # fmt: skip
    started = time.monotonic()
    answers(server)
    assert "result" in server.call("ctx/bundle", {"query": "handler_5 request", "budget": 2000})
    assert time.monotonic() - started < PROMPT_S
    status = server.call("workspace/executeCommand", {"command": "ctx.status"})["result"]
    assert status["refused"] == {"big.py": "too_large"}  # reported, like a file that size on disk


def test_buffers_are_analysed_off_the_loop_and_in_order(server: RawServer) -> None:
    """Ensure that while a large buffer (just under the limit: about a second to analyse) is
    analysed, a request that does not read the workspace is answered first, and one that
    does, sent before it, waits and sees the buffer (the analysis blocked every request)."""
    uri = (server.workspace or Path()).joinpath("pkg", "extra.py").as_uri()
    text = big_python(0.95) + "def only_in_the_editor_buffer():\n    pass\n"
    server.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "python", "version": 1,
                                                            "text": text}})  # fmt: skip
    search = server.request("ctx/search", {"query": "only_in_the_editor_buffer"})
    resolve = server.request("ctx/resolveLibrary", {"name": "pygls"})
    order = []
    for reply in server.responses(timeout=60):
        order.append(reply["id"])
        if reply["id"] == search:
            assert any(h["symbol"] == "only_in_the_editor_buffer" for h in reply["result"]["hits"]), reply
            break
    assert order == [resolve, search]


@pytest.mark.parametrize("size", [1_000_000, 10_000_000])
def test_a_huge_library_name_is_refused_fast(shared: RawServer, size: int) -> None:
    """Ensure that a 1 MB / 10 MB library name is refused at the edge, naming the field and
    the limit (1 MB took 13 s; 10 MB 160 s), and that the refusal does not echo it."""
    started = time.monotonic()
    reply = shared.call("ctx/resolveLibrary", {"name": "x" * size}, timeout=60)
    assert time.monotonic() - started < PROMPT_S
    error = reply["error"]
    assert error["code"] == INVALID_PARAMS and error["data"] == {"field": "name"}
    assert f"over the limit of {MAX_LIBRARY_NAME_CHARS}" in error["message"] and len(error["message"]) < 500
    docs = shared.error(shared.request("ctx/docs", {"library": "x" * size, "topic": "y"}))
    assert docs["data"] == {"field": "library"}


def test_an_error_never_echoes_a_huge_value(shared: RawServer) -> None:
    """Ensure that a refused 1 MB path comes back cut, not as a 1 MB message."""
    error = shared.error(shared.request("ctx/outline", {"uri": "file:///" + "y" * 1_000_000}))
    assert error["code"] == INVALID_PARAMS and len(json.dumps(error)) < 1000


# ---------------------------------------------------------------- 5. lifecycle and odd shapes


def test_a_second_initialize_is_refused_and_nothing_hangs(server: RawServer) -> None:
    """Ensure that a second initialize gets -32600 and leaves the session as it was: a
    search (which waits for the index) is still answered (it hung until another
    `initialized`)."""
    error = server.error(server.request("initialize", {"processId": None, "capabilities": {}}))
    assert error["code"] == INVALID_REQUEST and "already initialized" in error["message"]
    assert "result" in server.call("ctx/search", {"query": "count tokens"})


def test_requests_before_initialize_get_server_not_initialized(tmp_path: Path) -> None:
    """Ensure that a request sent before initialize is answered with LSP's -32002, and
    that the session then starts normally."""
    with RawServer(write_workspace(tmp_path)) as raw:
        for method, params in (
            ("ctx/search", {"query": "count"}),
            ("workspace/executeCommand", {"command": "ctx.status"}),
        ):
            error = raw.error(raw.request(method, params))
            assert error["code"] == -32002 and "initialize" in error["message"], error
        raw.initialize()
        assert "result" in raw.call("ctx/search", {"query": "count tokens"})


@pytest.mark.parametrize("depth", [990, 1000, 5000, 100_000])
def test_deeply_nested_params_are_answered(shared: RawServer, depth: int) -> None:
    """Ensure that params nested 990+ levels deep get an answer under the request's id
    (-32602 or -32700), not silence."""
    body = '{"jsonrpc": "2.0", "id": 100, "method": "ctx/search", "params": {"query": '
    body += '{"a": ' * depth + '"x"' + "}" * depth + "}}"
    shared.send_bytes(frame(body))
    assert shared.error(100)["code"] in (INVALID_PARAMS, PARSE_ERROR)
    answers(shared)


@pytest.mark.parametrize(
    ("params", "outcome"),
    [
        ({"command": "ctx.status", "arguments": []}, "result"),
        ({"command": "ctx.status", "arguments": None}, "result"),
        ({"arguments": []}, "error"),
        ({"arguments": None}, "error"),
        (None, "error"),
    ],
)
def test_execute_command_with_empty_or_null_arguments_is_answered(
    shared: RawServer, params: dict[str, Any] | None, outcome: str
) -> None:
    """Ensure that executeCommand with `arguments` [] or null is answered, and without a
    `command` is refused with -32602 naming it (pygls dropped it)."""
    reply = shared.call("workspace/executeCommand", params)
    assert outcome in reply, reply
    if outcome == "error":
        assert reply["error"]["code"] == INVALID_PARAMS and reply["error"]["data"]["field"] in ("command", "params")


def test_requests_after_shutdown_are_refused_and_exit_is_zero(server: RawServer) -> None:
    """Ensure that after `shutdown` every request gets -32600 "shutting down" (pygls sent
    nothing), and that `exit` then ends the process with code 0."""
    server.send_bytes(frame(request(111, "shutdown")) + frame(request(112, "ctx/search", {"query": "x"})))
    assert server.response(111)["result"] is None
    error = server.error(112)
    assert error["code"] == INVALID_REQUEST and "shutting down" in error["message"]
    server.notify("exit")
    assert server.wait_exit() == 0


def test_exit_without_shutdown_is_code_one(server: RawServer) -> None:
    """Ensure that `exit` without `shutdown` ends the process with code 1, as LSP says
    (pygls exited 0)."""
    server.notify("exit")
    assert server.wait_exit() == 1


# ---------------------------------------------------------------- 6. the server follows its client


def test_the_server_exits_when_its_client_process_dies(tmp_path: Path) -> None:
    """Ensure that the server exits once the process named by initialize's processId dies
    (it kept running)."""
    client = subprocess.Popen(["sleep", "600"])
    try:
        with RawServer(write_workspace(tmp_path)) as server:
            server.initialize(processId=client.pid)
            answers(server)
            client.kill()
            client.wait()
            assert server.wait_exit() == 1
    finally:
        client.kill()


def test_a_process_id_that_is_not_visible_is_not_watched(tmp_path: Path) -> None:
    """Ensure that a processId that is not a live process here (a client in another PID
    namespace) does not end the server at once."""
    with RawServer(write_workspace(tmp_path)) as server:
        server.initialize(processId=2**22 + 12345)
        time.sleep(1.5)
        answers(server)


def test_the_server_exits_when_stdin_closes(server: RawServer) -> None:
    """Ensure that the server exits when its input closes, without shutdown: code 1."""
    assert server.proc.stdin is not None
    server.proc.stdin.close()
    assert server.wait_exit() == 1


# ---------------------------------------------------------------- the same over TCP


def test_tcp_reads_frames_the_same_way(tmp_path: Path) -> None:
    """Ensure that `serve --tcp` uses the same reader (a lowercase header, a bad length, a
    deep body are all handled) and that `exit` ends the process with LSP's code."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    workspace = write_workspace(tmp_path)
    proc = subprocess.Popen([*SERVE, "--tcp", f"127.0.0.1:{port}"], cwd=workspace, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 10
        while True:
            try:
                conn = socket.create_connection(("127.0.0.1", port), timeout=10)
                break
            except OSError:
                assert time.monotonic() < deadline and proc.poll() is None, "the TCP server never listened"
                time.sleep(0.1)
        with conn, conn.makefile("rb") as stream:
            init = {"processId": None, "capabilities": {}, "rootUri": workspace.as_uri()}
            conn.sendall(frame(request(1, "initialize", init), header="content-length"))
            assert "result" in read_message(stream)
            conn.sendall(frame(request(2, "ctx/search", {"query": "x"}), length=-1))
            conn.sendall(frame(request(3, "ctx/search", {"query": {"jsonrpc": "2.0"}})))
            replies = [read_message(stream), read_message(stream)]
            assert [(r["id"], r["error"]["code"]) for r in replies] == [(None, PARSE_ERROR), (3, INVALID_PARAMS)]
            conn.sendall(frame(request(4, "shutdown")) + frame(notification("exit")))
            assert read_message(stream)["id"] == 4
        assert proc.wait(10) == 0
    finally:
        proc.kill()
        proc.wait()
