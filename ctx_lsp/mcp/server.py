"""The MCP server: six tools over one `Engine`, and `run` for `ctx-lsp mcp`.

Every tool has one shape: arguments → a plain dict (`arguments.py`) → the parser the LSP
and the CLI use (`ctx_lsp.params`) → the engine → text and a structured index
(`output.py`). Parameters are declared with their JSON types for the schema agents read,
but validated by our parsers, not by the SDK, so a wrong value is answered with the same
"field: problem; fix" message everywhere (an `is_error` result, never a crash).
"""

from __future__ import annotations

import functools
import logging
import threading
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Annotated, Any

from mcp.server.context import CallNext, HandlerResult, ServerMiddleware, ServerRequestContext
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.tools import Tool
from mcp_types import CallToolResult, TextContent, ToolAnnotations
from pydantic import WithJsonSchema

from ctx_lsp import __version__
from ctx_lsp.engine import REQUEST_INDEX_WAIT_S, Engine
from ctx_lsp.errors import CtxError, InvalidParam
from ctx_lsp.index.symbols import DEFAULT_MAX_TOKENS, MAX_TOKENS_CAP, render_markdown
from ctx_lsp.mcp import arguments, output
from ctx_lsp.mcp.arguments import MCP_OUTPUT_CAP_TOKENS, absolute_all, present
from ctx_lsp.params import (
    check_keys,
    parse_bundle,
    parse_docs,
    parse_search,
    parse_symbol,
    parse_window,
)
from ctx_lsp.wire import to_wire

log = logging.getLogger(__name__)

SERVER_NAME = "ctx-lsp"
FOOTER_TOKENS = 80
"""Kept out of a bundle's budget for the line the tool adds after it, so the whole answer
stays within the budget asked for."""
LARGE_RESULT_META = {"anthropic/maxResultSizeChars": output.MAX_RESULT_CHARS}
READ_ONLY = ToolAnnotations(read_only_hint=True, destructive_hint=False, open_world_hint=False)

INSTRUCTIONS = f"""\
ctx-lsp indexes this workspace's code (tree-sitter outlines, a reference graph, lexical \
search) and answers within a token budget counted with a real tokenizer.
1. At the start of a task, call get_context_bundle with the task as query, in words and \
identifiers. It returns the code that matters: bodies of the functions the task names, \
outlines of related files (signatures with line numbers) and a map of the rest.
2. For any function, class or constant the bundle names but does not show in full, call \
get_symbol with its name (e.g. 'Client.send'); add path when several match.
3. search_code locates identifiers or words the bundle did not cover; get_library_docs \
gives an installed dependency's API on a topic; window_conversation fits a long message \
history into a budget; workspace_status explains empty or stale answers.
Paths are relative to the workspace root (file URIs work too). No answer exceeds \
{MCP_OUTPUT_CAP_TOKENS} tokens; a cut answer says how to get the rest."""

DESCRIPTIONS = {
    "get_context_bundle": f"""\
Call this first for any coding task. Returns the workspace code that matters for the task \
as one markdown text within a token budget: bodies of the functions and classes the task \
names, outlines (signatures with line numbers) of related files, and a ranked map of the \
rest. query: the task in words and identifiers. Then call get_symbol for anything the \
bundle names but does not show in full. open: files you are editing (shown whole if small, \
else with the bodies the task names); focus: 'path:line' under the cursor (that symbol, \
its callers and callees); agent ('planner', 'implementer', 'reviewer', 'tester', \
'debugger', …) sets the default budget and depth; tier 3 shows open files whole. Budgets \
over {MCP_OUTPUT_CAP_TOKENS} tokens are capped.""",
    "get_symbol": f"""\
Returns one function's, class's, method's or constant's exact source by name: use it when \
get_context_bundle or search_code named code without showing it in full. name: a qualname \
('Client.send'), module-qualified ('pkg.client.Client.send') or bare ('send'). A bare name \
defined in several places lists every match, best first (ambiguous: true), sharing \
max_tokens among their bodies: pass path (a file or folder) to choose. A body over \
max_tokens (default {DEFAULT_MAX_TOKENS}, at most {MAX_TOKENS_CAP}) is cut at a line and \
ends with a line saying how to get the rest. An unknown name answers with close names.""",
    "search_code": """\
Finds where identifiers or words occur in the workspace: classes, functions, methods and \
files ranked by lexical match over names, signatures, docstrings, paths and called names. \
Use it to locate code a bundle did not cover, then get_symbol to read it. Returns one line \
per hit: path:lines, kind, qualname, score; no bodies.""",
    "get_library_docs": """\
Returns documentation of an installed dependency (offline: package metadata, docstrings, \
llms.txt), ranked by topic and capped at the agent's docs cap. Use it when you need a \
library's API, e.g. library 'pygls', topic 'custom requests'; a topic is required unless \
the library is configured for full docs. For the workspace's own code use \
get_context_bundle or get_symbol instead.""",
    "window_conversation": """\
Fits a long conversation into a token budget at turn boundaries: keeps system messages and \
the newest turns, never separates a tool call from its result, and elides old tool outputs \
behind placeholders. For agents that manage their own history. messages: OpenAI-style \
[{role, content, tool_calls?, tool_call_id?}]. Returns the kept messages as JSON, how many \
were dropped, should_summarize, and a template summary of the dropped turns to pass back \
as summary next time.""",
    "workspace_status": """\
Reports the index: files by language, symbols, tokens, skipped files by reason, the file \
watcher, cache and configuration warnings. Call it when answers look empty or stale (the \
index may still be building, or files may be ignored).""",
}


def _schema(description: str, **schema: Any) -> WithJsonSchema:
    return WithJsonSchema({**schema, "description": description})


# Parameter types: the JSON schema agents see, and `Any` for the value, which our parser checks.
Query = Annotated[Any, _schema("The task or question, in words and identifiers.", type="string")]
Agent = Annotated[Any, _schema("Agent role: sets default budget, depth and docs cap.", type="string")]
Budget = Annotated[Any, _schema("Token budget for the answer.", type="integer", minimum=1)]
Model = Annotated[Any, _schema("Size the budget from this model's context window instead.", type="string")]
Utilization = Annotated[
    Any, _schema("Share of the model's window to fill (with model).", type="string", enum=["low", "medium", "full"])
]
Profile = Annotated[Any, _schema("Context window type, e.g. 'balanced', 'token-efficient'.", type="string")]
Paths = Annotated[
    Any, _schema("Workspace-relative paths of files being worked on.", type="array", items={"type": "string"})
]
Focus = Annotated[Any, _schema("The cursor as 'path:line' (1-based).", type="string")]
Tier = Annotated[Any, _schema("1 outlines, 2 plus bodies that matter, 3 whole files.", type="integer", enum=[1, 2, 3])]
Docs = Annotated[
    Any,
    _schema(
        "Library docs to include.",
        type="array",
        items={"type": "object", "properties": {"library": {"type": "string"}, "topic": {"type": "string"}}},
    ),
]
Name = Annotated[Any, _schema("Qualname ('Client.send'), module-qualified or bare name.", type="string")]
PathArg = Annotated[Any, _schema("Only this file or folder (workspace-relative).", type="string")]
IncludeBody = Annotated[Any, _schema("Include the source (default true).", type="boolean")]
MaxTokens = Annotated[
    Any, _schema("Tokens for all bodies together.", type="integer", minimum=100, maximum=MAX_TOKENS_CAP)
]
Limit = Annotated[Any, _schema("Most hits to return (default 20).", type="integer", minimum=1, maximum=200)]
Library = Annotated[Any, _schema("Installed distribution or import name, e.g. 'pygls'.", type="string")]
Topic = Annotated[Any, _schema("What you need from the library.", type="string")]
DocsMaxTokens = Annotated[Any, _schema("Lower the agent's docs cap.", type="integer", minimum=1)]
Messages = Annotated[Any, _schema("OpenAI-style messages, oldest first.", type="array", items={"type": "object"})]
Summary = Annotated[Any, _schema("Rolling summary of earlier conversation, kept as a preamble.", type="string")]


def _error(err: CtxError) -> CallToolResult:
    return CallToolResult(content=[TextContent(type="text", text=str(err))], is_error=True)


def _answer(text: str, structured: dict[str, Any]) -> CallToolResult:
    return CallToolResult(content=[TextContent(type="text", text=text)], structured_content=structured)


def _answers(fn: Callable[..., CallToolResult]) -> Callable[..., CallToolResult]:
    """A tool whose core errors (a bad argument, a path outside the workspace, an unknown
    library) are `is_error` results with the core's message, which names the field and the
    fix. Anything else is left to the SDK: an error result, logged, the server stays up."""

    @functools.wraps(fn)
    def tool(*args: Any, **kwargs: Any) -> CallToolResult:
        try:
            return fn(*args, **kwargs)
        except CtxError as err:
            return _error(err)

    return tool


def create_server(engine: Engine) -> MCPServer:
    """An MCP server answering from `engine` (a fresh one per call, for tests)."""
    root = engine.roots[0]

    def get_context_bundle(
        query: Query = None,
        agent: Agent = None,
        budget: Budget = None,
        model: Model = None,
        utilization: Utilization = None,
        profile: Profile = None,
        open: Paths = None,
        focus: Focus = None,
        tier: Tier = None,
        docs: Docs = None,
    ) -> CallToolResult:
        params = {
            "query": query,
            "agent": agent,
            "budget": budget,
            "model": model,
            "utilization": utilization,
            "profile": profile,
            "open": absolute_all(root, open),
            "focus": arguments.focus(root, focus),
            "tier": tier,
            "docs": docs,
        }
        request, reserve, notes = arguments.capped_bundle(
            parse_bundle(present(params)), engine.loaded.config, FOOTER_TOKENS
        )
        result = engine.bundle(request)
        footer = output.bundle_footer(result, notes)
        if engine.counter.count(footer) > reserve:  # the budget asked for holds the footer too
            footer = ""
        text = output.fit(result.text + footer, engine.counter, "ask with a narrower query, or get_symbol for one name")
        return _answer(text, output.bundle_summary(result, notes))

    def get_symbol(
        name: Name = None, path: PathArg = None, include_body: IncludeBody = None, max_tokens: MaxTokens = None
    ) -> CallToolResult:
        request = parse_symbol(
            present({"name": name, "path": path, "include_body": include_body, "max_tokens": max_tokens})
        )
        result = engine.symbol(request)
        text = output.fit(render_markdown(result), engine.counter, "pass path to pick one match, or a qualname")
        return _answer(text, output.symbol_summary(result))

    def search_code(query: Query = None, limit: Limit = None) -> CallToolResult:
        request = parse_search(present({"query": query, "limit": limit}))
        hits, warnings = engine.search_with_warnings(request.query, request.limit)
        text = output.fit(
            "".join(f"warning: {w}\n" for w in warnings) + output.search_text(request.query, hits),
            engine.counter,
            "lower limit",
        )
        return _answer(text, output.search_summary(hits))

    def get_library_docs(
        library: Library = None, topic: Topic = None, agent: Agent = None, max_tokens: DocsMaxTokens = None
    ) -> CallToolResult:
        request = parse_docs(present({"library": library, "topic": topic, "agent": agent, "max_tokens": max_tokens}))
        result = engine.docs(request.library, request.topic, request.agent, request.max_tokens)
        text = output.fit(output.docs_text(result), engine.counter, "narrow the topic or lower max_tokens")
        return _answer(text, output.docs_summary(result))

    def window_conversation(
        messages: Messages = None,
        budget: Budget = None,
        model: Model = None,
        utilization: Utilization = None,
        summary: Summary = None,
    ) -> CallToolResult:
        request = parse_window(
            present(
                {"messages": messages, "budget": budget, "model": model, "utilization": utilization, "summary": summary}
            )
        )
        request, notes = arguments.capped_window(request, engine.loaded.config)
        result = engine.window(request)
        structured = {
            "messages": to_wire(result.messages),
            "dropped": len(result.dropped),
            "should_summarize": result.should_summarize,
            "summary_fallback": result.summary_fallback,
            "metadata": to_wire(result.metadata),
            "notes": [*notes, *result.notes],
        }
        text = output.fit(output.compact_json(structured), engine.counter, "pass a smaller budget")
        return _answer(text, structured)

    def workspace_status() -> CallToolResult:
        report = engine.status()
        return _answer(output.status_text(report), output.status_summary(report))

    required = {"get_symbol": ["name"], "search_code": ["query"], "get_library_docs": ["library"]}
    required["window_conversation"] = ["messages"]
    large = {"get_context_bundle", "get_symbol", "get_library_docs", "window_conversation"}
    tools = []
    for fn in (get_context_bundle, get_symbol, search_code, get_library_docs, window_conversation, workspace_status):
        tool = Tool.from_function(
            _answers(fn),
            name=fn.__name__,
            description=DESCRIPTIONS[fn.__name__],
            annotations=READ_ONLY,
            meta=LARGE_RESULT_META if fn.__name__ in large else None,
        )
        # Our parsers report a missing or unknown argument; the schema still tells agents.
        tool.parameters["required"] = required.get(fn.__name__, [])
        tool.parameters["additionalProperties"] = False
        tools.append(tool)
    return MCPServer(
        SERVER_NAME,
        instructions=INSTRUCTIONS,
        version=__version__,
        tools=tools,
        middleware=[refuse_unknown_arguments(tools)],
    )


def refuse_unknown_arguments(tools: Sequence[Tool]) -> ServerMiddleware[Any]:
    """The SDK drops arguments a tool does not declare; a misspelt `bugdet` silently ignored
    would answer with the wrong budget. Refuse it with the parsers' "did you mean" instead,
    as the LSP server does."""
    known = {t.name: frozenset(t.parameters.get("properties", {})) for t in tools}

    async def middleware(ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        params = ctx.params
        if ctx.method == "tools/call" and isinstance(params, Mapping):
            allowed = known.get(params.get("name"))  # type: ignore[arg-type]
            given = params.get("arguments")
            if allowed is not None and isinstance(given, Mapping):
                try:
                    check_keys(given, allowed)
                except InvalidParam as err:
                    return _error(err)
        return await call_next(ctx)

    return middleware


# ---------------------------------------------------------------- ctx-lsp mcp


def prepare(engine: Engine) -> None:
    """Index (from the cache), build what the first request needs, follow changes on disk
    (an agent edits files between calls). Runs beside the server: tools that need the
    index wait for it, `workspace_status` answers at once."""
    try:
        stats = engine.index()
        log.info("indexed %d files (%d parsed, %d from cache)", len(engine.workspace.files), stats.parsed, stats.reused)
        engine.warm_up()
    except Exception:
        log.exception("indexing failed")
    watcher = engine.start_watching()
    if watcher.state == "failed":
        log.warning("file watcher failed: %s", watcher.error)


def run(workspace: Path) -> int:
    """Serve MCP over stdio for `workspace` until the client closes stdin."""
    engine = Engine([workspace])
    engine.index_wait_s = REQUEST_INDEX_WAIT_S  # tools answer from a partial index while the first one runs
    threading.Thread(target=prepare, args=(engine,), name="ctx-lsp-index", daemon=True).start()
    try:
        create_server(engine).run("stdio")
    finally:
        engine.close()
    return 0
