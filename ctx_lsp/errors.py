"""Typed errors of the core.

The core raises these; each adapter (LSP server, CLI, MCP) maps them once at its edge.
Every message is meant for the person or agent who sent the request, so it names what was
wrong and how to fix it.
"""

from __future__ import annotations


class CtxError(Exception):
    """Base for failures a caller can act on."""


class InvalidParam(CtxError):
    """A request parameter (or config key) has the wrong type or value.

    `field` is the dotted path of the offending parameter (`focus.position.line`), so the
    LSP adapter can put it in the JSON-RPC error's `data` and a client can highlight it.
    """

    def __init__(self, field: str, problem: str, fix: str) -> None:
        super().__init__(f"{field}: {problem}; {fix}")
        self.field = field
        self.problem = problem
        self.fix = fix


class OutsideWorkspace(CtxError):
    """A URI or path outside every workspace folder: refused, never read."""

    def __init__(self, target: str) -> None:
        super().__init__(f"{target} is outside the workspace folders; ctx-lsp only reads files inside them")
        self.target = target


class NotFound(CtxError):
    """A file inside the workspace that does not exist, or that the index skipped."""


class ConfigError(CtxError):
    """A configuration value with the wrong type; names the key path."""

    def __init__(self, key: str, problem: str) -> None:
        super().__init__(f"{key}: {problem}")
        self.key = key


def type_problem(value: object, expected: str) -> str:
    """What is wrong with a field that must be `expected` (e.g. "a string"): missing (absent,
    null or empty) or of another JSON type. The `problem` of an `InvalidParam`."""
    return "is required" if value in (None, "") else f"expected {expected}, got {json_type(value)}"


def json_type(value: object) -> str:
    """JSON's name for a value's type: an agent sent JSON and thinks in JSON types."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, dict):
        return "object"
    if isinstance(value, (list, tuple)):
        return "array"
    return type(value).__name__
