"""Tests for ctx_lsp/docs/library.py: `LibraryDocs` against real installed libraries
(pygls, lsprotocol) and fake distributions built under tmp_path."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ctx_lsp.docs.library import AGENT_DOCS_CAPS, LibraryDocs, topic_key
from ctx_lsp.errors import InvalidParam, NotFound
from ctx_lsp.tokens import TokenCounter

TESTER_CAP = AGENT_DOCS_CAPS["tester"]


# --- real libraries -----------------------------------------------------------------------


def test_pygls_custom_requests(real_docs: LibraryDocs, counter: TokenCounter) -> None:
    """Ensure that pygls docs on "custom requests" for the tester agent fit its 2,500-token
    cap and cover registering handlers and sending requests."""
    result = real_docs.docs("pygls", "custom requests", TESTER_CAP)
    assert result.library == "pygls"
    assert result.version
    assert result.topic == "custom requests"
    assert 0 < result.tokens <= TESTER_CAP
    assert result.tokens == counter.count(result.content)
    assert result.cap == TESTER_CAP
    for expected in ("feature", "send_request", "custom commands"):
        assert expected in result.content
    assert result.sources and all(Path(s.path).is_file() and s.line >= 1 for s in result.sources)
    assert result.sources[0].title in result.content


def test_pygls_nonsense_topic_matches_nothing(real_docs: LibraryDocs) -> None:
    """Ensure that a topic none of pygls's sections contains a word of returns no docs
    (it used to return ~2,500 tokens of overview), with a note listing real topics."""
    result = real_docs.docs("pygls", "qwxzzy blorf", TESTER_CAP)
    assert result.matched is False
    assert result.content == "" and result.tokens == 0 and result.sources == ()
    assert "No section of pygls" in result.note and "'qwxzzy blorf'" in result.note
    assert "pygls.lsp" in result.note and "Quickstart" in result.note
    partly = real_docs.docs("pygls", "qwxzzy custom requests", TESTER_CAP)
    assert partly.matched is True and "send_request" in partly.content


def test_second_identical_call_is_a_cache_hit(real_docs: LibraryDocs) -> None:
    """Ensure that repeating a lookup is served from the cache with the same content."""
    first = real_docs.docs("pygls", "custom requests", TESTER_CAP)
    second = real_docs.docs("pygls", "custom requests", TESTER_CAP)
    assert second.cache == "hit"
    assert second.content == first.content
    assert second.elapsed_ms >= 0
    stats = real_docs.stats()
    assert stats["hits"] >= 1
    assert stats["hit_p50_ms"] is not None and stats["miss_p50_ms"] is not None
    assert 0 < stats["hit_rate"] <= 1


def test_equivalent_topics_share_a_cache_entry(real_docs: LibraryDocs) -> None:
    """Ensure that case, word order and plurals do not defeat the cache, and that a hit
    reports the topic as asked."""
    real_docs.docs("pygls", "send request", TESTER_CAP)
    again = real_docs.docs("pygls", "Requests  SEND", TESTER_CAP)
    assert again.cache == "hit"
    assert again.topic == "Requests SEND"
    assert topic_key("send request") == topic_key("Requests  SEND")


def test_lsprotocol_topic(real_docs: LibraryDocs) -> None:
    """Ensure that a big generated module (lsprotocol.types) yields the classes a topic names."""
    result = real_docs.docs("lsprotocol", "completion item", 3000)
    assert "lsprotocol.types.CompletionItem" in result.content
    assert result.tokens <= 3000


def test_a_topic_is_required(real_docs: LibraryDocs) -> None:
    """Ensure that a lookup without a topic is refused with an error naming `topic` and the fix."""
    for topic in (None, "", "   "):
        with pytest.raises(InvalidParam) as caught:
            real_docs.docs("pygls", topic, TESTER_CAP)
        assert caught.value.field == "topic"
        assert "allow_full_library" in str(caught.value)


def test_allow_full_library(counter: TokenCounter) -> None:
    """Ensure that a library on allow_full_library can be read without a topic, description first."""
    docs = LibraryDocs(None, counter, environ={}, allow_full_library=["PyGLS"])
    result = docs.docs("pygls", None, 1500)
    assert 0 < result.tokens <= 1500
    assert result.sources[0].title.startswith("pygls README")
    assert result.truncated
    with pytest.raises(InvalidParam):
        docs.docs("lsprotocol", None, 1500)


def test_allow_full_library_by_import_name(fake_site: Path, counter: TokenCounter) -> None:
    """Ensure allow_full_library may name a library by its import name."""
    docs = LibraryDocs(None, counter, site_paths=[fake_site], allow_full_library=["barbaz"])
    assert "Do the baz." in docs.docs("bar-baz", None, 500).content


def test_require_topic_false(fake_site: Path, counter: TokenCounter) -> None:
    """Ensure that require_topic=False lets any library be read without a topic."""
    docs = LibraryDocs(None, counter, site_paths=[fake_site], require_topic=False)
    result = docs.docs("foo", None, 2000)
    assert "Foo frobnicates widgets quickly." in result.content


def test_max_tokens_only_lowers_the_cap(real_docs: LibraryDocs) -> None:
    """Ensure that max_tokens lowers the cap but never raises it."""
    lowered = real_docs.docs("pygls", "custom requests", TESTER_CAP, max_tokens=400)
    assert lowered.cap == 400 and lowered.tokens <= 400
    raised = real_docs.docs("pygls", "custom requests", TESTER_CAP, max_tokens=50_000)
    assert raised.cap == TESTER_CAP and raised.tokens <= TESTER_CAP


@pytest.mark.parametrize("bad", [0, -5, True, "100", 1.5])
def test_bad_max_tokens(real_docs: LibraryDocs, bad: object) -> None:
    """Ensure that a max_tokens that is not a positive int is an error naming it."""
    with pytest.raises(InvalidParam) as caught:
        real_docs.docs("pygls", "features", TESTER_CAP, max_tokens=bad)  # type: ignore[arg-type]
    assert caught.value.field == "max_tokens"


def test_resolve_real_libraries(real_docs: LibraryDocs) -> None:
    """Ensure that resolve finds libraries by any spelling of their name."""
    assert real_docs.resolve("PyGLS")[0].library == "pygls"
    lsp = real_docs.resolve("lsprotocol")[0]
    assert lsp.library == "lsprotocol" and lsp.version and lsp.summary
    assert real_docs.resolve("tree_sitter")[0].library.lower() == "tree-sitter"
    assert real_docs.resolve("pygls", limit=1) == real_docs.resolve("pygls")[:1]


def test_unknown_library_names_close_matches(real_docs: LibraryDocs) -> None:
    """Ensure that an unknown library is NotFound, and the message suggests close names."""
    with pytest.raises(NotFound, match="pygls"):
        real_docs.docs("pyglss", "features", TESTER_CAP)
    with pytest.raises(NotFound, match="no installed library"):
        real_docs.docs("zzqqxx-nothing-like-it", "features", TESTER_CAP)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    cap=st.integers(min_value=1, max_value=5000),
    max_tokens=st.one_of(st.none(), st.integers(min_value=1, max_value=5000)),
    topic=st.sampled_from(
        [
            "custom requests",
            "feature",
            "workspace text document",
            "progress",
            "websocket server",
            "zzz unknown",
            "the of",
        ]
    ),
)
def test_tokens_never_exceed_the_effective_cap(
    real_docs: LibraryDocs, counter: TokenCounter, cap: int, max_tokens: int | None, topic: str
) -> None:
    """Ensure that for any cap, max_tokens and topic, tokens <= min(cap, max_tokens) and
    tokens is the real count of the content."""
    result = real_docs.docs("pygls", topic, cap, max_tokens=max_tokens)
    limit = cap if max_tokens is None else min(cap, max_tokens)
    assert result.cap == limit
    assert result.tokens <= limit
    assert result.tokens == counter.count(result.content)


# --- fake distributions --------------------------------------------------------------------


def test_never_imports_the_package(fake_docs: LibraryDocs) -> None:
    """Ensure that docs of a package whose import raises still work, and that it was not imported."""
    result = fake_docs.docs("foo", "frobnicate widget", 2500)
    assert "def frobnicate(widget: str, *, times: int = 1) -> str" in result.content
    assert "Repeats the frobnication" in result.content
    assert "_secret" not in result.content
    assert "test_frobnicate_in_tests" not in result.content
    assert "foo" not in sys.modules


def test_import_name_versus_distribution_name(fake_docs: LibraryDocs) -> None:
    """Ensure that a distribution is found by its import name as well as its own name."""
    assert fake_docs.resolve("barbaz")[0].library == "bar-baz"
    assert fake_docs.resolve("Bar_Baz")[0].library == "bar-baz"
    assert fake_docs.docs("barbaz", "baz", 500).library == "bar-baz"
    assert fake_docs.docs("BAR.baz", "baz", 500).library == "bar-baz"
    assert [m.library for m in fake_docs.resolve("ba")] == ["bar-baz"]


def test_topic_without_matches_gives_no_docs_and_says_so(fake_docs: LibraryDocs) -> None:
    """Ensure that a topic no section mentions gets no content (not the overview, which
    would read as the answer), `matched` false, and a note naming the topics it covers."""
    result = fake_docs.docs("foo", "quantum chromodynamics", 2500)
    assert (result.content, result.tokens, result.sources, result.truncated) == ("", 0, (), False)
    assert result.matched is False
    assert result.note.startswith("No section of foo 1.0 matches the topic 'quantum chromodynamics'.")
    assert "foo.widgets" in result.note and "Frobnication guide" in result.note
    matched = fake_docs.docs("foo", "frobnicate widget", 2500)
    assert matched.matched is True and matched.note == "" and matched.content


def test_stop_words_only_topic_matches_nothing(fake_docs: LibraryDocs) -> None:
    """Ensure that a topic made only of common words is no match either, and does not
    share a cache entry with the topicless overview."""
    result = fake_docs.docs("foo", "how to", 2500)
    assert result.matched is False and result.content == ""
    assert "has no words to search" in result.note
    assert topic_key("how to") != topic_key("")


def test_no_match_survives_the_cache_file(fake_site: Path, tmp_path: Path, counter: TokenCounter) -> None:
    """Ensure that a stored no-match result comes back from the cache file as one."""
    db = tmp_path / "docs.db"
    first = LibraryDocs(None, counter, site_paths=[fake_site], cache_db=db)
    miss = first.docs("foo", "quantum chromodynamics", 1000)
    first.close()
    hit = LibraryDocs(None, counter, site_paths=[fake_site], cache_db=db).docs("foo", "quantum chromodynamics", 1000)
    assert hit.cache == "hit"
    assert (hit.matched, hit.note, hit.content) == (False, miss.note, "")


def test_corrupt_cache_db_still_works(fake_site: Path, tmp_path: Path, counter: TokenCounter) -> None:
    """Ensure that a corrupt cache file degrades to the memory cache instead of failing."""
    db = tmp_path / "docs.db"
    db.write_bytes(b"this is not a sqlite database" * 100)
    docs = LibraryDocs(None, counter, site_paths=[fake_site], cache_db=db)
    assert docs.docs("foo", "widget", 1000).cache == "miss"
    assert docs.docs("foo", "widget", 1000).cache == "hit"
    stats = docs.stats()
    assert stats["db_ok"] is False and stats["db_error"]


def test_cache_db_persists_across_instances(fake_site: Path, tmp_path: Path, counter: TokenCounter) -> None:
    """Ensure that a result stored in the cache file is a hit for the next server."""
    db = tmp_path / ".ctx-lsp" / "docs.db"
    first = LibraryDocs(None, counter, site_paths=[fake_site], cache_db=db)
    miss = first.docs("foo", "widget", 1000)
    first.close()
    second = LibraryDocs(None, counter, site_paths=[fake_site], cache_db=db)
    hit = second.docs("foo", "widget", 1000)
    assert hit.cache == "hit" and hit.content == miss.content and hit.sources == miss.sources
    assert second.stats()["db_ok"] is True
    assert second.stats()["libraries_loaded"] == 0  # served without parsing foo


def test_docs_folders_and_llms_txt(fake_site: Path, tmp_path: Path, counter: TokenCounter) -> None:
    """Ensure that configured docs folders (by mapping or by folder name) and the
    workspace's llms.txt are sources, even for a library that is not installed."""
    ws = tmp_path / "ws"
    (ws / "docs" / "foo").mkdir(parents=True)
    (ws / "docs" / "foo" / "tuning.md").write_text("# Tuning\n\nSet the flux capacitor to 88.\n")
    (ws / "notes" / "gizmo").mkdir(parents=True)
    (ws / "notes" / "gizmo" / "intro.rst").write_text(
        "Gizmo\n=====\n\nGizmos hum along.\n\nWiring\n------\n\nRed to red.\n"
    )
    (ws / "llms.txt").write_text("# Foo\n\n> Foo in one line.\n\n## Recipes\n\nUse the turbo frobnicator.\n")
    docs = LibraryDocs(ws, counter, site_paths=[fake_site], docs_folders={"foo": ["docs/foo"]})
    assert "flux capacitor" in docs.docs("foo", "tuning flux", 2000).content
    assert "turbo frobnicator" in docs.docs("foo", "turbo recipes", 2000).content
    listed = LibraryDocs(ws, counter, site_paths=[fake_site], docs_folders=["notes/gizmo"])
    gizmo = listed.docs("gizmo", "wiring", 2000)
    assert "Red to red." in gizmo.content and gizmo.version == ""
    assert gizmo.sources[0].title == "notes/gizmo/intro.rst › Gizmo › Wiring"


def test_missing_docs_folder_is_a_warning(fake_site: Path, tmp_path: Path, counter: TokenCounter) -> None:
    """Ensure that a configured docs folder that does not exist is reported, not fatal."""
    docs = LibraryDocs(tmp_path, counter, site_paths=[fake_site], docs_folders={"foo": ["nope"]})
    assert docs.docs("foo", "widget", 500).tokens > 0
    assert any("nope" in w for w in docs.stats()["warnings"])  # type: ignore[union-attr]


def test_prewarm(fake_site: Path, tmp_path: Path, counter: TokenCounter) -> None:
    """Ensure that prewarm parses the libraries, fills the cache for real topics, skips
    what is not installed and reports progress."""
    docs = LibraryDocs(None, counter, site_paths=[fake_site])
    seen: list[tuple[int, int, str]] = []
    warmed = docs.prewarm(["foo", "not-installed", "barbaz"], ("", "widget"), lambda d, t, n: seen.append((d, t, n)))
    assert warmed == 2
    assert seen == [(1, 3, "foo"), (2, 3, "not-installed"), (3, 3, "barbaz")]
    assert docs.stats()["libraries_loaded"] == 2
    assert docs.stats()["lookups"] == 0  # prewarming is not a lookup anybody asked for
    assert docs.docs("foo", "widget", AGENT_DOCS_CAPS["default"]).cache == "hit"
    assert docs.stats()["hit_rate"] == 1.0


def test_declared_dependencies(fake_site: Path, tmp_path: Path, counter: TokenCounter) -> None:
    """Ensure that LibraryDocs reads the workspace's declared dependencies."""
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "me"\ndependencies = ["foo>=1", "bar-baz[x]"]\n')
    docs = LibraryDocs(tmp_path, counter, site_paths=[fake_site])
    assert docs.declared_dependencies() == ["foo", "bar-baz"]
    assert docs.prewarm(docs.declared_dependencies()) == 2


def test_stats_before_any_lookup(fake_docs: LibraryDocs) -> None:
    """Ensure that stats work before any lookup and do not load anything."""
    stats = fake_docs.stats()
    assert stats["lookups"] == 0 and stats["hit_rate"] is None and stats["hit_p50_ms"] is None
    assert stats["libraries_available"] is None
