"""Answering while a first index runs (issue 34): waiting for it, then following it.

A monorepo's first index takes minutes and an agent asks in its first seconds. A request
waits a little (`index_wait_s`), then is answered from the files ready so far, with a
warning that says so; from then on the derived indexes (search and body postings, the
reference graph, the symbol table) follow the pass on a thread of their own, and the
pass's end packs what they built into the images the next process starts from. The
engine owns the indexes; this is how they keep up while the pass runs.
"""

from __future__ import annotations

import functools
import logging
import threading
import time
from collections.abc import Callable, Sequence
from typing import Protocol

from ctx_lsp.activity import Activity
from ctx_lsp.index.files import IndexedFile
from ctx_lsp.index.graph import ReferenceGraph
from ctx_lsp.index.search import SearchIndex
from ctx_lsp.index.symbols import SymbolTable
from ctx_lsp.index.workspace import Workspace

__all__ = ["CLI_INDEX_WAIT_S", "REQUEST_INDEX_WAIT_S", "FirstPass"]

log = logging.getLogger(__name__)

REQUEST_INDEX_WAIT_S = 0.5
"""How long a server's request waits for a first index before it is answered from what is
indexed so far: every request is answered within a second while a monorepo indexes."""
UNPUBLISHED_MAX_WAIT_S = 300.0
"""How long a first request waits past `index_wait_s` for a first index to publish any
file (the kernel's walk and first batches: ~3-5 s) or to end (a pass that parses fewer
than `PUBLISH_MIN_PARSED` files publishes only then: a warm start, ~15-30 s on the
kernel): answered empty only if neither came by then."""
FIRST_ANSWER_POLL_S = 0.05
CLI_INDEX_WAIT_S = 20.0
"""How long a one-shot CLI call waits for a first index before it answers from what is
indexed so far (the kernel's fresh clone: ~4 minutes to index on 2 cores)."""
CATCH_UP_INTERVAL_S = 3.0
"""While requests are answered from a partial index, how often the indexing thread brings
the search postings and the graph up to date with what it has parsed."""
CATCH_UP_CHUNK_FILES = 64
"""Files applied under one hold of a derived index's lock while a pass is answered from."""
CATCH_UP_STEP_ASIDE_MAX_S = 2.0
"""How long catching up waits, before each chunk, for requests being answered to end: on
2 cores beside the pass's workers, a request sharing the interpreter with the catch-up
got a third of it (a 7K-file kernel subtree: 2K bundles of 1.2 s of CPU took 2-10 s)."""
CATCH_UP_STEP_ASIDE_POLL_S = 0.02


class Derived(Protocol):
    """What follows a pass: an index kept from the workspace's changes."""

    @property
    def empty(self) -> bool: ...

    def catch_up(self, force: bool = False, limit: int | None = None) -> bool: ...

    def hold_changes(self, held: bool) -> None: ...


def _yield_interpreter() -> None:
    time.sleep(0)  # let a waiting request take the lock (and the GIL)


class FirstPass:
    """The requests' side of a first full pass: `await_index` before answering, `begin`
    and `end` around the pass, `settle` at its end (the engine's `index` calls them)."""

    def __init__(
        self,
        workspace: Workspace,
        postings: tuple[SearchIndex, SearchIndex],
        graph: ReferenceGraph,
        symbols: SymbolTable,
        activity: Activity,
    ):
        self.workspace = workspace
        self._postings = postings
        self._graph = graph
        self._derived: tuple[Derived, ...] = (*postings, graph, symbols)
        self.activity = activity
        self._answered_partial = threading.Event()
        """A request was answered from a partial index during the running first pass."""
        self._partial_lock = threading.Lock()
        self._last_catch_up = 0.0
        self._published = threading.Event()
        """Set by a publish while requests are answered from a partial index."""
        self.on_settle_build: Callable[[str], None] | None = None
        """Called with "search", "body" or "graph" on the indexing thread while the end of
        a pass answered partially builds that image without the locks requests take
        (`settle`): a test holds it open to show that requests are answered."""
        workspace.subscribe(self.on_change)

    def begin(self) -> None:
        """A full pass starts: no request has been answered from it yet."""
        self.workspace.partial.clear()
        self._answered_partial.clear()

    def settle_if_followed(self) -> None:
        """The pass ended: if requests were answered from it, pack what was derived."""
        if self._answered_partial.is_set():
            self.settle()  # requests still hold off applying changes meanwhile

    def end(self) -> None:
        """Queries apply index changes themselves again."""
        with self._partial_lock:  # a request setting the hold sees the pass over, or is undone here
            self._hold_derived(False)

    def on_change(self, removed: Sequence[str], updated: Sequence[IndexedFile]) -> None:
        """A workspace listener: once a request has been answered from a partial index,
        the search postings, the graph (with its rank) and the symbol table follow the
        pass on a thread of their own (`_follow_pass`), and queries hold off applying
        changes themselves: a request only ranks what is there, instead of deriving the
        files parsed since the last one. Not on the indexing thread: the pool's batches
        wait for it to consume them, and the derivation starved the workers (the kernel's
        first pass ran its two workers at a third of a core each)."""
        if self._answered_partial.is_set() and self.workspace.indexing:
            self._published.set()

    def _follow_pass(self) -> None:
        """Apply what a first pass publishes, at most every `CATCH_UP_INTERVAL_S`, until
        the pass ends (the pass's end packs and saves what was derived)."""
        workspace = self.workspace
        while workspace.indexing or not workspace.indexed_once.is_set():
            if not self._published.wait(CATCH_UP_INTERVAL_S):
                continue
            self._published.clear()
            wait = self._last_catch_up + CATCH_UP_INTERVAL_S - time.monotonic()
            if wait > 0:
                time.sleep(wait)
            try:
                self._catch_up_derived(step_aside=True)
            except Exception:  # the next one tries again; requests still answer
                log.exception("following the first index failed")
            self._last_catch_up = time.monotonic()

    def _catch_up_derived(self, step_aside: bool = False) -> None:
        """Apply what the pass has published, a chunk at a time: requests take the same
        locks, and one holding them for seconds of derivation would make them wait."""
        pause = self._step_aside if step_aside else _yield_interpreter
        for derived in self._derived:
            pause()
            if derived.empty:
                # All published so far at once: a pass that reuses most of the cache (a
                # branch switch) publishes tens of thousands of files first, restored
                # from the cache's images here rather than applied 64 at a time.
                derived.catch_up(force=True)
            while derived.catch_up(force=True, limit=CATCH_UP_CHUNK_FILES):
                pause()
        for index in self._postings:
            if index.fold_due:  # held, they leave their folds to this thread, made outside their locks
                index.fold()
        pause()
        self._graph.warm_up(force=True)  # the rank, with nothing left to apply

    def _step_aside(self) -> None:
        """Let the requests being answered finish first (at most CATCH_UP_STEP_ASIDE_MAX_S)."""
        deadline = time.monotonic() + CATCH_UP_STEP_ASIDE_MAX_S
        time.sleep(0)  # a request waiting for the lock (and the interpreter) takes it
        while self.activity.busy() and time.monotonic() < deadline:
            time.sleep(CATCH_UP_STEP_ASIDE_POLL_S)

    def _hold_derived(self, held: bool) -> None:
        for derived in self._derived:
            derived.hold_changes(held)

    def settle(self) -> None:
        """A pass published piecewise: pack the postings built file by file and keep the
        images (postings, graph) the next process starts from.

        Requests keep answering meanwhile (on a 7K-file kernel subtree one waited 44 s
        here when this ran under their locks): queries still hold off applying changes,
        so what the pass published last is applied here a chunk at a time first; the
        images are built without the locks requests take and swapped in under them
        (`SearchIndex.fold`, `ReferenceGraph.compact`); then what came meanwhile (the
        watcher's refreshes) is applied the same way, before `index` lets requests apply
        changes again."""
        self._catch_up_derived()
        entries = list(self.workspace.files.values())
        hook = self.on_settle_build
        for name, derived in (("search", self._postings[0]), ("body", self._postings[1]), ("graph", self._graph)):
            derived.compact(entries, None if hook is None else functools.partial(hook, name))
        self._catch_up_derived()

    def await_index(self, index_wait_s: float | None) -> tuple[str, ...]:
        """Wait for the first full pass, at most `index_wait_s` (None: until it ends), and
        say so when the answer must come from what is indexed so far.

        A monorepo's first index takes minutes, and an agent asks in the first seconds; a
        server answers within a second from the files ready (parsed first those the
        requests name: `IndexPriorities`), with a warning that says how far the index is.
        Once a first pass is done, later ones (a re-index) never make requests wait."""
        workspace = self.workspace
        # Once one request was answered from a partial index, the next ones do not wait:
        # the pass will not end within the wait, and every request pays it otherwise.
        wait = 0.0 if self._answered_partial.is_set() else index_wait_s
        if workspace.indexed_once.wait(wait):
            return ()
        # Nothing published yet (the walk, the first batches; or a pass that parses
        # little, which publishes only when it ends: a warm start reusing the cache): an
        # empty answer helps nobody, so wait for the first files or the pass's end. (A
        # warm start answered empty once the wait ran out, then followed its pass a
        # chunk at a time: on a loaded 2-core machine the kernel's next bundle timed out.)
        deadline = time.monotonic() + UNPUBLISHED_MAX_WAIT_S
        while not workspace.partial.is_set() and time.monotonic() < deadline:
            if workspace.indexed_once.wait(FIRST_ANSWER_POLL_S):
                return ()
        progress = workspace.progress
        with self._partial_lock:
            if not self._answered_partial.is_set():  # the first partial answer: derive what is there
                self._catch_up_derived()
                self._last_catch_up = time.monotonic()
                if workspace.indexing:
                    self._hold_derived(True)
                    threading.Thread(target=self._follow_pass, name="ctx-lsp-follow-index", daemon=True).start()
                self._answered_partial.set()
        return (
            f"indexing: {progress.done:,} of {progress.total:,} files ready so far ({progress.phase}); "
            "this answer holds only what is indexed so far: ask again when ctx.status says indexing is done",
        )
