"""Results → what a tool answers: the text an agent reads, and a compact structured part.

The text is what a model sees (Claude Code, Codex and Cursor put the content blocks in the
context), so it is the readable form: the bundle's own markdown, code in fences, one line
per search hit. `structured_content` is an index of it for programs (paths, ranges,
token counts), without repeating the code: an agent that got both would pay twice.
Every text stays within the MCP output cap (`fit`).
"""

from __future__ import annotations

import json
from typing import Any

from ctx_lsp.docs.library import DocsResult
from ctx_lsp.engine import StatusReport
from ctx_lsp.index.search import SearchHit
from ctx_lsp.mcp.arguments import MCP_OUTPUT_CAP_TOKENS
from ctx_lsp.tokens import ELLIPSIS, TokenCounter, cut_to_tokens, line_count
from ctx_lsp.vocabulary import BundleResult, SymbolResult

MAX_RESULT_CHARS = 100_000
"""Claude Code saves a tool result over 50,000 characters to a file and shows the model a
preview, unless the tool declares a larger `anthropic/maxResultSizeChars` in its `_meta`:
the tools declare this, and `fit` keeps every text under it."""
MARKER_CHARS = 300
MAX_TOKENS_PER_CHAR = 4
"""A BPE token covers at least one byte and a character is at most four in UTF-8: a text
this short cannot be over the cap, and is not counted."""


def fit(text: str, counter: TokenCounter, how: str) -> str:
    """`text`, or its first whole lines and a marker saying what was left out and `how` to
    get it, within `MCP_OUTPUT_CAP_TOKENS` tokens and `MAX_RESULT_CHARS` characters."""
    if len(text) * MAX_TOKENS_PER_CHAR <= MCP_OUTPUT_CAP_TOKENS:
        return text
    if len(text) <= MAX_RESULT_CHARS and counter.count(text) <= MCP_OUTPUT_CAP_TOKENS:
        return text
    head = text
    if len(head) > MAX_RESULT_CHARS - MARKER_CHARS:
        head = head[: MAX_RESULT_CHARS - MARKER_CHARS].rpartition("\n")[0] + "\n"
    dropped = line_count(text) - line_count(head)

    def marker(omitted: int) -> str:
        limit = f"MCP output stops at {MCP_OUTPUT_CAP_TOKENS} tokens"
        return f"{ELLIPSIS} {omitted + dropped} more lines not shown ({limit}): {how}"

    room = MCP_OUTPUT_CAP_TOKENS - (counter.count(marker(0)) if dropped else 0)
    cut = cut_to_tokens(head, room, counter, marker=marker)
    return cut.text if cut.truncated else cut.text + marker(0)


def compact_json(value: Any) -> str:
    """JSON without spaces: data an agent passes back (windowed messages) costs fewer tokens."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


# ---------------------------------------------------------------- get_context_bundle


def bundle_footer(result: BundleResult, notes: list[str]) -> str:
    """One closing line: what the bundle holds, what was capped, and the next step."""
    parts = [
        f"ctx-lsp: {len(result.sections)} sections, {result.total_tokens}/{result.budget} tokens",
        *notes,
        *result.snapshot.warnings,
        "code named in an outline but not shown: get_symbol(name)",
    ]
    return "\n\n---\n" + "; ".join(parts) + ".\n"


def bundle_summary(result: BundleResult, notes: list[str]) -> dict[str, Any]:
    return {
        "total_tokens": result.total_tokens,
        "budget": result.budget,
        "sections": [
            {
                "path": s.path,
                "contributor": s.contributor,
                "tier": s.tier,
                "start_line": s.range.start_line,
                "end_line": s.range.end_line,
                "tokens": s.tokens,
            }
            for s in result.sections
        ],
        "warnings": [*notes, *result.snapshot.warnings],
    }


# ---------------------------------------------------------------- get_symbol


def symbol_summary(result: SymbolResult) -> dict[str, Any]:
    return {
        "name": result.name,
        "ambiguous": result.ambiguous,
        "total_matches": result.total_matches,
        "note": result.note,
        "matches": [
            {
                "path": m.path,
                "qualname": m.qualname,
                "kind": m.kind,
                "start_line": m.range.start_line,
                "end_line": m.range.end_line,
                "signature": m.signature,
                "has_body": m.body is not None,
                "tokens": m.tokens,
                "truncated": m.truncated,
            }
            for m in result.matches
        ],
    }


# ---------------------------------------------------------------- search_code


def search_text(query: str, hits: list[SearchHit]) -> str:
    if not hits:
        return f"no hits for {query!r}: try other words or identifiers, or get_context_bundle with the task"
    rows = [
        f"{h.path}:{h.start_line}-{h.end_line}  {h.kind}  {h.symbol or '(file)'}  score {h.score:.2f}" for h in hits
    ]
    return "\n".join([*rows, "", "get_symbol(name, path) shows one of these in full."]) + "\n"


def search_summary(hits: list[SearchHit]) -> dict[str, Any]:
    return {
        "hits": [
            {
                "path": h.path,
                "symbol": h.symbol,
                "kind": h.kind,
                "start_line": h.start_line,
                "end_line": h.end_line,
                "score": h.score,
            }
            for h in hits
        ]
    }


# ---------------------------------------------------------------- get_library_docs


def docs_text(result: DocsResult) -> str:
    if not result.matched:
        return result.note + "\n"
    state = f"{result.tokens}/{result.cap} tokens" + (", cut to the cap" if result.truncated else "")
    return f"{result.content.rstrip()}\n\n---\n{result.library} {result.version}, topic {result.topic!r}: {state}.\n"


def docs_summary(result: DocsResult) -> dict[str, Any]:
    return {
        "library": result.library,
        "version": result.version,
        "topic": result.topic,
        "matched": result.matched,
        "tokens": result.tokens,
        "cap": result.cap,
        "truncated": result.truncated,
        "cache": result.cache,
        "note": result.note,
    }


# ---------------------------------------------------------------- workspace_status


def _indexing(report: StatusReport) -> str:
    """`done`, or how far a running pass is: answers meanwhile hold the files ready so far."""
    progress = report.indexing
    if not progress:
        return "done"
    return f"in progress, {progress['done']:,} of {progress['total']:,} files ready ({progress['phase']})"


def status_text(report: StatusReport) -> str:
    langs = ", ".join(f"{k} {v}" for k, v in report.files_by_language.items()) or "none"
    skipped = ", ".join(f"{k} {v}" for k, v in report.skipped.items()) or "none"
    lines = [
        f"ctx-lsp {report.version}: {', '.join(report.folders)}",
        f"indexing: {_indexing(report)}; files indexed: {report.files_indexed} ({langs})",
        f"symbols: {report.symbols}"
        + (f" ({', '.join(f'{k} {v}' for k, v in report.symbols_by_language.items())})" if report.symbols else "")
        + f"; tokens: {report.tokens} ({report.tokenizer})",
        f"skipped files: {skipped}; ignored directories: {report.ignored_dirs}",
        f"watcher: {report.watcher.state}" + (f" ({report.watcher.error})" if report.watcher.error else ""),
        *(f"problem: {p}" for p in report.problems[:10]),
        *(f"warning: {w}" for w in [*report.cache["warnings"], *report.config["warnings"]]),
    ]
    return "\n".join(lines) + "\n"


def status_summary(report: StatusReport) -> dict[str, Any]:
    return {
        "version": report.version,
        "folders": list(report.folders),
        "indexing": report.indexing,
        "files_indexed": report.files_indexed,
        "files_by_language": report.files_by_language,
        "skipped": report.skipped,
        "symbols": report.symbols,
        "symbols_by_language": report.symbols_by_language,
        "syntax_errors": report.syntax_errors,
        "tokens": report.tokens,
        "tokenizer": report.tokenizer,
        "watcher": report.watcher.state,
        "problems": list(report.problems[:10]),
        "warnings": [*report.cache["warnings"], *report.config["warnings"]],
    }
