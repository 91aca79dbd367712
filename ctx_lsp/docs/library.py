"""Library docs, Context7-style and offline: `ctx/docs`, `ctx/resolveLibrary`,
`ctx.prewarmDocs` (DESIGN: Library docs).

`LibraryDocs` is owned by the engine, one per workspace. It finds the workspace's Python
environment, lists what is installed (the catalog), turns a library into ranked sections
on first use, and answers `docs(library, topic, cap)` with the best sections that fit in
the cap. Results are cached by (library, version, topic, cap) in memory and, when given a
file, in SQLite, so a repeated lookup costs a dictionary access.

Nothing here imports a user package; see `sources`.
"""

from __future__ import annotations

import difflib
import json
import os
import threading
import time
from collections import OrderedDict, deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, replace
from pathlib import Path

from ctx_lsp.docs import dependencies
from ctx_lsp.docs.cache import CacheKey, DocsCache
from ctx_lsp.docs.environment import (
    LibraryEntry,
    SitePaths,
    find_interpreter,
    is_trusted_interpreter,
    normalize_name,
    scan_distributions,
    site_paths,
    venv_site_paths,
)
from ctx_lsp.docs.ranking import SectionIndex, build_index, overview, rank, relevant, select, suggestions
from ctx_lsp.docs.sections import DocSection
from ctx_lsp.docs.sources import add_extra_docs, library_drafts, llms_title, workspace_llms_files
from ctx_lsp.errors import InvalidParam, NotFound
from ctx_lsp.index.terms import query_terms
from ctx_lsp.tokens import TokenCounter

__all__ = [
    "AGENT_DOCS_CAPS",
    "DEFAULT_DOCS_CAP",
    "DocsResult",
    "DocsSource",
    "LibraryDocs",
    "LibraryMatch",
]

AGENT_DOCS_CAPS: Mapping[str, int] = {
    "planner": 2500,
    "analyst": 2500,
    "reviewer": 3000,
    "architect": 4000,
    "designer": 4000,
    "implementer": 3000,
    "tester": 2500,
    "debugger": 3000,
    "default": 2500,
}
"""DESIGN's agent table. The engine passes the configured cap in; this is only the
default when nothing is configured."""

DEFAULT_DOCS_CAP = AGENT_DOCS_CAPS["default"]

MAX_LOADED_LIBRARIES = 16
"""Libraries whose parsed sections stay in memory (least recently used go first): a
second topic on one of them skips parsing. lsprotocol, the biggest we met, is ~600
sections."""

TIMING_SAMPLES = 1000
"""Latencies kept for the p50/p95 in `stats()`."""

FUZZY_MIN_RATIO = 0.75
"""difflib similarity a name needs to be suggested for a misspelling ("pyglss")."""

EXACT_MATCH = 100
NORMALIZED_MATCH = 95
IMPORT_NAME_MATCH = 90
PREFIX_MATCH = 70
SUBSTRING_MATCH = 50
FUZZY_MATCH = 30
"""`resolve` scores. `docs` accepts only the first three (a prefix such as "py" names
no one library), the rest are suggestions."""

NO_MATCH_NOTE = "No section of {library} {version} matches the topic {topic!r}."
NO_TERMS_NOTE = "The topic {topic!r} has no words to search {library} {version} for (only common words)."
NO_DOCS_NOTE = "No docs found for {library}: no description, docstrings, llms.txt or docs folder."
SUGGESTIONS_NOTE = " Topics it covers: {topics}."
NO_TOPIC_KEY = "\0no-terms"
"""Cache key of a topic made only of stop words: it matches nothing, and must not share
its entry with the topicless overview."""


@dataclass(frozen=True, slots=True)
class LibraryMatch:
    library: str
    version: str
    summary: str


@dataclass(frozen=True, slots=True)
class DocsSource:
    path: str
    line: int
    title: str


@dataclass(frozen=True, slots=True)
class DocsResult:
    """The `ctx/docs` result (field names are the protocol's)."""

    library: str
    version: str
    topic: str
    content: str
    tokens: int
    """Real count of `content`; never above `cap`."""
    cap: int
    """The cap that applied: the agent's docs cap, lowered by `max_tokens` if given."""
    truncated: bool
    """A relevant section was left out or cut to fit."""
    cache: str
    """"hit" | "miss"."""
    elapsed_ms: float
    sources: tuple[DocsSource, ...]
    matched: bool = True
    """False when no section matches the topic (no section contains any of its words) or
    the library has no docs: `content` is then empty rather than docs about something
    else, and `note` says so."""
    note: str = ""
    """Why nothing matched, and topics the library does cover (empty when matched)."""


def result_to_json(result: DocsResult) -> str:
    return json.dumps(asdict(result), separators=(",", ":"))


def result_from_json(text: str) -> DocsResult:
    data = json.loads(text)
    data["sources"] = tuple(DocsSource(**s) for s in data["sources"])
    return DocsResult(**data)


@dataclass(frozen=True, slots=True, eq=False)
class _Loaded:
    """One library's parsed sections with their index and overview order."""

    sections: tuple[DocSection, ...]
    index: SectionIndex
    overview: tuple[int, ...]


def topic_key(topic: str) -> str:
    """Topics that rank alike share a cache entry: ranking sees a set of terms, so case,
    spacing, word order, plurals and stop words do not change the result."""
    if not topic.strip():
        return ""
    found = sorted(set(query_terms(topic)))
    return " ".join(found) if found else NO_TOPIC_KEY


def _percentile(samples: Sequence[float], share: float) -> float | None:
    """Nearest-rank percentile, or None without samples."""
    if not samples:
        return None
    ordered = sorted(samples)
    index = max(0, min(len(ordered) - 1, round(share * len(ordered) + 0.5) - 1))
    return round(ordered[index], 3)


def _positive_int(value: object, field: str, fix: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise InvalidParam(field, f"expected a positive token count, got {value!r}", fix)
    return value


def effective_cap(cap: int, max_tokens: int | None) -> int:
    """`max_tokens` may only lower the agent's docs cap, never raise it (DESIGN: Budget)."""
    cap = _positive_int(cap, "cap", "configure a positive docs cap for the agent, e.g. 2500")
    if max_tokens is None:
        return cap
    return min(cap, _positive_int(max_tokens, "max_tokens", "pass a positive token count, e.g. 1500, or omit it"))


def _match_score(query: str, normalized: str, entry: LibraryEntry) -> float:
    if entry.name == query:
        return EXACT_MATCH
    if entry.key == normalized:
        return NORMALIZED_MATCH
    imports = [normalize_name(n) for n in entry.import_names]
    if normalized in imports:
        return IMPORT_NAME_MATCH
    if entry.key.startswith(normalized) or any(n.startswith(normalized) for n in imports):
        return PREFIX_MATCH - min(len(entry.key) - len(normalized), 19)
    if normalized in entry.key:
        return SUBSTRING_MATCH - min(len(entry.key) - len(normalized), 19)
    ratio = difflib.SequenceMatcher(None, normalized, entry.key).ratio()
    return FUZZY_MATCH * ratio if ratio >= FUZZY_MIN_RATIO else 0.0


def _folder_map(folders: Mapping[str, Sequence[str]] | Sequence[str], root: Path | None) -> dict[str, list[str]]:
    """Config's docs folders as library → absolute paths. A bare list names each folder
    after its library (`docs/pygls` documents pygls)."""
    items: list[tuple[str, str]]
    if isinstance(folders, Mapping):
        items = []
        for library, paths in folders.items():
            paths = [paths] if isinstance(paths, str) else list(paths)
            items += [(library, p) for p in paths]
    else:
        items = [(Path(p).name, p) for p in folders]
    out: dict[str, list[str]] = {}
    for library, folder in items:
        path = Path(folder).expanduser()
        if not path.is_absolute() and root is not None:
            path = root / path
        out.setdefault(library, []).append(str(path))
    return out


class LibraryDocs:
    """Docs of the libraries a workspace uses; see the module docstring.

    `site_paths` skips asking an interpreter (tests, or an engine that already knows the
    paths); `environ` is where `$VIRTUAL_ENV` is read from. `read_roots` are where docs
    folders and the workspace's `llms.txt` may resolve to (default: the workspace root):
    the engine adds the folders the user's own settings name, never a workspace's.
    """

    def __init__(
        self,
        workspace_root: Path | None,
        counter: TokenCounter,
        *,
        interpreter: str | None = None,
        docs_folders: Mapping[str, Sequence[str]] | Sequence[str] = {},
        require_topic: bool = True,
        allow_full_library: Sequence[str] = (),
        cache_db: Path | None = None,
        site_paths: Sequence[Path] | None = None,
        environ: Mapping[str, str] | None = None,
        read_roots: Sequence[Path] | None = None,
        interpreter_trusted: bool = False,
    ) -> None:
        self.workspace_root = workspace_root
        self.counter = counter
        self.require_topic = require_topic
        self._interpreter = interpreter
        self._interpreter_trusted = interpreter_trusted
        """`interpreter` was named by the user's own settings: it may be run even when it lies
        inside the workspace (`environment.is_trusted_interpreter`)."""
        self._environ = os.environ if environ is None else environ
        self._docs_folders = _folder_map(docs_folders, workspace_root)
        self._read_roots: tuple[Path, ...] | None = (
            tuple(read_roots) if read_roots is not None else (workspace_root,) if workspace_root is not None else None
        )
        self._allow_full = frozenset(normalize_name(n) for n in allow_full_library)
        self._given_paths = tuple(Path(p) for p in site_paths) if site_paths is not None else None
        self._cache: DocsCache[DocsResult] = DocsCache(cache_db, result_to_json, result_from_json)
        self._lock = threading.RLock()
        """Held while building the catalog or parsing a library; cache hits never take it."""
        self._site: SitePaths | None = None
        self._catalog: dict[str, LibraryEntry] | None = None
        self._loaded: OrderedDict[tuple[str, str, str], _Loaded] = OrderedDict()
        self._warnings: list[str] = []
        self._stats_lock = threading.Lock()
        self._lookups = 0
        self._hits = 0
        self._hit_ms: deque[float] = deque(maxlen=TIMING_SAMPLES)
        self._miss_ms: deque[float] = deque(maxlen=TIMING_SAMPLES)

    # -- the environment -------------------------------------------------------------------

    def paths(self) -> tuple[Path, ...]:
        """Import paths of the workspace's interpreter (asked once, then remembered)."""
        with self._lock:
            if self._site is None:
                if self._given_paths is not None:
                    self._site = SitePaths("", self._given_paths)
                else:
                    exe = find_interpreter(self.workspace_root, self._interpreter, self._environ)
                    named = self._interpreter_trusted and bool(self._interpreter)
                    if self.workspace_root is not None and not is_trusted_interpreter(exe, self.workspace_root, named):
                        self._site = venv_site_paths(exe, self.workspace_root)
                    else:
                        self._site = site_paths(exe)
                    if self._site.warning:
                        self._warnings.append(self._site.warning)
            return self._site.paths

    def catalog(self) -> Mapping[str, LibraryEntry]:
        """Every library docs can be asked about, by normalized name."""
        catalog = self._catalog
        if catalog is not None:
            return catalog
        with self._lock:
            if self._catalog is None:
                entries = {e.key: e for e in scan_distributions(self.paths())}
                self._catalog = add_extra_docs(entries, self._extra_docs(entries))
            return self._catalog

    def _extra_docs(self, entries: Mapping[str, LibraryEntry]) -> dict[str, list[str]]:
        """Configured docs folders, plus the workspace root's `llms.txt`, which belongs to
        the library its `# Title` names if that one is installed, else to the workspace's
        own project."""
        extra = {library: [p for p in paths if os.path.exists(p)] for library, paths in self._docs_folders.items()}
        for library, paths in self._docs_folders.items():
            for missing in (p for p in paths if not os.path.exists(p)):
                self._warnings.append(f"docs folder {missing} for {library} does not exist")
        for path in workspace_llms_files(self.workspace_root):
            title = normalize_name(llms_title(path, self._read_roots))
            owner = (
                entries[title].name
                if title in entries
                else (
                    dependencies.project_name(self.workspace_root)
                    or (self.workspace_root.name if self.workspace_root else "")
                )
            )
            if owner:
                extra.setdefault(owner, []).append(str(path))
        return {library: paths for library, paths in extra.items() if paths}

    def refresh(self) -> None:
        """Forget the environment, the catalog and parsed libraries (after an install or
        an edit of a docs folder); cached results stay, keyed by version and stamp."""
        with self._lock:
            self._site = None
            self._catalog = None
            self._loaded.clear()

    # -- resolve ----------------------------------------------------------------------------

    def resolve(self, name: str, limit: int = 10) -> list[LibraryMatch]:
        """Installed libraries that `name` may mean, best first: the distribution name,
        the same name normalized (PEP 503), an import name (`yaml` → PyYAML), then
        prefixes, substrings and near misspellings."""
        if not isinstance(name, str) or not name.strip():
            raise InvalidParam("name", "is empty", "pass a library name such as 'pygls'")
        limit = _positive_int(limit, "limit", "pass a positive number of matches, e.g. 10")
        return [LibraryMatch(e.name, e.version, e.summary) for _, e in self._ranked(name.strip())[:limit]]

    def _ranked(self, query: str) -> list[tuple[float, LibraryEntry]]:
        normalized = normalize_name(query)
        scored = [(score, e) for e in self.catalog().values() if (score := _match_score(query, normalized, e)) > 0]
        scored.sort(key=lambda item: (-item[0], len(item[1].name), item[1].key))
        return scored

    def entry(self, library: str) -> LibraryEntry:
        """The one library `library` names (by its name, normalized name or import name),
        or NotFound with the closest names."""
        if not isinstance(library, str) or not library.strip():
            raise InvalidParam("library", "is empty", "pass an installed library's name, e.g. 'pygls'")
        catalog = self.catalog()
        query = library.strip()
        found = catalog.get(normalize_name(query))
        if found is not None:
            return found
        ranked = self._ranked(query)
        if ranked and ranked[0][0] >= IMPORT_NAME_MATCH:
            return ranked[0][1]
        close = [e.name for _, e in ranked[:5]]
        hint = f"close matches: {', '.join(close)}" if close else "no installed library has a similar name"
        where = self._site.interpreter if self._site and self._site.interpreter else "the given site paths"
        raise NotFound(
            f"library {query!r} is not installed for {where} and no docs folder names it; {hint}. "
            "Ask again with one of them (LSP ctx/resolveLibrary or `ctx-lsp resolve NAME` lists more), "
            "or set python.interpreter / a docs folder for it"
        )

    # -- docs -------------------------------------------------------------------------------

    def docs(self, library: str, topic: str | None, cap: int, max_tokens: int | None = None) -> DocsResult:
        """The library's docs on `topic`, within min(cap, max_tokens) tokens."""
        return self._answer(library, topic, cap, max_tokens, record=True)

    def _answer(self, library: str, topic: str | None, cap: int, max_tokens: int | None, *, record: bool) -> DocsResult:
        """`docs`; `record` is False for prewarming, whose lookups nobody asked for and
        must not dilute the hit rate and latencies `stats()` reports."""
        start = time.perf_counter()
        limit = effective_cap(cap, max_tokens)
        if topic is not None and not isinstance(topic, str):
            raise InvalidParam(
                "topic", f"expected text, got {type(topic).__name__}", "pass a topic such as 'custom requests'"
            )
        topic_text = " ".join((topic or "").split())
        entry = self.entry(library)
        if not topic_text and self.require_topic and not self._full_library_allowed(entry):
            raise InvalidParam(
                "topic",
                "is required for library docs",
                "pass a topic such as 'custom requests', or add the library to allow_full_library",
            )
        key = CacheKey(entry.name, entry.version, entry.stamp, topic_key(topic_text), limit, self.counter.name)
        cached = self._cache.get(key)
        if cached is not None:
            elapsed = (time.perf_counter() - start) * 1000
            if record:
                self._record(hit=True, elapsed_ms=elapsed)
            return replace(cached, topic=topic_text, cache="hit", elapsed_ms=round(elapsed, 3))
        result = self._compute(entry, topic_text, limit)
        elapsed = (time.perf_counter() - start) * 1000
        result = replace(result, elapsed_ms=round(elapsed, 3))
        self._cache.put(key, result)
        if record:
            self._record(hit=False, elapsed_ms=elapsed)
        return result

    def _full_library_allowed(self, entry: LibraryEntry) -> bool:
        """allow_full_library may name a library by its name or an import name."""
        names = (entry.key, *(normalize_name(n) for n in entry.import_names))
        return any(name in self._allow_full for name in names)

    def _compute(self, entry: LibraryEntry, topic: str, cap: int) -> DocsResult:
        """The sections that match the topic, best first, within `cap`; without a topic,
        the overview. A topic no section contains a word of gets no docs at all: the
        overview instead would read, to an agent, as the answer to its question."""
        loaded = self._load(entry)
        order: Sequence[int] = loaded.overview
        query = query_terms(topic)
        names = {"library": entry.name, "version": entry.version, "topic": topic}
        note = ""
        if not loaded.sections:
            note = NO_DOCS_NOTE.format(**names)
        elif query:
            order = relevant(rank(loaded.index, query))
            note = "" if order else NO_MATCH_NOTE.format(**names)
        elif topic:
            note = NO_TERMS_NOTE.format(**names)
        if note:
            topics = suggestions(loaded.sections)
            if topics:
                note += SUGGESTIONS_NOTE.format(topics=", ".join(topics))
            return DocsResult(
                library=entry.name,
                version=entry.version,
                topic=topic,
                content="",
                tokens=0,
                cap=cap,
                truncated=False,
                cache="miss",
                elapsed_ms=0.0,
                sources=(),
                matched=False,
                note=note,
            )
        chosen = select(loaded.sections, order, cap, self.counter)
        sources = tuple(DocsSource(p.section.path, p.section.line, p.section.title) for p in chosen.picked)
        return DocsResult(
            library=entry.name,
            version=entry.version,
            topic=topic,
            content=chosen.content,
            tokens=chosen.tokens,
            cap=cap,
            truncated=chosen.truncated,
            cache="miss",
            elapsed_ms=0.0,
            sources=sources,
        )

    def sections(self, library: str) -> tuple[DocSection, ...]:
        """All sections of a library (parsed on first use): for tests and `ctx.explain`."""
        return self._load(self.entry(library)).sections

    def _load(self, entry: LibraryEntry) -> _Loaded:
        key = (entry.key, entry.version, entry.stamp)
        with self._lock:
            loaded = self._loaded.get(key)
            if loaded is not None:
                self._loaded.move_to_end(key)
                return loaded
            drafts = library_drafts(entry, self.paths(), self.workspace_root, self._read_roots)
            counts = self.counter.count_many([d.text for d in drafts])
            sections = tuple(
                DocSection(entry.name, entry.version, d.title, d.path, d.line, d.kind, d.text, n, d.weight)
                for d, n in zip(drafts, counts)
            )
            loaded = _Loaded(sections, build_index(sections), tuple(overview(sections)))
            self._loaded[key] = loaded
            while len(self._loaded) > MAX_LOADED_LIBRARIES:
                self._loaded.popitem(last=False)
            return loaded

    # -- prewarm, dependencies, stats ---------------------------------------------------------

    def prewarm(
        self,
        libraries: Sequence[str],
        topics: Sequence[str] = ("",),
        progress: Callable[[int, int, str], None] | None = None,
        *,
        cap: int = DEFAULT_DOCS_CAP,
    ) -> int:
        """Parse each library (topic "" means: sections only) and fill the result cache
        for the other topics at `cap`. Libraries that are not installed are skipped, not
        errors: a declared dependency may simply not be installed yet. Returns how many
        libraries were warmed."""
        warmed = 0
        for done, library in enumerate(libraries, 1):
            try:
                entry = self.entry(library)
            except (NotFound, InvalidParam):
                entry = None
            if entry is not None:
                self._load(entry)
                for topic in topics:
                    if topic.strip():
                        self._answer(entry.name, topic, cap, None, record=False)
                warmed += 1
            if progress is not None:
                progress(done, len(libraries), library)
        return warmed

    def declared_dependencies(self) -> list[str]:
        """Distribution names the workspace declares (pyproject.toml, requirements*.txt)."""
        return dependencies.declared_dependencies(self.workspace_root)

    def _record(self, *, hit: bool, elapsed_ms: float) -> None:
        with self._stats_lock:
            self._lookups += 1
            if hit:
                self._hits += 1
                self._hit_ms.append(elapsed_ms)
            else:
                self._miss_ms.append(elapsed_ms)

    def stats(self) -> dict[str, object]:
        """Cache health for `ctx.status`: hit rate and latencies (ms) of recent lookups."""
        with self._stats_lock:
            lookups, hits = self._lookups, self._hits
            hit_ms, miss_ms = list(self._hit_ms), list(self._miss_ms)
        return {
            "lookups": lookups,
            "hits": hits,
            "misses": lookups - hits,
            "hit_rate": round(hits / lookups, 4) if lookups else None,
            "hit_p50_ms": _percentile(hit_ms, 0.50),
            "hit_p95_ms": _percentile(hit_ms, 0.95),
            "miss_p50_ms": _percentile(miss_ms, 0.50),
            "miss_p95_ms": _percentile(miss_ms, 0.95),
            "libraries_loaded": len(self._loaded),
            "libraries_available": len(self._catalog) if self._catalog is not None else None,
            "interpreter": self._site.interpreter if self._site else None,
            "warnings": list(self._warnings),
            **self._cache.health(),
        }

    def close(self) -> None:
        self._cache.close()
