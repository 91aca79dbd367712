"""The shared vocabulary: the types every layer speaks, and nothing else.

Tiers, contributor names, candidates and offers (what contributors hand to assembly),
sections and snapshots (what a bundle is made of), and the typed requests (what the
adapters hand to the engine). It is a leaf: it imports nothing from the package, so the
index, the contributors, assembly and every adapter can share these types without an
import ever pointing up.

Result types are frozen stdlib dataclasses whose field names are the wire names of
DESIGN's protocol: pygls would serialise attrs classes with camelCase keys (STYLE §2).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from enum import Enum, IntEnum
from typing import Any


class Tier(IntEnum):
    """How much of a file a section shows (DESIGN: Concepts → Tiers)."""

    OUTLINE = 1
    FOCUSED = 2
    FULL = 3


class Named(str, Enum):
    """A concept with a wire name. A `str` subclass, so config tables and JSON keyed by the
    plain name find it, and `str()`/f-strings give the plain name on every Python."""

    def __str__(self) -> str:
        return str(self.value)

    def __format__(self, spec: str) -> str:
        return format(str(self.value), spec)


class ContributorName(Named):
    """Every contributor, in the order the snapshot lists them (DESIGN: Contributors)."""

    WORKING_FILES = "working_files"
    RETRIEVAL = "retrieval"
    CODEBASE_MAP = "codebase_map"
    PROJECT_DOCS = "project_docs"
    CONVERSATION_HISTORY = "conversation_history"
    ARTIFACTS = "artifacts"
    LIBRARY_DOCS = "library_docs"


class AdjustmentRule(Named):
    """The dynamic adjustments (assembly pass 2) a context window type may enable."""

    NO_CONVERSATION_TO_WORKING_FILES = "no_conversation_to_working_files"
    NO_WORKING_FILES_TO_RETRIEVAL = "no_working_files_to_retrieval"
    NO_QUERY_TO_CODEBASE_MAP = "no_query_to_codebase_map"
    DOMINANT_HIT_SHRINKS_MAP = "dominant_hit_shrinks_map"
    CODE_UNITS_SHRINK_MAP = "code_units_shrink_map"


class Strategy(Named):
    """How a contributor prefers to spend its allocation."""

    DEPTH = "depth"
    """Richest tier first: a few things shown well (working files, instructions, docs)."""
    BREADTH = "breadth"
    """Skeletons of many files first, then grow the best (retrieval, the codebase map)."""


class Format(Named):
    """How a bundle's `text` is rendered."""

    MARKDOWN = "markdown"
    XML = "xml"


class Utilization(Named):
    """How much of a model's context window a budget taken from the model may fill."""

    LOW = "low"
    MEDIUM = "medium"
    FULL = "full"


# ---------------------------------------------------------------- candidates and offers


@dataclass(frozen=True, slots=True)
class LineRange:
    start_line: int  # 1-based, inclusive
    end_line: int


@dataclass(frozen=True, slots=True)
class Rendering:
    """One candidate at one tier, ready to put in a bundle section."""

    tier: Tier
    content: str
    tokens: int
    """Real count of `content` with the request's counter; never above the cap asked for."""
    start_line: int
    """1-based range of the file the content covers: the whole file for outlines, the
    kept prefix for a cut tier 3, and 0..0 for an empty rendering."""
    end_line: int
    truncated: bool
    """Something was left out to fit the cap (members folded, lines cut, or — for plain
    text — everything)."""
    shown_symbols: tuple[str, ...]
    """Qualnames whose full source is in `content`: focused ones in tier 2, all in tier 3."""


RenderFn = Callable[[Tier, int], Rendering]
"""(tier, cap_tokens) → rendering. Memoise it (`memoised`): assembly asks repeatedly."""


@dataclass(frozen=True, slots=True)
class Candidate:
    """A section a contributor offers: what, why, and how to render it at each tier."""

    id: str
    contributor: ContributorName
    path: str  # display path; also the duplicate key (no file appears twice in a bundle)
    uri: str
    salience: float  # [0, 1]
    reason: str  # never empty: ctx.explain shows it
    tier: Tier  # the richest tier wanted; condensing steps down from here
    render: RenderFn
    min_tier: Tier = Tier.OUTLINE
    whole_count: Callable[[], int | None] | None = None
    """Tokens of the whole content (tier 3, uncut), counted once when first asked (a
    file's count is not made at indexing: `Workspace.whole_tokens`): assembly skips
    rendering a whole file that cannot fit, and shows whole a file that does."""

    @property
    def whole_tokens(self) -> int | None:
        return self.whole_count() if self.whole_count is not None else None


def memoised(fn: RenderFn) -> RenderFn:
    """A render function that renders each (tier, cap) once per candidate."""
    cache: dict[tuple[int, int], Rendering] = {}

    def render(tier: Tier, cap: int) -> Rendering:
        key = (int(tier), cap)
        hit = cache.get(key)
        if hit is None:
            hit = cache[key] = fn(tier, cap)
        return hit

    return render


@dataclass
class Offer:
    """One contributor's candidates, best first, and how it prefers to spend its share."""

    name: ContributorName
    candidates: list[Candidate]
    strategy: Strategy = Strategy.DEPTH
    depth_share: float = 0.0
    """A breadth contributor's share of its allocation for bodies before breadth (its best
    candidates at their focused tier), chosen by the contributor for this request."""
    whole_if_it_fits: bool = False
    """The request asked for these candidates whole (tier 3): the orchestrator gives the
    contributor room beyond its policy share, up to a limit, when that is what it takes."""
    units: tuple[tuple[str, int], ...] = ()
    """The best code units across the offer's candidates, best first, as (candidate id,
    estimated tokens): a breadth contributor's `depth_share` then goes to them, whichever
    file each is in, before breadth (issue 22: show the code a task touches)."""


# ---------------------------------------------------------------- bundle results


@dataclass(frozen=True, slots=True)
class Section:
    """One block of a bundle. Frozen: a pass that condenses one builds a new Section."""

    id: str
    contributor: str
    path: str
    uri: str
    tier: int
    range: LineRange
    tokens: int
    salience: float
    reason: str  # shown by ctx.explain; never empty
    content: str


@dataclass(frozen=True, slots=True)
class Contribution:
    contributor: str
    allocated: int
    used: int
    items: int
    condensed: int


@dataclass(frozen=True, slots=True)
class Snapshot:
    """How the budget was spent, for people and for agents that adapt their requests."""

    context_window_type: str
    model_context_limit: int | None
    output_reserve: int
    available_budget: int
    total_used: int
    utilization_pct: float
    tokenizer: str
    contributions: tuple[Contribution, ...] = ()
    condensations: tuple[str, ...] = ()
    dynamic_adjustments_fired: tuple[str, ...] = ()
    reallocation_events: tuple[str, ...] = ()
    skipped_contributors: tuple[str, ...] = ()
    warnings: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class BundleResult:
    sections: tuple[Section, ...]
    text: str
    total_tokens: int
    budget: int
    snapshot: Snapshot
    messages: tuple[dict[str, Any], ...] = field(default_factory=tuple)


@dataclass
class Decision:
    """Why one candidate is in or out: one row of `ctx.explain`."""

    id: str
    contributor: str
    path: str
    salience: float
    rank: float
    reason: str
    outcome: str = "not considered"
    """For people: "in: tier 2", "out: outranked — …"."""
    included: bool = False
    """For code: whether the candidate is in the bundle (never parse `outcome`)."""
    tier: int | None = None
    tokens: int = 0


@dataclass(frozen=True, slots=True)
class Explanation:
    """`ctx.explain`: every candidate of the last bundle, its score, and why it is in or out."""

    query: str
    agent: str
    budget: int
    total_tokens: int
    elapsed_ms: float
    candidates: tuple[Decision, ...]


# ---------------------------------------------------------------- requests


@dataclass(frozen=True, slots=True)
class Focus:
    """The cursor: an absolute path and a 0-based position, as in LSP."""

    path: str
    line: int
    character: int = 0


@dataclass(frozen=True, slots=True)
class DocsRequest:
    """Library docs asked for in a bundle: a library and what about it."""

    library: str
    topic: str | None


@dataclass(frozen=True, slots=True)
class BundleRequest:
    """A validated `ctx/bundle` request (`ctx_lsp.params.parse_bundle` builds it)."""

    query: str = ""
    agent: str = "default"
    budget: int | None = None
    model: str | None = None
    utilization: Utilization | None = None
    profile: str | None = None
    tier: Tier | None = None
    focus: Focus | None = None
    open: tuple[str, ...] = ()
    format: Format = Format.MARKDOWN
    messages: tuple[dict[str, Any], ...] = ()  # validated OpenAI-style messages
    summary: str | None = None
    artifacts: tuple[tuple[str, str], ...] = ()  # (key, content), in priority order
    docs: tuple[DocsRequest, ...] = ()


@dataclass(frozen=True, slots=True)
class WindowRequest:
    """A validated `ctx/window` request."""

    messages: tuple[dict[str, Any], ...]
    budget: int | None = None
    model: str | None = None
    utilization: Utilization | None = None
    summary: str | None = None


@dataclass(frozen=True, slots=True)
class OutlineRequest:
    path: str  # absolute, not yet checked against the workspace
    tier: Tier = Tier.OUTLINE


@dataclass(frozen=True, slots=True)
class SearchRequest:
    query: str
    limit: int = 20


@dataclass(frozen=True, slots=True)
class LibraryDocsRequest:
    """A validated `ctx/docs` request."""

    library: str
    topic: str | None = None
    agent: str = "default"
    max_tokens: int | None = None


@dataclass(frozen=True, slots=True)
class ResolveLibraryRequest:
    name: str
    limit: int = 10


@dataclass(frozen=True, slots=True)
class SymbolRequest:
    """A validated `ctx/symbol` request: one symbol's code, asked for by name."""

    name: str
    """A qualname (`Client.send`), a module-qualified one (`pkg.client.Client.send`), or a
    bare name (`send`)."""
    path: str | None = None
    """Only this file (or folder): absolute, or relative to the first workspace folder;
    not yet checked against the workspace."""
    include_body: bool = True
    max_tokens: int | None = None
    """Tokens for all the bodies together; None takes `ctx_lsp.index.symbols.DEFAULT_MAX_TOKENS`."""


# ---------------------------------------------------------------- symbol results


@dataclass(frozen=True, slots=True)
class SymbolMatch:
    """One definition a `ctx/symbol` name resolved to."""

    path: str
    uri: str
    qualname: str
    kind: str  # "class" | "function" | "method" | "constant" | "heading"
    range: LineRange  # the whole definition, decorators and docstring included
    signature: str
    body: str | None
    """The definition's exact source lines, cut at a line boundary (with a marker line
    saying what was left out and how to get it) when over budget; None when not asked for
    or when the budget went to better matches."""
    tokens: int  # real count of `body`; 0 without one
    truncated: bool


@dataclass(frozen=True, slots=True)
class SymbolResult:
    name: str
    matches: tuple[SymbolMatch, ...]  # best first: exact qualname matches, then by graph rank
    ambiguous: bool  # more than one definition answers to the name
    total_matches: int  # before the listing limit
    note: str | None = None
    """For the caller: why something is missing (close names when nothing matched, bodies
    left out for the budget, matches not listed) and what to ask next."""
    warnings: tuple[str, ...] = ()
    """What the caller must know about the answer: answered from a partial index."""
