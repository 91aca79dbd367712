"""One frame's body → a JSON-RPC message to dispatch, or the error response the spec calls for.

Why not pygls's parsing (2.1.1, `pygls/io_.py`): it runs `json.loads(body,
object_hook=protocol.structure_message)`, and the hook sees *every* object in the body, not
just the message. A param value that holds a `"jsonrpc"` key (`{"query": {"jsonrpc":
"2.0"}}`) is taken for a message, fails to structure, and the whole request is dropped with
no answer (issue 12). A body that is not JSON, or JSON that is not a message (a batch, a
numeric method, `"jsonrpc": "1.0"`, invalid UTF-8, nesting past the recursion limit), is
dropped the same way. Here the body is parsed plainly and only its top-level object is
checked (this module) and structured (`protocol.py`), and every frame that can be answered
is: -32700 Parse error or -32600 Invalid Request, with the request's id when it can be
found, else null (JSON-RPC 2.0, §5).

Pure: bytes in, plain dicts out.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from ctx_lsp.errors import json_type
from ctx_lsp.server.framing import INVALID_REQUEST, PARSE_ERROR

MsgId = int | str
MAX_ID_SCAN_TOKENS = 100_000
"""How far into an unparseable body to look for its id (it is near the start in practice)."""
_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|[{}\[\]:,]|[^\s{}\[\]:,"]+')
"""JSON tokens, enough to walk the top level of a body `json.loads` refused."""
_INTEGER = re.compile(r"-?\d{1,30}")


@dataclass(frozen=True, slots=True)
class Message:
    """A well-formed JSON-RPC 2.0 message (request, notification or response), not yet
    structured into pygls/lsprotocol types."""

    data: dict[str, Any]

    @property
    def is_request(self) -> bool:
        return "method" in self.data and "id" in self.data

    @property
    def id(self) -> MsgId | None:
        return valid_id(self.data.get("id"))


@dataclass(frozen=True, slots=True)
class Reply:
    """An error response (or, for a batch, a list of them) to send instead of dispatching."""

    payload: dict[str, Any] | list[dict[str, Any]]


def parse_body(body: bytes) -> Message | Reply | None:
    """The message in `body`, or what to answer instead; None when nothing may be answered
    (a malformed response from the client, a batch of notifications)."""
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError as err:
        text = body.decode("utf-8", errors="replace")
        return Reply(
            error_response(
                recover_id(text),
                PARSE_ERROR,
                f"Parse error: the message is not valid UTF-8 (byte {err.start}); LSP messages are UTF-8 JSON",
            )
        )
    try:
        value = json.loads(text)
    except RecursionError:
        return Reply(error_response(recover_id(text), PARSE_ERROR, "Parse error: JSON nested too deeply"))
    except ValueError as err:  # JSONDecodeError, and integers over Python's digit limit
        return Reply(error_response(recover_id(text), PARSE_ERROR, f"Parse error: {err}"))
    return check_message(value)


def check_message(value: Any) -> Message | Reply | None:
    """JSON-RPC 2.0's rules for a request object, applied to a parsed body."""
    if isinstance(value, list):
        return _refuse_batch(value)
    if not isinstance(value, dict):
        return Reply(
            error_response(None, INVALID_REQUEST, f"Invalid Request: expected a JSON object, got {json_type(value)}")
        )
    problem = envelope_problem(value)
    if problem is None:
        return Message(value)
    if "method" not in value and "id" in value and ("result" in value or "error" in value):
        return None  # a malformed response: JSON-RPC never answers a response
    return Reply(error_response(valid_id(value.get("id")), INVALID_REQUEST, f"Invalid Request: {problem}"))


def envelope_problem(message: dict[str, Any]) -> str | None:
    """What makes `message` not a JSON-RPC 2.0 request, notification or response."""
    if message.get("jsonrpc") != "2.0":
        if "jsonrpc" not in message:
            return '\'jsonrpc\' is missing; send "jsonrpc": "2.0"'
        return f"'jsonrpc' must be \"2.0\", got {_short(message['jsonrpc'])}"
    if "id" in message and valid_id(message["id"]) is None:
        return f"'id' must be an integer or a string, got {json_type(message['id'])}"
    if "method" in message:
        method = message["method"]
        if not isinstance(method, str) or not method:
            return f"'method' must be a non-empty string, got {json_type(method)}"
        return None
    if "id" not in message:
        return "a message needs a 'method' (request, notification) or an 'id' (response)"
    if "result" not in message and "error" not in message:
        return "a response needs 'result' or 'error'"
    return None


def error_response(msg_id: MsgId | None, code: int, message: str, data: Any = None) -> dict[str, Any]:
    error: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        error["data"] = data
    return {"jsonrpc": "2.0", "id": msg_id, "error": error}


def valid_id(value: Any) -> MsgId | None:
    """LSP's `integer | string` id, else None."""
    if isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool)):
        return value
    return None


def recover_id(text: str) -> MsgId | None:
    """The id of a message whose body does not parse, found by walking the top level of the
    JSON tokens: a request whose body is cut short, nested too deeply or not UTF-8 still
    gets its error under its own id, so the client's wait ends. None if the top level is
    not an object or holds no valid id (never a guess from a nested object)."""
    depth = 0
    key: str | None = None
    after_colon = False
    for count, match in enumerate(_TOKEN.finditer(text)):
        token = match.group()
        if count == 0 and token != "{":
            return None
        if count >= MAX_ID_SCAN_TOKENS:
            return None
        if after_colon and depth == 1 and key == "id":
            return _id_token(token)
        after_colon = False
        if token in ("{", "["):
            depth += 1
        elif token in ("}", "]"):
            depth -= 1
            if depth == 0:
                return None
        elif depth == 1:
            if token == ":":
                after_colon = True
                continue
            key = _string_token(token) if token.startswith('"') and len(token) <= 16 else None
    return None


def _id_token(token: str) -> MsgId | None:
    if token.startswith('"'):
        return _string_token(token)
    if _INTEGER.fullmatch(token):
        return int(token)
    return None


def _string_token(token: str) -> str | None:
    try:
        value = json.loads(token)
    except ValueError:
        return None
    return value if isinstance(value, str) else None


def _refuse_batch(items: list[Any]) -> Reply | None:
    """LSP has no batches (JSON-RPC 2.0 §6 allows a server to process them, LSP clients never
    send them). Each request in one gets -32600 under its id, in an array as §6 asks; an empty
    batch gets one -32600 with id null; notifications in one are dropped."""
    if not items:
        return Reply(error_response(None, INVALID_REQUEST, "Invalid Request: an empty batch"))
    refused = "Invalid Request: batches are not supported by LSP; send each message in its own frame"
    replies = []
    for item in items:
        if isinstance(item, dict) and "method" in item and "id" not in item and envelope_problem(item) is None:
            continue  # a notification
        if isinstance(item, dict) and "method" not in item and "id" in item:
            continue  # a response
        msg_id = valid_id(item.get("id")) if isinstance(item, dict) else None
        replies.append(error_response(msg_id, INVALID_REQUEST, refused))
    return Reply(replies) if replies else None


def _short(value: Any) -> str:
    text = json.dumps(value) if isinstance(value, (str, int, float, bool)) or value is None else json_type(value)
    return text if len(text) <= 40 else text[:40] + "…"
