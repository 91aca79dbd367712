"""What every contributor sees, and what a contributor is.

A contributor is an object with a name, a strategy and `offer(context) -> Offer`:
candidates in rank order, each with a salience in [0, 1] and a human reason. It never
decides what fits — the orchestrator does, so budgets are enforced in one place — and it
never recomputes what others need too: the pipeline computes the shared inputs (working
files, the personalised graph rank, the search ranking) once and puts them in the
`AssemblyContext` before any contributor is asked.
"""

from __future__ import annotations

import functools
import os
import stat
import sys
import threading
from collections import OrderedDict
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, TypeVar

from ctx_lsp.code.languages import language_named
from ctx_lsp.code.outline import Outline, split_lines
from ctx_lsp.code.outline_rows import RANK_FLOOR
from ctx_lsp.code.tiers import FileBasis, OutlineRenderer
from ctx_lsp.contributors.unit_ranking import UnitsCache
from ctx_lsp.errors import CtxError
from ctx_lsp.index.excerpts import Span, densest_window, hot_spans
from ctx_lsp.index.files import IndexedFile
from ctx_lsp.index.search import SearchHit, SearchIndex
from ctx_lsp.index.workspace import Workspace
from ctx_lsp.relevance import EXCERPT_SHARE, NEIGHBOUR_RANK
from ctx_lsp.tokens import TokenCounter
from ctx_lsp.vocabulary import (
    BundleRequest,
    Candidate,
    ContributorName,
    Offer,
    Rendering,
    Strategy,
    Tier,
    memoised,
)

if TYPE_CHECKING:
    from ctx_lsp.docs.library import LibraryDocs
    from ctx_lsp.index.graph import RankResult, ReferenceGraph
    from ctx_lsp.index.history_signals import HistorySignals


RENDERINGS_MAX_BYTES = 16 << 20
"""Estimated bytes of kept renderings (`_rendering_bytes`). The scale bench's session on
Django keeps ~3,700 renderings, ~13 MB by this estimate (~12.5 MB measured), so it is
bound by neither limit; a long session over big files stops here rather than at the
count (8,192 renderings took ~29 MB on Django)."""
BASES_MAX_BYTES = 48 << 20
"""Estimated bytes of kept file bases (`_basis_bytes`): Django's 512 take ~22 MB (text 11,
layouts 10), under this; 512 bases of 100 KB modules would take ~100 MB."""
RENDERING_OVERHEAD_BYTES = 800
"""What a kept rendering costs besides its content: its object, its key (file version,
tier, cap, and the tuple of ranked names that ordered it) and its LRU node; measured on
Django after the bench's session, ~700 bytes for the keys alone."""


def _rendering_bytes(rendering: Rendering) -> int:
    """Estimated. The content's real size (outline rows hold the gutter's bar, so they are
    stored two bytes a character); a tier-3 rendering shares its text with the basis, so
    this over-counts those."""
    return sys.getsizeof(rendering.content) + RENDERING_OVERHEAD_BYTES


def _basis_bytes(basis: FileBasis) -> int:
    """Estimated from the text alone, when the basis is made (its layouts come later): on
    Django a basis's layouts and row groups take about as much as its text."""
    return 2 * sys.getsizeof(basis.text)


class RenderCache:
    """Bounded LRUs shared by requests: renderings (the bulk of a bundle's cost), and the
    file bases they are fitted from (`FileBasis`: text, outline layouts), which a new query
    reuses even when its renderings differ.

    Each is bounded by count and by estimated bytes: the count alone let renderings of big
    files (a whole module at tier 3, 20K tokens) or bases of big files grow the server
    without limit in sight (8,192 renderings took ~29 MB on Django after ~3,000 requests)."""

    def __init__(
        self,
        max_items: int = 8192,
        max_bases: int = 512,
        max_item_bytes: int = RENDERINGS_MAX_BYTES,
        max_basis_bytes: int = BASES_MAX_BYTES,
    ):
        self.max_items = max_items
        self.max_bases = max_bases
        """~100 KB each for a big module; a bundle renders ~60 files, hubs again and again."""
        self.max_item_bytes = max_item_bytes
        self.max_basis_bytes = max_basis_bytes
        self._items: OrderedDict[tuple, Rendering] = OrderedDict()
        self._bases: OrderedDict[tuple, FileBasis] = OrderedDict()
        self._item_bytes = 0
        self._basis_bytes = 0
        self._lock = threading.Lock()
        self.units = UnitsCache()
        """Code units of the files recently ranked for their units (`unit_ranking`)."""

    def get(self, key: tuple) -> Rendering | None:
        with self._lock:
            hit = self._items.get(key)
            if hit is not None:
                self._items.move_to_end(key)
            return hit

    def put(self, key: tuple, value: Rendering) -> None:
        with self._lock:
            old = self._items.pop(key, None)
            if old is not None:
                self._item_bytes -= _rendering_bytes(old)
            self._items[key] = value
            self._item_bytes += _rendering_bytes(value)
            while self._items and (len(self._items) > self.max_items or self._item_bytes > self.max_item_bytes):
                _, dropped = self._items.popitem(last=False)
                self._item_bytes -= _rendering_bytes(dropped)

    def kept_basis(self, key: tuple, outline: Outline) -> FileBasis | None:
        """The basis kept for `key` (a file version), if any."""
        with self._lock:
            hit = self._bases.get(key)
            if hit is None or hit.outline is not outline:
                return None
            self._bases.move_to_end(key)
            return hit

    def basis(self, key: tuple, text: str, outline: Outline) -> FileBasis:
        """The basis kept for `key` (a file version), else a new one for `text`, kept."""
        with self._lock:
            hit = self._bases.get(key)
            if hit is not None and hit.outline is outline:
                self._bases.move_to_end(key)
                return hit
            if hit is not None:
                self._basis_bytes -= _basis_bytes(hit)
            basis = self._bases[key] = FileBasis(text, outline)
            self._bases.move_to_end(key)
            self._basis_bytes += _basis_bytes(basis)
            while len(self._bases) > 1 and (
                len(self._bases) > self.max_bases or self._basis_bytes > self.max_basis_bytes
            ):
                _, dropped = self._bases.popitem(last=False)
                self._basis_bytes -= _basis_bytes(dropped)
            return basis


@dataclass(frozen=True, slots=True)
class WorkingFile:
    entry: IndexedFile
    salience: float
    reason: str
    focus_symbols: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class RankedFile:
    """One file of the search ranking: symbol hits grouped by file, blended with the graph."""

    abs_path: str
    path: str
    lexical: float  # grouped BM25, normalised to the best file
    score: float  # final salience in [0, 1]
    hits: tuple[SearchHit, ...]
    history: str = ""  # what the repository's history says, when it moved the file (the reason shows it)
    history_gain: float = 0.0  # how much of `score` history added


@dataclass
class AssemblyContext:
    """One request's facts, the engine's indexes, and the shared inputs computed once."""

    request: BundleRequest
    workspace: Workspace
    search: SearchIndex
    bodies: SearchIndex  # files by the words in their code (index/body_terms.py)
    counter: TokenCounter
    tier: Tier  # richest tier sections may start at (agent / request, capped by the window type)
    max_tier: Tier  # the window type's cap
    focus_path: str | None = None  # abs path of the file under the cursor
    graph: ReferenceGraph | None = None
    mentioned: frozenset[str] = frozenset()  # identifiers named in the query
    renders: RenderCache = field(default_factory=RenderCache)
    budget: int = 0  # the bundle's token budget (a contributor may offer more at larger budgets)
    docs_cap: int = 0  # the agent's library-docs cap
    artifacts_budget: int = 0
    library_docs: Callable[[], LibraryDocs] | None = None  # created on first use (costs a subprocess)
    history: HistorySignals | None = None  # the repository's history (None: off, or not read yet)
    warnings: list[str] = field(default_factory=list)  # the snapshot's warnings; contributors add to it
    # Shared inputs, filled by the pipeline before any contributor offers:
    working: list[WorkingFile] = field(default_factory=list)
    rank: RankResult | None = None  # the graph rank personalised to the working files and query
    ranked: list[RankedFile] = field(default_factory=list)  # the search ranking of files
    hit_symbols: dict[str, dict[str, float]] = field(default_factory=dict)
    """abs_path → {qualname: best lexical score} of the symbols the task's search hit."""
    neighbours: dict[str, tuple[str, ...]] = field(default_factory=dict)
    """abs_path → symbols there that the working files' symbols call or are called by."""

    @property
    def query(self) -> str:
        return self.request.query

    @property
    def working_paths(self) -> set[str]:
        return {w.entry.abs_path for w in self.working}


class Contributor(Protocol):
    """A source of candidate sections (DESIGN: Contributors). Adding one is a module with a
    class like this, an entry in `contributors.registry`, a `ContributorName` and its
    policy shares in `config.py`."""

    name: ContributorName
    strategy: Strategy

    def applies(self, request: BundleRequest) -> bool:
        """Whether it takes part in this request at all (library docs only when asked for):
        a contributor that does not apply gives its share to the others."""
        ...

    def offer(self, ctx: AssemblyContext) -> Offer:
        """Its candidates for this request, best first."""
        ...


@dataclass(frozen=True)
class Excerpts:
    """How a file's focused tier picks the spans of lines it shows besides whole bodies:
    the task's term weights (`SearchIndex.term_weights`), applied to the file's text when
    it is first rendered; or the code units the bundle chose for it (`chosen`, best first:
    `for_units`), which may then take `share` of the section, all of it for units. `key`
    tells renderings for different tasks apart."""

    weights: Mapping[str, float]
    key: tuple
    chosen: tuple[Span, ...] | None = None
    share: float = EXCERPT_SHARE
    windows: tuple[int, ...] | None = None
    """With `chosen`: each chosen span is shown by at most this many of its lines, the run
    of them that holds the most of the task's words (`weights`)."""

    @classmethod
    def for_task(cls, weights: Mapping[str, float]) -> Excerpts | None:
        return cls(weights, tuple(sorted(weights.items()))) if weights else None

    @classmethod
    def for_units(
        cls, spans: Sequence[Span], windows: Sequence[int] | None = None, weights: Mapping[str, float] | None = None
    ) -> Excerpts:
        chosen = tuple(spans)
        if windows is None:
            return cls({}, ("units", chosen), chosen, 1.0)
        sizes, words = tuple(windows), dict(weights or {})
        return cls(words, ("windows", chosen, sizes, tuple(sorted(words.items()))), chosen, 1.0, sizes)

    def spans(self, text: str, outline: Outline, focus: Collection[str]) -> tuple[Span, ...]:
        if self.chosen is not None and self.windows is not None:
            lines = split_lines(text)
            return tuple(densest_window(lines, s, n, self.weights) for s, n in zip(self.chosen, self.windows))
        if self.chosen is not None:
            return self.chosen
        wanted = set(focus)
        covered = [(s.start_line, s.end_line) for s in outline.symbols if s.qualname in wanted]
        return hot_spans(split_lines(text), self.weights, covered=covered)


def precomputed(ranks: Mapping[str, float]) -> Callable[[], Mapping[str, float]]:
    """Ranks already at hand, in the lazy form `file_candidate` takes."""
    return lambda: ranks


def definition_ranks(
    ctx: AssemblyContext, rank: RankResult | None, abs_path: str, per_file: int
) -> Callable[[], dict[str, float]]:
    """The file's best `per_file` definitions scored for this request, computed when
    called (only for files actually rendered)."""

    def ranks() -> dict[str, float]:
        ranked: dict[str, float] = {}
        if ctx.graph is not None and rank is not None:
            ranked = {d.qualname: d.score for d in ctx.graph.rank_definitions(rank, [abs_path], per_file)}
        for qualname in ctx.neighbours.get(abs_path, ()):
            ranked[qualname] = NEIGHBOUR_RANK  # above any graph rank (≤ 1): kept first
        return ranked

    return ranks


T = TypeVar("T")


def _once(fn: Callable[[], T]) -> Callable[[], T]:
    """`fn()` computed on the first call and kept: what `functools.cache` does for a
    function without arguments, at a fraction of its cost to create (a bundle creates two
    per candidate, ~240 candidates: `functools.cache` took ~13 ms of a Django 8K bundle)."""
    box: list[T] = []

    def call() -> T:
        if not box:
            box.append(fn())
        return box[0]

    return call


def rank_order(ranks: Mapping[str, float]) -> tuple[tuple[str, ...], ...]:
    """All an outline takes from ranks (`outline_rows.code_rows`): which names are ranked
    and in what order, ties together (the file's line order breaks them). The values
    differ with every task (a file's score scales them all), the order mostly does not, so
    renderings keyed by the order are shared across tasks: a map shows the same hub files'
    skeletons for most of them."""
    tied: dict[float, list[str]] = {}
    for name, rank in ranks.items():
        if rank > RANK_FLOOR:
            tied.setdefault(rank, []).append(name)
    return tuple(tuple(sorted(tied[rank])) for rank in sorted(tied, reverse=True))


def unchanged_on_disk(entry: IndexedFile) -> bool:
    """Whether the file is still the regular file of the size and modification time it was
    indexed with (its own metadata: a link put in its place is not followed). Then a text
    read through the gate for this version is still the file's: a bundle renders ~30 files
    a request, and reading and hashing each again cost ~5 ms of a Django bundle."""
    try:
        st = os.lstat(entry.abs_path)
    except OSError:
        return False
    return stat.S_ISREG(st.st_mode) and st.st_size == entry.size and st.st_mtime_ns == entry.mtime_ns


@functools.lru_cache(maxsize=65536)
def _file_uri(abs_path: str) -> str:
    """A file URI per absolute path, kept: `Path.as_uri` parses the path every time."""
    return Path(abs_path).as_uri()


def file_candidate(
    ctx: AssemblyContext,
    entry: IndexedFile,
    contributor: ContributorName,
    salience: float,
    reason: str,
    tier: Tier,
    focus: Collection[str] = (),
    ranks: Callable[[], Mapping[str, float]] | None = None,
    compact: bool = False,
    excerpts: Excerpts | None = None,
    focused_cap: int | None = None,
) -> Candidate:
    """A whole-file candidate rendered with the standard tiers (outline/focused/full).

    `focus` and `ranks` (called once, when the file is first rendered) say which
    definitions an outline over its cap keeps first; `compact` lists definitions only;
    `excerpts` picks the spans of lines its focused tier also shows; `focused_cap` bounds
    that tier whatever room there is (a working file shows the units a task touches in a
    short outline, not its whole outline).
    """
    workspace, counter, focus = ctx.workspace, ctx.counter, tuple(focus)
    # Markdown is shown readable (HTML dropped), so its count on disk is not what renders.
    counts_whole = language_named(entry.language) is not None and entry.tokens_exact

    @_once
    def whole_tokens() -> int | None:
        """The whole file's count, made the first time assembly asks (not at indexing)."""
        if not counts_whole:
            return None
        try:
            return workspace.whole_tokens(entry, counter)
        except CtxError:  # unreadable since indexing: rendering says so
            return None

    version = (entry.abs_path, entry.hash, entry.overlay_version)

    @_once
    def ordering() -> tuple[Mapping[str, float], tuple]:
        """The ranks, and what orders the outline as a cache key (both computed once)."""
        rank_map = ranks() if ranks is not None else {}
        return rank_map, (focus, rank_order(rank_map), compact)

    @_once
    def renderer() -> tuple[OutlineRenderer, bool]:
        """Built on the first render that misses the cache; False if the file changed since
        it was indexed (then its renderings are not shared)."""
        kept = ctx.renders.kept_basis(version, entry.outline) if entry.overlay_version is None else None
        if kept is not None and unchanged_on_disk(entry):
            text, current = kept.text, entry  # read through the gate when the basis was made
        else:
            text, current = workspace.read_text(entry)
        spans = functools.partial(excerpts.spans, text, current.outline, focus) if excerpts is not None else ()
        shareable = current is entry
        basis = ctx.renders.basis(version, text, current.outline) if shareable else None
        return (
            OutlineRenderer(
                current.path,
                text,
                current.outline,
                counter,
                focus=focus,
                ranks=ordering()[0],
                compact=compact,
                excerpts=spans,
                excerpt_share=excerpts.share if excerpts is not None else EXCERPT_SHARE,
                basis=basis,
                whole_tokens=whole_tokens() if shareable else None,  # the indexed text's count
            ),
            shareable,
        )

    unreadable: set[str] = set()

    def rendering(t: Tier, cap: int) -> Rendering:
        if t == Tier.FOCUSED and focused_cap is not None:
            cap = min(cap, focused_cap)
        # Keyed by the file's content hash and buffer version and by what orders the
        # outline, so renderings are shared across requests while the file is unchanged.
        # Excerpts (the task's words) change only the focused tier.
        shape = ordering()[1] if t < Tier.FULL else ()
        if t == Tier.FOCUSED and excerpts is not None:
            shape = (*shape, excerpts.key)
        key = (*version, int(t), cap, shape)
        hit = ctx.renders.get(key)
        if hit is None:
            try:
                prepared, shareable = renderer()
            except CtxError as err:  # deleted, swapped for a link, unreadable since indexing
                if entry.abs_path not in unreadable:
                    unreadable.add(entry.abs_path)
                    ctx.warnings.append(f"{entry.path} left out: {err}")
                return Rendering(t, "", 0, 0, 0, True, ())
            hit = prepared.render(t, cap)
            if shareable:
                ctx.renders.put(key, hit)
        return hit

    return Candidate(
        id=f"{contributor}:{entry.path}",
        contributor=contributor,
        path=entry.path,
        uri=_file_uri(entry.abs_path),
        salience=max(0.0, min(1.0, salience)),
        reason=reason,
        tier=tier,
        render=memoised(rendering),
        whole_count=whole_tokens,
    )
