"""One symbol's code on demand (`ctx/symbol`): find definitions by name, show their source.

A bundle points an agent at code it does not always show (an outline row names
`Client.send` and its lines); this is how the agent pulls one definition in, the way
Serena's `find_symbol(include_body=True)` does. Names resolve against the outlines the
index already holds, never by parsing again, and bodies are read through the
workspace's one gate (`Workspace.read_text`), so an editor's unsaved buffer wins over the
disk copy here as everywhere else.

The steps, each a function: `SymbolTable` (which files define a name, kept current with
the index) → `find` (the definitions a name means) → `rank` (exact qualnames first, then
by the reference graph) → `show` (bodies within one shared token budget) → `lookup`, which
composes them and explains what it could not do in a `note`.
"""

from __future__ import annotations

import difflib
import math
import os
import threading
import tokenize
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from ctx_lsp.code.languages import CONTAINER_KINDS, language_for, language_named
from ctx_lsp.code.outline import Outline, split_lines
from ctx_lsp.errors import CtxError, NotFound
from ctx_lsp.index.changes import ChangeQueue
from ctx_lsp.index.files import IndexedFile
from ctx_lsp.index.workspace import Workspace
from ctx_lsp.tokens import ELLIPSIS, TokenCounter, cut_to_tokens
from ctx_lsp.vocabulary import LineRange, SymbolMatch, SymbolRequest, SymbolResult

__all__ = [
    "DEFAULT_MAX_TOKENS",
    "MAX_TOKENS_CAP",
    "MIN_MAX_TOKENS",
    "Found",
    "SymbolTable",
    "find",
    "lookup",
    "rank",
    "render_markdown",
    "scope_of",
]

DEFAULT_MAX_TOKENS = 4000
"""A long function or a mid-sized class whole; a big class is cut at a member boundary."""
MAX_TOKENS_CAP = 20_000
"""No answer exceeds this, whatever is asked: Claude Code warns at 10K tokens of tool output
and refuses above 25K, and one symbol's code rarely needs more."""
MIN_MAX_TOKENS = 100
"""Room for the marker line plus a few lines of code: less could only ever show the marker."""
MAX_MATCHES = 20
"""A bare name such as `__init__` can mean hundreds of definitions; listing more than this
helps nobody choose, and `total_matches` still says how many there were."""
MAX_SUGGESTIONS = 5
SUGGESTION_CUTOFF = 0.6
"""difflib ratio for a "did you mean": `Clinet.send` → `Client.send` scores 0.91, unrelated
names of similar length stay below 0.5."""
SUGGEST_TOKENS_STEP = 100
"""A suggested `max_tokens` is rounded up to this, so it reads as a choice, not a count."""

DOCUMENT_FENCES = {".md": "markdown", ".markdown": "markdown", ".mdx": "markdown"}
"""Fences of documents; a language's comes from its spec (`LanguageSpec.fence`)."""


# ---------------------------------------------------------------- which files define a name


class SymbolTable:
    """Which files define each name (the last part of a qualname, a constant, a heading),
    kept current with the index: a workspace listener, like the search postings.

    `update` only queues; the next lookup applies the queue, so a full index pass stays
    cheap and a listener never waits for a lookup.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._changes = ChangeQueue()
        self._files: dict[str, IndexedFile] = {}
        self._names_of: dict[str, frozenset[str]] = {}
        self._by_name: dict[str, set[str]] = {}

    def update(self, removed: Sequence[str], updated: Sequence[IndexedFile]) -> None:
        self._changes.add(removed, updated)

    def hold_changes(self, held: bool) -> None:
        """Queries stop (or resume) applying index changes: see `ChangeQueue.held`."""
        self._changes.held = held

    def catch_up(self, force: bool = False, limit: int | None = None) -> bool:
        """Apply queued changes (at most `limit`); whether there were any."""
        pending = self._changes.drain(force, limit)
        if not pending:
            return False
        # Names read each outline (from the cache, decoded): taken before the lock a
        # lookup waits for.
        names_of = {p: names_in(e.outline) if e is not None else frozenset() for p, e in pending.items()}
        with self._lock:
            for abs_path, entry in pending.items():
                for name in self._names_of.pop(abs_path, ()):
                    files = self._by_name[name]
                    files.discard(abs_path)
                    if not files:
                        del self._by_name[name]
                self._files.pop(abs_path, None)
                if entry is None:
                    continue
                names = names_of[abs_path]
                if names:
                    self._files[abs_path] = entry
                    self._names_of[abs_path] = names
                    for name in names:
                        self._by_name.setdefault(name, set()).add(abs_path)
        return True

    @property
    def empty(self) -> bool:
        """No file applied yet (queued changes not counted)."""
        return not self._files

    def files_defining(self, names: Iterable[str]) -> list[IndexedFile]:
        """The files defining any of `names`, in path order."""
        self.catch_up()
        with self._lock:
            paths = {p for name in names for p in self._by_name.get(name, ())}
            return sorted((self._files[p] for p in paths), key=lambda e: e.path)

    def names(self) -> list[str]:
        self.catch_up()
        with self._lock:
            return sorted(self._by_name)


def names_in(outline: Outline) -> frozenset[str]:
    return outline.names  # kept by the outline, which need not be decoded again for it


# ---------------------------------------------------------------- what a name means


@dataclass(frozen=True, slots=True)
class Found:
    """A definition a name resolved to, located in one version of its file."""

    entry: IndexedFile
    qualname: str
    kind: str
    signature: str
    start_line: int
    end_line: int
    """For a constant, its first line until the text is read (`_statement_end`)."""
    exact: bool
    """The name is the qualname (plain or module-qualified), not only its last part."""
    local: bool
    """Defined inside a function: private to it, so ranked after definitions other code can use."""
    occurrence: int
    """Which definition of this qualname in the file (0 unless it is defined twice, as in
    if/else branches or typing overloads): how it is found again if the file changed."""


def normalize(name: str) -> str:
    """`Client.send()` and ` send ` mean `Client.send` and `send`."""
    name = name.strip()
    return name[:-2].rstrip() if name.endswith("()") else name


def keys_of(name: str) -> frozenset[str]:
    """The simple names a definition must have to answer to `name`: its last dotted part,
    its last heading part (`Guide > Install`), or the whole (a heading with dots in it)."""
    return frozenset({name, name.rsplit(".", 1)[-1], name.rsplit(" > ", 1)[-1]})


def find(name: str, files: Iterable[IndexedFile]) -> list[Found]:
    """Every definition in `files` that `name` means, in file order."""
    name = normalize(name)
    keys = keys_of(name)
    return [found for entry in files for found in _matches(entry, name, keys)]


def _matches(entry: IndexedFile, name: str, keys: Collection[str]) -> Iterator[Found]:
    outline = entry.outline
    prefixes: tuple[str, ...] | None = None

    def module_qualified(qualname: str) -> bool:
        nonlocal prefixes
        if "." not in name:
            return False
        if prefixes is None:
            spec = language_named(entry.language)
            names = spec.module_names(entry.rel_path) if spec is not None and spec.module_names is not None else ()
            prefixes = tuple(m + "." for m in names)
        return any(name.startswith(p) and name[len(p) :] == qualname for p in prefixes)

    seen: dict[str, int] = {}
    classes: set[str] = set()
    for sym in outline.symbols:
        occurrence = seen[sym.qualname] = seen.get(sym.qualname, -1) + 1
        if sym.kind in CONTAINER_KINDS:
            classes.add(sym.qualname)
        if sym.name not in keys:
            continue
        exact = sym.qualname == name or module_qualified(sym.qualname)
        suffix = sym.qualname.endswith("." + name) or (sym.kind == "heading" and sym.name == name)
        if exact or suffix:
            local = sym.depth > 0 and sym.parent not in classes and sym.kind != "heading"
            yield Found(
                entry, sym.qualname, sym.kind, sym.signature, sym.start_line, sym.end_line, exact, local, occurrence
            )
    for const in outline.constants:
        if const.name in keys and (const.name == name or module_qualified(const.name)):
            occurrence = seen[const.name] = seen.get(const.name, -1) + 1
            yield Found(entry, const.name, "constant", const.text, const.line, const.line, True, False, occurrence)


def rank(found: Sequence[Found], scores: Callable[[], Mapping[str, float]]) -> list[Found]:
    """Exact qualname matches first, then definitions other code can use before functions
    local to a function, then files the reference graph ranks higher (a bare name most
    likely means the definition the rest of the code leans on), then path and line.
    `scores` (abs_path → rank) is only asked when there is something to order."""
    by_file = scores() if len(found) > 1 else {}
    return sorted(
        found, key=lambda f: (not f.exact, f.local, -by_file.get(f.entry.abs_path, 0.0), f.entry.path, f.start_line)
    )


def scope_of(workspace: Workspace, path: str) -> tuple[list[IndexedFile], str]:
    """The indexed files a request's `path` restricts the lookup to (that file, or the files
    under that folder) and how to name it to the caller (its display path). OutsideWorkspace
    if it is outside; NotFound if nothing indexed is there.

    A relative path is taken from the first folder; with several folders, the display path
    (`folder-name/pkg/mod.py`) works too.
    """
    location = workspace.locate(path)
    files = workspace.files
    entry = files.get(location.abs_path)
    if entry is not None:
        return [entry], entry.path
    prefix = location.abs_path.rstrip(os.sep) + os.sep
    under = sorted((e for e in files.values() if e.abs_path.startswith(prefix)), key=lambda e: e.path)
    if under:
        return under, (location.rel or ".") + ("/" if location.rel else "")
    folder = path.rstrip("/") + "/"
    shown = sorted((e for e in files.values() if e.path == path or e.path.startswith(folder)), key=lambda e: e.path)
    if shown:
        return shown, shown[0].path if shown[0].path == path else folder
    raise NotFound(f"path: {path} is not an indexed file or folder (missing, ignored, binary or too large)")


# ---------------------------------------------------------------- showing the code


@dataclass(frozen=True, slots=True)
class _Source:
    """A file's text as read for this request, and the entry whose outline matches it."""

    lines: list[str]
    entry: IndexedFile


Reader = Callable[[IndexedFile], tuple[str, IndexedFile]]


def show(
    ranked: Sequence[Found], include_body: bool, max_tokens: int, read: Reader, counter: TokenCounter
) -> tuple[list[SymbolMatch], list[str]]:
    """The matches as the caller sees them, and notes on what was left out.

    Bodies share `max_tokens` in rank order: the best match gets its body even if it must
    be cut; each later one gets its body whole if it still fits, else none (it is still
    listed, so the caller can ask for it alone). A constant's text is read even without a
    body: its range depends on it.
    """
    sources: dict[str, _Source | CtxError] = {}
    matches: list[SymbolMatch] = []
    left_out: list[str] = []
    unreadable: list[str] = []
    room = max_tokens
    cut_one = False  # the best readable match is cut to fit; later ones are whole or bodiless
    for found in ranked:
        source = _read(found.entry, read, sources) if include_body or found.kind == "constant" else None
        current = found if source is None else _located(found, source)
        body: str | None = None
        tokens = 0
        truncated = False
        if include_body and (current is None or not isinstance(source, _Source)):
            unreadable.append(found.qualname)
        elif include_body and current is not None and isinstance(source, _Source):
            text = "\n".join(source.lines[current.start_line - 1 : current.end_line]) + "\n"
            whole = counter.count(text)
            if not cut_one:
                cut_one = True
                outline = source.entry.outline
                breaks = _member_starts(current, outline)
                cut = cut_to_tokens(text, room, counter, breaks=breaks, marker=_marker(current, outline, whole))
                body, tokens, truncated = cut.text, cut.tokens, cut.truncated
            elif whole <= room:
                body, tokens = text, whole
            else:
                left_out.append(current.qualname)
            room -= tokens
        shown = current or found
        matches.append(
            SymbolMatch(
                path=shown.entry.path,
                uri=Path(shown.entry.abs_path).as_uri(),
                qualname=shown.qualname,
                kind=shown.kind,
                range=LineRange(shown.start_line, shown.end_line),
                signature=shown.signature,
                body=body,
                tokens=tokens,
                truncated=truncated,
            )
        )
    notes = []
    if left_out:
        notes.append(
            f"{len(left_out)} more {'match' if len(left_out) == 1 else 'matches'} listed without a body "
            f"({', '.join(left_out[:5])}{', …' if len(left_out) > 5 else ''}): max_tokens={max_tokens} went to "
            "better matches; ask for one by qualname or path, or raise max_tokens"
        )
    if unreadable:
        notes.append(f"could not read the source of {', '.join(unreadable[:5])}: the file changed or went away")
    return matches, notes


def _read(entry: IndexedFile, read: Reader, sources: dict[str, _Source | CtxError]) -> _Source | CtxError:
    """Each file read once per request, through the workspace's gate."""
    known = sources.get(entry.abs_path)
    if known is None:
        try:
            text, current = read(entry)
            known = _Source(split_lines(text), current)
        except CtxError as err:  # deleted, or swapped for a link, since it was indexed
            known = err
        sources[entry.abs_path] = known
    return known


def _located(found: Found, source: _Source | CtxError) -> Found | None:
    """The definition as it is in the text read (a constant with its whole value); None if
    the file could not be read or no longer has it."""
    if isinstance(source, CtxError):
        return None
    current = _relocate(found, source)
    if current is not None and current.kind == "constant":
        current = replace(current, end_line=_statement_end(source.lines, current.start_line))
    return current


def _relocate(found: Found, source: _Source) -> Found | None:
    """The same definition in the text actually read: the found one when the file is what
    was indexed, else its namesake (same qualname, same occurrence) in the new outline."""
    if source.entry is found.entry:
        return found
    for again in _matches(source.entry, found.qualname, keys_of(found.qualname)):
        if again.qualname == found.qualname and again.occurrence == found.occurrence:
            return replace(again, exact=found.exact)
    return None


def _statement_end(lines: Sequence[str], start: int) -> int:
    """Last line (1-based) of the statement that starts on line `start`: a constant's value
    may span lines (a dict literal, a parenthesised string). The outline keeps only its
    first line; Python's own tokenizer finds where the logical line ends."""
    rest = iter(lines[start - 1 :])

    def readline() -> str:
        line = next(rest, None)
        return "" if line is None else line + "\n"

    try:
        for token in tokenize.generate_tokens(readline):
            if token.type in (tokenize.NEWLINE, tokenize.ENDMARKER):
                return max(start, start + token.start[0] - 1)
    except (tokenize.TokenError, SyntaxError):  # unterminated: show the first line only
        pass
    return start


def _members(found: Found, outline: Outline) -> list[tuple[int, str]]:
    """(start line, name) of a definition's direct members (a class's methods; a Go type's
    methods, which stand outside its lines)."""
    return [(s.start_line, s.name) for s in outline.symbols if s.parent == found.qualname and s.kind != "heading"]


def _member_starts(found: Found, outline: Outline) -> list[int]:
    """Where a cut may land cleanly: 0-based lines of the body where a member starts."""
    return [
        line - found.start_line for line, _ in _members(found, outline) if found.start_line < line <= found.end_line
    ]


def _marker(found: Found, outline: Outline, whole_tokens: int) -> Callable[[int], str]:
    """The line that ends a cut body: what is missing and how to get it."""
    spec = language_named(found.entry.language)
    prefix = spec.comment if spec is not None else ""  # a cut body still reads as its language
    members = _members(found, outline)

    def marker(omitted: int) -> str:
        first = found.end_line - omitted + 1
        missing = [name for line, name in members if first <= line <= found.end_line]
        shown = f"; members: {', '.join(missing[:4])}{f', +{len(missing) - 4}' if len(missing) > 4 else ''}"
        if whole_tokens <= MAX_TOKENS_CAP:
            how = f"ask again with max_tokens={min(MAX_TOKENS_CAP, _round_up(whole_tokens))} for all of it"
        else:
            how = f"it is {whole_tokens} tokens, over the {MAX_TOKENS_CAP} cap"
        if missing:
            how += f", or for one member, e.g. '{found.qualname}.{missing[0]}'"
        elif whole_tokens > MAX_TOKENS_CAP:
            how += f": read lines {first}–{found.end_line} of {found.entry.path}"
        return (
            f"{prefix}{ELLIPSIS} {omitted} more lines not shown "
            f"(lines {first}–{found.end_line}{shown if missing else ''}): {how}"
        )

    return marker


def _round_up(tokens: int) -> int:
    return max(SUGGEST_TOKENS_STEP, math.ceil(tokens / SUGGEST_TOKENS_STEP) * SUGGEST_TOKENS_STEP)


# ---------------------------------------------------------------- the request


def lookup(
    request: SymbolRequest,
    table: SymbolTable,
    workspace: Workspace,
    counter: TokenCounter,
    scores: Callable[[], Mapping[str, float]],
) -> SymbolResult:
    """ctx/symbol: the definitions `request.name` means, best first, with their code."""
    name = normalize(request.name)
    scope, where = scope_of(workspace, request.path) if request.path is not None else (None, "")
    files = scope if scope is not None else table.files_defining(keys_of(name))
    ranked = rank(find(name, files), scores)
    max_tokens = min(request.max_tokens or DEFAULT_MAX_TOKENS, MAX_TOKENS_CAP)
    listed = ranked[:MAX_MATCHES]
    matches, notes = show(listed, request.include_body, max_tokens, workspace.read_text, counter)
    where = f" in {where}" if where else ""
    if not ranked:
        pool = _names_in(scope) if scope is not None else table.names()
        notes.insert(0, _no_match(name, where, pool, scope, table))
    elif len(ranked) > 1:
        example = next((f.qualname for f in ranked if "." in f.qualname), ranked[0].qualname)
        notes.insert(
            0,
            f"{len(ranked)} definitions answer to {name!r}{where}, best first; to pick one, pass its "
            f"qualname (e.g. {example!r}) or a path",
        )
    if len(ranked) > len(listed):
        notes.append(f"only the first {len(listed)} of {len(ranked)} are listed")
    return SymbolResult(
        name=request.name,
        matches=tuple(matches),
        ambiguous=len(ranked) > 1,
        total_matches=len(ranked),
        note=" ".join(n if n.endswith(".") else n + "." for n in notes) or None,
    )


def _names_in(files: Iterable[IndexedFile]) -> list[str]:
    return sorted({n for e in files for n in names_in(e.outline)})


def _no_match(
    name: str, where: str, simple_names: Sequence[str], scope: Sequence[IndexedFile] | None, table: SymbolTable
) -> str:
    """Nothing answers to the name: say so, with the closest names there are. Close simple
    names first (`sned` → `send`); for a dotted name, the qualnames of those and of its own
    last part, ranked against the whole name (`Clinet.send` → `Client.send`)."""
    last = name.rsplit(".", 1)[-1]
    close = difflib.get_close_matches(last, simple_names, n=MAX_SUGGESTIONS, cutoff=SUGGESTION_CUTOFF)
    if "." in name:
        keys = {last, *close}
        files = scope if scope is not None else table.files_defining(keys)
        qualnames = sorted({f.qualname for f in find_by_names(keys, files)})
        close = difflib.get_close_matches(name, qualnames, n=MAX_SUGGESTIONS, cutoff=SUGGESTION_CUTOFF) or close
    if close:
        return f"no definition named {name!r}{where}; close names: {', '.join(close)}"
    return f"no definition named {name!r}{where}, nor one close to it; search the code for words from it"


def find_by_names(names: Collection[str], files: Iterable[IndexedFile]) -> Iterator[Found]:
    """Every definition whose simple name is one of `names` (for suggestions)."""
    for entry in files:
        for sym in entry.outline.symbols:
            if sym.name in names:
                yield Found(entry, sym.qualname, sym.kind, sym.signature, sym.start_line, sym.end_line, False, False, 0)
        for const in entry.outline.constants:
            if const.name in names:
                yield Found(entry, const.name, "constant", const.text, const.line, const.line, False, False, 0)


# ---------------------------------------------------------------- for people


def render_markdown(result: SymbolResult, *, with_note: bool = True) -> str:
    """Per match a heading (qualname, path:lines, kind) and its code in a fenced block (the
    signature alone when there is no body); the note, if any, last."""
    parts: list[str] = []
    for m in result.matches:
        heading = f"## {m.qualname} — {m.path}:{m.range.start_line}-{m.range.end_line} ({m.kind})"
        if m.body is None:
            parts.append(f"{heading}\n\n`{m.signature}`\n")
            continue
        fence = "`" * max(3, _longest_backtick_run(m.body) + 1)
        spec = language_for(m.path)
        language = spec.fence if spec is not None else DOCUMENT_FENCES.get(Path(m.path).suffix.lower(), "")
        body = m.body if m.body.endswith("\n") else m.body + "\n"
        parts.append(f"{heading}\n\n{fence}{language}\n{body}{fence}\n")
    if with_note and result.note:
        parts.append(f"> {result.note}\n")
    return "\n".join(parts)


def _longest_backtick_run(text: str) -> int:
    longest = run = 0
    for ch in text:
        run = run + 1 if ch == "`" else 0
        longest = max(longest, run)
    return longest
