"""The JSON-RPC protocol: what pygls's `LanguageServerProtocol` does, minus the ways a request
can go unanswered or the process can keep what it no longer needs.

- **Raw params.** Custom `ctx/*` params reach our validators as plain dicts: pygls would
  otherwise turn them into namedtuples (renaming odd keys), and typed attrs params make the
  client hang on a bad field (STYLE §2). Methods lsprotocol does not type are structured
  as `RawRequest`/`RawNotification`, whose `params` is `Any`.
- **Only the top level is structured** (`receive`), never nested objects (envelope.py says
  why), and a message that does not structure (`workspace/executeCommand` without
  `command`) is answered with -32602 naming the field instead of being dropped.
- **Lifecycle.** A second `initialize` is refused with -32600 (pygls would re-run it, and a
  new engine would wait for an `initialized` that never comes), and so is every request
  after `shutdown` (pygls drops them silently; LSP says to answer with InvalidRequest).
- **Shutdown works with requests in flight** (`lsp_shutdown`).
- **Before `initialize`** every request but `shutdown` is answered with -32002
  (ServerNotInitialized), as LSP says; notifications other than `exit` are left to pygls.
- **No leak.** pygls keeps the future of every notification, and of the handler behind
  every built-in (didOpen, didChange, executeCommand, …), in `_request_futures` forever;
  entries are removed here when they finish.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable, Generator
from concurrent.futures import Future
from typing import Any

import attrs
import cattrs
from lsprotocol import types as lsp
from pygls.protocol import JsonRPCResponseMessage, LanguageServerProtocol, lsp_method

from ctx_lsp.server.envelope import Message, Reply, error_response, parse_body, recover_id
from ctx_lsp.server.framing import INVALID_REQUEST, BadFrame

log = logging.getLogger(__name__)

INVALID_PARAMS = -32602
SERVER_NOT_INITIALIZED = -32002
"""LSP's answer to a request sent before `initialize` (pygls answered -32803 from the handler)."""
MAX_STRUCTURE_ERRORS = 3
"""How many of cattrs's complaints about a message go into the error (the first few say it)."""


@attrs.define
class RawRequest:
    """A request whose params stay as parsed (see module docstring)."""

    id: int | str
    method: str
    jsonrpc: str
    params: Any = None


@attrs.define
class RawNotification:
    """A notification whose params stay as parsed."""

    method: str
    jsonrpc: str
    params: Any = None


class CtxProtocol(LanguageServerProtocol):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.initialize_received = False

    # ------------------------------------------------------------------ receiving
    def receive(self, body: bytes) -> None:
        """Handle one frame's body: parse, check, structure, dispatch, or answer the error."""
        parsed = parse_body(body)
        if isinstance(parsed, Reply):
            self._send_data(parsed.payload)
            return
        if parsed is None:
            log.warning("ignored a malformed message from the client")
            return
        try:
            message = self.structure_message(parsed.data)
        except Exception as err:
            self._refuse_unstructured(parsed, err)
            return
        if parsed.is_request and getattr(message, "id", None) is None:
            self._send_data(
                error_response(
                    parsed.id,
                    INVALID_REQUEST,
                    f"Invalid Request: {parsed.data['method']!r} is a notification; send it without an id",
                )
            )
            return
        self.handle_message(message)

    def refuse_frame(self, bad: BadFrame) -> None:
        """Answer a frame the decoder could not use, under its id if its start shows one."""
        log.warning("refused a frame: %s", bad.message)
        msg_id = recover_id(bad.head.decode("utf-8", errors="replace")) if bad.head else None
        self._send_data(error_response(msg_id, bad.code, bad.message))

    def structure_message(self, data: dict[str, Any]) -> Any:
        """A checked top-level message (envelope.py) → its lsprotocol type, or a raw one."""
        if "method" in data:
            typed = self.get_message_type(data["method"])
            fallback = RawRequest if "id" in data else RawNotification
            return self._converter.structure(data, typed or fallback)
        if "error" in data:
            return self._converter.structure(data, lsp.ResponseErrorMessage)
        response_type = self._result_types.pop(data["id"], None) or JsonRPCResponseMessage
        return self._converter.structure(data, response_type)

    def _refuse_unstructured(self, parsed: Message, err: Exception) -> None:
        method = parsed.data.get("method", "")
        if not parsed.is_request:
            log.warning("dropped a %s notification that does not match its type: %s", method or "response", err)
            return
        fields, problems = _structure_problems(err)
        message = "; ".join(problems) + f" ({method})"
        self._send_data(error_response(parsed.id, INVALID_PARAMS, message, {"field": fields[0]} if fields else None))

    # ------------------------------------------------------------------ lifecycle
    def handle_message(self, message: Any) -> None:
        method = getattr(message, "method", None)
        msg_id = getattr(message, "id", None)
        is_request = method is not None and msg_id is not None
        if self._shutdown and method != lsp.EXIT:
            if is_request:
                self._refuse(msg_id, "the server is shutting down (shutdown was received); only 'exit' is accepted")
            return
        if method == lsp.INITIALIZE and is_request:
            if self.initialize_received:
                self._refuse(msg_id, "the server is already initialized; send initialize once per session")
                return
            self.initialize_received = True
        elif is_request and not self.initialize_received and method != lsp.SHUTDOWN:
            # LSP: before initialize, a request is answered with ServerNotInitialized.
            self._send_data(
                error_response(
                    msg_id, SERVER_NOT_INITIALIZED, f"Server not initialized: send initialize before {method!r}"
                )
            )
            return
        super().handle_message(message)

    @lsp_method(lsp.SHUTDOWN)
    def lsp_shutdown(self, *args: Any) -> Generator[Any, Any, None]:
        """pygls's, but it cancels the other requests from a copy of `_request_futures`:
        cancelling a future runs its callbacks at once, and they remove it from the dict,
        so pygls's loop over the dict itself fails ("dictionary changed size during
        iteration") and `shutdown` is answered with -32603 instead of shutting down."""
        if (user_handler := self.fm.features.get(lsp.SHUTDOWN)) is not None:
            yield user_handler, args, None
        current_id = self.msg_id
        for msg_id, future in list(self._request_futures.items()):
            if msg_id != current_id and not future.done():
                future.cancel()
        self._shutdown = True

    def _refuse(self, msg_id: Any, problem: str) -> None:
        self._send_data(error_response(msg_id, INVALID_REQUEST, f"Invalid Request: {problem}"))

    # ------------------------------------------------------------------ bookkeeping
    def _execute_handler(
        self,
        msg_id: Any,
        handler: Callable[..., Any],
        callback: Callable[[Future[Any]], None],
        args: tuple[Any, ...] | None = None,
        kwargs: dict[str, Any] | None = None,
    ) -> None:
        super()._execute_handler(msg_id, handler, callback, args, kwargs)
        future = self._request_futures.get(msg_id)
        if future is not None:
            future.add_done_callback(functools.partial(self._forget, msg_id))

    def _forget(self, msg_id: Any, future: Any) -> None:
        if self._request_futures.get(msg_id) is future:
            del self._request_futures[msg_id]

    @property
    def pending_futures(self) -> int:
        """Futures pygls still tracks (in-flight requests); for the leak test."""
        return len(self._request_futures)


def _structure_problems(err: Exception) -> tuple[list[str], list[str]]:
    """cattrs's complaints as (fields, "field: problem" lines), fields in the wire's camelCase."""
    try:
        lines = cattrs.transform_error(err) if isinstance(err, cattrs.BaseValidationError) else [str(err)]
    except Exception:
        lines = [str(err)]
    fields, problems = [], []
    for line in lines[:MAX_STRUCTURE_ERRORS]:
        problem, _, path = line.rpartition(" @ ")
        if not problem:
            problems.append(f"params: {line}")
            continue
        field = _wire_path(path)
        fields.append(field)
        problems.append(f"{field}: {problem}")
    return fields, problems


def _wire_path(path: str) -> str:
    """`$.params.process_id` → `processId`; `$.id` → `id`."""
    parts = path.removeprefix("$").strip(".").split(".")
    if parts and parts[0] == "params" and len(parts) > 1:
        parts = parts[1:]
    return ".".join(_camel(p) for p in parts if p) or "params"


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(word[:1].upper() + word[1:] for word in rest)
