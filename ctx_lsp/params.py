"""Raw request params (plain dicts) → the core's typed requests: the one set of rules.

The LSP server, the CLI (argparse → dict → here) and the MCP server all call these
parsers, so a request means the same and fails the same whichever way it arrives. Every
problem raises `InvalidParam` naming the field (as a dotted path) and the fix, so an
agent that sent `{"budget": "8k"}` learns exactly what to send instead. Unknown keys are
refused with a "did you mean" hint: a misspelt `bugdet` silently ignored would produce a
bundle with the wrong budget and no clue why.

Rules that need the configuration (is this profile defined?) are checked by the engine,
with the same `InvalidParam`.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from enum import Enum
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import urlparse
from urllib.request import url2pathname

from ctx_lsp.errors import InvalidParam, json_type, type_problem
from ctx_lsp.history import validate_artifacts, validate_messages
from ctx_lsp.index.symbols import MAX_TOKENS_CAP, MIN_MAX_TOKENS
from ctx_lsp.vocabulary import (
    BundleRequest,
    DocsRequest,
    Focus,
    Format,
    LibraryDocsRequest,
    OutlineRequest,
    ResolveLibraryRequest,
    SearchRequest,
    SymbolRequest,
    Tier,
    Utilization,
    WindowRequest,
)

MAX_BUDGET_TOKENS = 2_000_000
"""Larger than any model's context window: a bigger number is a mistake, not a request."""
MAX_SEARCH_LIMIT = 200
LSP_PROTOCOL_KEYS = frozenset({"workDoneToken", "partialResultToken"})
"""Standard LSP progress tokens a client may add to any request."""

BUNDLE_KEYS = frozenset(
    {
        "query",
        "agent",
        "budget",
        "model",
        "utilization",
        "profile",
        "focus",
        "open",
        "tier",
        "messages",
        "summary",
        "artifacts",
        "docs",
        "format",
    }
)
WINDOW_KEYS = frozenset({"messages", "budget", "model", "utilization", "summary"})
SYMBOL_KEYS = frozenset({"name", "path", "include_body", "max_tokens"})
MAX_SYMBOL_NAME_CHARS = 300
"""Longer than any real dotted name: a longer `name` is a pasted body or a query."""
MAX_LIBRARY_NAME_CHARS = 200
"""Longer than any package name: a longer one is a mistake, and matching it against every
installed distribution takes seconds per megabyte (issue 12)."""

E = TypeVar("E", bound=Enum)


# ---------------------------------------------------------------- one parser per request


def parse_bundle(params: Any) -> BundleRequest:
    p = require_object(params, "ctx/bundle")
    check_keys(p, BUNDLE_KEYS)
    open_value = p.get("open")
    if open_value is None:
        open_value = []
    if not isinstance(open_value, list):
        raise InvalidParam(
            "open", f"expected a list of file URIs, got {json_type(open_value)}", "pass open: ['file:///ws/a.py', ...]"
        )
    agent = get_str(p, "agent", default="default") or "default"
    if not agent.strip():
        raise InvalidParam("agent", "is empty", "pass an agent name such as 'implementer', or omit it")
    budget, model, utilization = parse_budget_fields(p)
    tier = get_int(p, "tier", lo=1, hi=3, example=2)
    return BundleRequest(
        query=get_str(p, "query", default="") or "",
        agent=agent,
        budget=budget,
        model=model,
        utilization=utilization,
        profile=get_str(p, "profile"),
        tier=Tier(tier) if tier is not None else None,
        focus=parse_focus(p["focus"]) if p.get("focus") is not None else None,
        open=tuple(str(uri_to_path(u, f"open[{i}]")) for i, u in enumerate(open_value)),
        format=get_choice(p, "format", Format, Format.MARKDOWN, "use 'markdown' or 'xml'") or Format.MARKDOWN,
        messages=tuple(validate_messages(p["messages"])) if p.get("messages") is not None else (),
        summary=get_str(p, "summary"),
        artifacts=tuple(validate_artifacts(p.get("artifacts"))),
        docs=parse_docs_list(p.get("docs")),
    )


def parse_window(params: Any) -> WindowRequest:
    p = require_object(params, "ctx/window")
    check_keys(p, WINDOW_KEYS)
    if "messages" not in p:
        raise InvalidParam("messages", "is required", "pass the conversation as a list of {role, content} objects")
    budget, model, utilization = parse_budget_fields(p)
    return WindowRequest(
        messages=tuple(validate_messages(p["messages"])),
        budget=budget,
        model=model,
        utilization=utilization,
        summary=get_str(p, "summary"),
    )


def parse_outline(params: Any) -> OutlineRequest:
    p = require_object(params, "ctx/outline")
    check_keys(p, frozenset({"uri", "tier"}))
    if "uri" not in p:
        raise InvalidParam("uri", "is required", "pass the file's URI, e.g. 'file:///ws/pkg/mod.py'")
    path = uri_to_path(p["uri"], "uri")
    tier = get_int(p, "tier", lo=1, hi=3, default=1, example=2)
    return OutlineRequest(str(path), Tier(tier or 1))


def parse_search(params: Any) -> SearchRequest:
    p = require_object(params, "ctx/search")
    check_keys(p, frozenset({"query", "limit"}))
    query = get_str(p, "query", required=True) or ""
    if not query.strip():
        raise InvalidParam("query", "is empty", "pass the words or identifiers to look for")
    limit = get_int(p, "limit", lo=1, hi=MAX_SEARCH_LIMIT, default=20, example=20)
    return SearchRequest(query, limit or 20)


def parse_docs(params: Any) -> LibraryDocsRequest:
    p = require_object(params, "ctx/docs")
    check_keys(p, frozenset({"library", "topic", "agent", "max_tokens"}))
    library = get_str(p, "library", required=True) or ""
    if not library.strip():
        raise InvalidParam("library", "is empty", "pass a library name such as 'pygls'")
    check_library_name(library, "library")
    return LibraryDocsRequest(
        library=library,
        topic=get_str(p, "topic"),
        agent=get_str(p, "agent", default="default") or "default",
        max_tokens=get_int(p, "max_tokens", lo=1, hi=MAX_BUDGET_TOKENS, example=1500),
    )


def parse_symbol(params: Any) -> SymbolRequest:
    p = require_object(params, "ctx/symbol")
    check_keys(p, SYMBOL_KEYS)
    name = (get_str(p, "name", required=True) or "").strip()
    if not name:
        raise InvalidParam("name", "is empty", "pass a qualname such as 'Client.send' or a bare name such as 'send'")
    if len(name) > MAX_SYMBOL_NAME_CHARS or "\n" in name:
        raise InvalidParam(
            "name",
            "is not a symbol name (too long, or several lines)",
            "pass one dotted name such as 'Client.send'; to find code by words, search instead",
        )
    return SymbolRequest(
        name=name,
        path=parse_path(p["path"], "path") if p.get("path") is not None else None,
        include_body=get_bool(p, "include_body", default=True),
        max_tokens=get_int(p, "max_tokens", lo=MIN_MAX_TOKENS, hi=MAX_TOKENS_CAP, example=4000),
    )


def parse_resolve(params: Any) -> ResolveLibraryRequest:
    p = require_object(params, "ctx/resolveLibrary")
    check_keys(p, frozenset({"name", "limit"}))
    name = get_str(p, "name", required=True) or ""
    if not name.strip():
        raise InvalidParam("name", "is empty", "pass a library name such as 'pygls'")
    check_library_name(name, "name")
    limit = get_int(p, "limit", lo=1, hi=100, default=10, example=10)
    return ResolveLibraryRequest(name, limit or 10)


# ---------------------------------------------------------------- shared field rules


def parse_budget_fields(p: Mapping[str, Any]) -> tuple[int | None, str | None, Utilization | None]:
    """`budget` | (`model`, `utilization`): DESIGN's alternatives, never both. A request
    with both is refused rather than guessed at: silently dropping the model (or the
    budget) would hand back a bundle sized for something the caller did not ask."""
    budget = get_int(p, "budget", lo=1, hi=MAX_BUDGET_TOKENS, example=8000)
    model = get_str(p, "model")
    if model is not None and not model.strip():
        raise InvalidParam("model", "is empty", "pass a model name such as 'gpt-4o', or omit it")
    utilization = get_choice(p, "utilization", Utilization, None, "use 'low', 'medium' or 'full' (with a model)")
    if budget is not None and model is not None:
        raise InvalidParam(
            "model",
            "cannot be combined with budget",
            "pass either budget (tokens) or model (optionally with utilization)",
        )
    if utilization is not None and budget is not None:
        raise InvalidParam(
            "utilization", "cannot be combined with budget", "pass either budget (tokens) or model with utilization"
        )
    if utilization is not None and model is None:
        raise InvalidParam("utilization", "needs a model", "pass model (e.g. 'gpt-4o') with utilization, or a budget")
    return budget, model, utilization


def parse_focus(value: Any) -> Focus:
    if not isinstance(value, Mapping):
        raise InvalidParam(
            "focus", f"expected an object, got {json_type(value)}", "pass {uri, position: {line, character}}"
        )
    check_keys(value, frozenset({"uri", "position"}), "focus.")
    if "uri" not in value:
        raise InvalidParam("focus.uri", "is required", "pass the URI of the file under the cursor")
    path = uri_to_path(value["uri"], "focus.uri")
    position = value.get("position") or {}
    if not isinstance(position, Mapping):
        raise InvalidParam(
            "focus.position", f"expected an object, got {json_type(position)}", "pass {line, character}, both 0-based"
        )
    check_keys(position, frozenset({"line", "character"}), "focus.position.")
    line = get_int(position, "line", lo=0, hi=10_000_000, default=0, example=42, prefix="focus.position.")
    char = get_int(position, "character", lo=0, hi=1_000_000, default=0, example=0, prefix="focus.position.")
    return Focus(str(path), line or 0, char or 0)


def parse_docs_list(value: Any) -> tuple[DocsRequest, ...]:
    if value is None:
        return ()
    if not isinstance(value, list):
        raise InvalidParam(
            "docs",
            f"expected a list, got {json_type(value)}",
            "pass docs: [{library: 'pygls', topic: 'custom requests'}]",
        )
    out = []
    for i, item in enumerate(value):
        if not isinstance(item, Mapping):
            raise InvalidParam(f"docs[{i}]", f"expected an object, got {json_type(item)}", "pass {library, topic}")
        check_keys(item, frozenset({"library", "topic"}), f"docs[{i}].")
        library = get_str(item, "library", required=True, prefix=f"docs[{i}].") or ""
        if not library.strip():
            raise InvalidParam(f"docs[{i}].library", "is empty", "pass a library name such as 'pygls'")
        check_library_name(library, f"docs[{i}].library")
        out.append(DocsRequest(library, get_str(item, "topic", prefix=f"docs[{i}].")))
    return tuple(out)


def uri_to_path(uri: Any, field: str) -> Path:
    """A `file://` URI (or, for CLI convenience, an absolute path) → a local path. Whether
    it is inside the workspace is the workspace's decision, made on the resolved path, so
    `..` and `%2e%2e` get the same answer. Percent-escapes are decoded exactly once: a
    second decoding would turn a file named `%2e%2e` into `..`."""
    if not isinstance(uri, str) or not uri:
        raise InvalidParam(
            field,
            f"expected a file URI string, got {json_type(uri)}",
            "pass a URI like 'file:///path/to/workspace/module.py'",
        )
    if "\x00" in uri or "%00" in uri:
        raise InvalidParam(field, "contains a NUL character", "pass the URI of a file inside the workspace")
    if uri.startswith("/"):
        return Path(uri)
    parsed = urlparse(uri)
    if parsed.scheme != "file":
        raise InvalidParam(
            field,
            f"unsupported URI scheme {parsed.scheme or '(none)'!r}",
            "pass a 'file://' URI of a file inside a workspace folder",
        )
    if parsed.netloc not in ("", "localhost"):
        raise InvalidParam(field, f"remote file URI host {parsed.netloc!r}", "pass a local 'file:///' URI")
    return Path(url2pathname(parsed.path))


def parse_path(value: Any, field: str) -> str:
    """A file or folder as an agent names it: a path relative to the workspace (its first
    folder), an absolute path, or a `file://` URI. Whether it is inside the workspace is
    the workspace's decision, made when it is looked up."""
    if not isinstance(value, str) or not value.strip():
        raise InvalidParam(
            field,
            type_problem(value, "a string"),
            "pass a workspace-relative path such as 'pkg/mod.py', or a file URI",
        )
    if value.startswith("file:") or "://" in value:
        return str(uri_to_path(value, field))
    return value.strip()


# ---------------------------------------------------------------- field readers


def require_object(params: Any, method: str) -> Mapping[str, Any]:
    if params is None:
        return {}
    if not isinstance(params, Mapping):
        raise InvalidParam(
            "params",
            f"expected a JSON object, got {json_type(params)}",
            f"send {method} params as an object with named fields",
        )
    return params


def check_keys(params: Mapping[str, Any], allowed: frozenset[str], prefix: str = "") -> None:
    for key in params:
        if key in allowed or key in LSP_PROTOCOL_KEYS:
            continue
        close = difflib.get_close_matches(str(key), sorted(allowed), n=1)
        fix = f"did you mean {close[0]!r}?" if close else f"known fields: {', '.join(sorted(allowed))}"
        raise InvalidParam(f"{prefix}{key}", "unknown parameter", fix)


def get_str(
    params: Mapping[str, Any], key: str, *, default: str | None = None, required: bool = False, prefix: str = ""
) -> str | None:
    value = params.get(key)
    if value is None:
        if required:
            raise InvalidParam(f"{prefix}{key}", "is required", f"pass {key} as a string")
        return default
    if not isinstance(value, str):
        raise InvalidParam(f"{prefix}{key}", f"expected a string, got {json_type(value)}", f"pass {key} as a string")
    return value


def check_library_name(value: str, field: str) -> None:
    """Refuse a name over `MAX_LIBRARY_NAME_CHARS` before any lookup is done with it."""
    if len(value) > MAX_LIBRARY_NAME_CHARS:
        raise InvalidParam(
            field,
            f"is {len(value)} characters long, over the limit of {MAX_LIBRARY_NAME_CHARS}",
            "pass a library name such as 'pygls'",
        )


def get_bool(params: Mapping[str, Any], key: str, *, default: bool, prefix: str = "") -> bool:
    value = params.get(key)
    if value is None:
        return default
    if not isinstance(value, bool):
        raise InvalidParam(
            f"{prefix}{key}", f"expected a boolean, got {json_type(value)}", f"pass {key}: true or false"
        )
    return value


def get_int(
    params: Mapping[str, Any],
    key: str,
    *,
    lo: int,
    hi: int,
    default: int | None = None,
    example: int | None = None,
    prefix: str = "",
) -> int | None:
    value = params.get(key)
    if value is None:
        return default
    eg = example if example is not None else lo
    if isinstance(value, bool) or not isinstance(value, int):
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        else:
            raise InvalidParam(
                f"{prefix}{key}",
                f"expected an integer, got {json_type(value)} {value!r}",
                f"pass a whole number between {lo} and {hi}, e.g. {eg}",
            )
    if not lo <= value <= hi:
        raise InvalidParam(
            f"{prefix}{key}", f"{value} is out of range", f"pass a whole number between {lo} and {hi}, e.g. {eg}"
        )
    return value


def get_choice(params: Mapping[str, Any], key: str, choices: type[E], default: E | None, fix: str) -> E | None:
    """One of an enum's wire names."""
    value = get_str(params, key)
    if value is None:
        return default
    try:
        return choices(value)
    except ValueError:
        raise InvalidParam(key, f"unknown value {value!r}", fix) from None
