"""Tests for ctx_lsp/tokens.py: offline encodings, counting, model names and cutting."""

from __future__ import annotations

import dataclasses
import gzip
import socket
import threading
import time
from importlib import resources

import pytest
import tiktoken
import tiktoken.load
import tiktoken_ext.openai_public as openai_public
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ctx_lsp import tokens
from ctx_lsp.errors import InvalidParam
from ctx_lsp.tokens import (
    CL100K_BASE,
    DEFAULT_ENCODING,
    O200K_BASE,
    Cut,
    HeuristicCounter,
    counter_for,
    cut_to_tokens,
    encoding_for_model,
    line_count,
    more_lines_marker,
    parse_ranks,
    read_bpe_file,
)

REAL_ENCODINGS = [O200K_BASE, CL100K_BASE]

SAMPLES = [
    "hello world",
    "def parse(text: str) -> list[int]:\n    return [ord(c) for c in text]\n",
    "    \n\n\t\tmixed   whitespace \r\n trailing  ",
    "naïve café — 日本語のテキスト, 한국어, emoji 🙂👍🏽, Ελληνικά",
    "iPhone getHTTPResponseCode XMLHttpRequest snake_case_name 12345678",
    "x = '<|endoftext|>' + \"<|fim_prefix|>\" + '<|endofprompt|>'",
]


def _split_on_newline(text: str) -> list[str]:
    """Reference split: lines keep their "\\n"; a final "\\n" does not start a new line."""
    *ended, last = text.split("\n")
    return [line + "\n" for line in ended] + ([last] if last else [])


def _assert_valid_cut(
    text: str, cut: Cut, max_tokens: int, counter: tokens.TokenCounter, marker=more_lines_marker
) -> None:
    """The invariants every caller relies on."""
    lines = _split_on_newline(text)
    assert cut.tokens == counter.count(cut.text)
    assert cut.tokens <= max(max_tokens, 0)
    if not cut.truncated:
        assert cut.text == text
        return
    if cut.text == "":
        assert cut.omitted_lines == len(lines)
        return
    last = marker(cut.omitted_lines)
    assert cut.text.endswith(last)
    kept_text = cut.text[: -len(last)]
    assert kept_text == "" or kept_text.endswith("\n")
    kept = _split_on_newline(kept_text)
    assert kept == lines[: len(kept)], "kept lines must be whole lines, a prefix of the input"
    assert len(kept) + cut.omitted_lines == len(lines)


@pytest.fixture(scope="module")
def reference_encodings(tmp_path_factory) -> dict[str, dict]:
    """Specs built by tiktoken's own code (its spec functions, its file parser, its hash
    check), from the same bytes we ship, with its cache disabled so nothing is written."""
    folder = tmp_path_factory.mktemp("bpe")
    specs = {}
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("TIKTOKEN_CACHE_DIR", "")
        for name in REAL_ENCODINGS:
            path = folder / f"{name}.tiktoken"
            path.write_bytes(tokens.read_bpe_file(name))

            def load_local(url: str, expected_hash: str, _path=path) -> dict[bytes, int]:
                return tiktoken.load.load_tiktoken_bpe(str(_path), expected_hash=expected_hash)

            mp.setattr(openai_public, "load_tiktoken_bpe", load_local)
            specs[name] = getattr(openai_public, name)()
    return specs


# --- shipped encodings -----------------------------------------------------------------


@pytest.mark.parametrize("name", REAL_ENCODINGS)
def test_shipped_encoding_loads_without_network(name, monkeypatch, tmp_path):
    """Ensure that an encoding loads from the package alone: any socket use fails the load,
    and tiktoken's cache dir stays untouched."""

    def no_network(*args, **kwargs):
        raise AssertionError("tokens.py tried to use the network")

    monkeypatch.setattr(socket, "socket", no_network)
    monkeypatch.setattr(socket, "create_connection", no_network)
    monkeypatch.setattr(socket, "getaddrinfo", no_network)
    cache = tmp_path / "tiktoken-cache"
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(cache))

    encoding = tokens._load_encoding(name)  # fresh: bypasses counter_for's cache

    assert encoding.name == name
    assert len(encoding.encode_ordinary("hello world")) == 2
    assert not cache.exists()


@pytest.mark.parametrize("name", REAL_ENCODINGS)
def test_spec_matches_tiktoken(name, reference_encodings):
    """Ensure that our copy of the regex and special tokens, and our faster rank parser,
    agree exactly with what tiktoken builds for the same encoding."""
    reference = reference_encodings[name]
    ours = counter_for(name).encoding

    assert ours._pat_str == reference["pat_str"]
    assert ours._special_tokens == reference["special_tokens"]
    assert parse_ranks(read_bpe_file(name)) == reference["mergeable_ranks"]
    assert ours._mergeable_ranks == {}  # freed once the Rust tables hold them (~23 MB)


@pytest.mark.parametrize("name", REAL_ENCODINGS)
def test_ids_match_tiktoken(name, reference_encodings):
    """Ensure that the encoding we build gives the same ids as one tiktoken builds itself."""
    reference = tiktoken.Encoding(**reference_encodings[name])
    ours = counter_for(name).encoding
    for text in SAMPLES:
        assert ours.encode_ordinary(text) == reference.encode(text, disallowed_special=())


def test_damaged_file_is_refused(monkeypatch):
    """Ensure that a vocabulary whose hash does not match is refused, not used to count."""
    spec = tokens._SPECS[CL100K_BASE]
    monkeypatch.setitem(tokens._SPECS, CL100K_BASE, dataclasses.replace(spec, sha256="0" * 64))

    with pytest.raises(tokens.DamagedEncodingFile, match="cl100k_base.tiktoken.gz"):
        tokens._load_encoding(CL100K_BASE)


def test_readme_lists_the_checked_hashes():
    """Ensure that data/README.md states the same hashes the loader checks."""
    readme = (resources.files("ctx_lsp") / "data" / "README.md").read_text(encoding="utf-8")
    for spec in tokens._SPECS.values():
        assert spec.sha256 in readme
        assert spec.file in readme
        raw = gzip.decompress((resources.files("ctx_lsp") / "data" / spec.file).read_bytes())
        assert f"{len(raw):,} B" in readme


# --- counting ----------------------------------------------------------------------------


@pytest.mark.parametrize(("name", "ids"), [(O200K_BASE, [24912, 2375]), (CL100K_BASE, [15339, 1917])])
def test_known_counts(name, ids):
    """Ensure that counts match the published ids for a known string."""
    counter = counter_for(name)
    assert counter.name == name
    assert counter.encoding.encode_ordinary("hello world") == ids
    assert counter.count("hello world") == 2
    assert counter.count("") == 0


@pytest.mark.parametrize("name", REAL_ENCODINGS)
def test_special_token_text_is_ordinary_text(name):
    """Ensure that text containing special-token strings is counted as plain text, without
    raising and without collapsing to one special token."""
    counter = counter_for(name)
    assert counter.count("<|endoftext|>") > 1
    assert counter.count_many(["<|endoftext|>", "a <|fim_prefix|> b"]) == [
        counter.count("<|endoftext|>"),
        counter.count("a <|fim_prefix|> b"),
    ]


@pytest.mark.parametrize("name", REAL_ENCODINGS)
def test_count_many_matches_count(name):
    """Ensure that batch counting gives the same numbers as counting one at a time."""
    counter = counter_for(name)
    assert counter.count_many(SAMPLES) == [counter.count(text) for text in SAMPLES]
    assert counter.count_many([]) == []


def test_counter_for_is_cached():
    """Ensure that counter_for hands out one counter per encoding, default o200k_base."""
    assert counter_for() is counter_for(DEFAULT_ENCODING) is counter_for(O200K_BASE)
    assert counter_for(CL100K_BASE) is counter_for(CL100K_BASE)
    assert counter_for().name == "o200k_base"


def test_concurrent_first_use_loads_once(monkeypatch):
    """Ensure that threads asking for a not-yet-loaded encoding at once load it once."""
    real = counter_for(O200K_BASE).encoding
    monkeypatch.setattr(tokens, "_COUNTERS", {})
    loads = []

    def slow_load(name):
        loads.append(name)
        time.sleep(0.05)
        return real

    monkeypatch.setattr(tokens, "_load_encoding", slow_load)
    got = []
    threads = [threading.Thread(target=lambda: got.append(counter_for(O200K_BASE))) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert loads == [O200K_BASE]
    assert len({id(counter) for counter in got}) == 1


@pytest.mark.parametrize("bad", ["o200k", "gpt-4o", "", "O200K_BASE", None, 5])
def test_unknown_encoding_is_an_invalid_param(bad):
    """Ensure that an unknown tokenizer name is a typed error naming the field and the fix."""
    with pytest.raises(InvalidParam) as caught:
        counter_for(bad)
    assert caught.value.field == "tokenizer"
    assert "o200k_base" in str(caught.value) and "cl100k_base" in str(caught.value)


# --- heuristic fallback ------------------------------------------------------------------


def test_heuristic_used_when_tiktoken_missing(monkeypatch):
    """Ensure that without tiktoken every encoding falls back to the heuristic counter,
    while unknown names are still refused."""
    monkeypatch.setattr(tokens, "_tiktoken_available", lambda: False)

    counter = counter_for(CL100K_BASE)

    assert counter.name == "heuristic"
    assert counter_for().name == "heuristic"
    with pytest.raises(InvalidParam):
        counter_for("nope")


def test_heuristic_counts_a_third_of_the_characters():
    """Ensure that the heuristic assumes 3 chars/token, rounding up."""
    counter = HeuristicCounter()
    assert counter.name == "heuristic"
    assert [counter.count(t) for t in ["", "a", "abc", "abcd", "x" * 300]] == [0, 1, 1, 2, 100]
    assert counter.count_many(["abcd", ""]) == [2, 0]
    assert counter_for("heuristic") == counter


def test_heuristic_overcounts_real_code():
    """Ensure that the heuristic errs high on source code, so budgets stay hard."""
    source = resources.files("ctx_lsp").joinpath("tokens.py").read_text(encoding="utf-8")
    for name in REAL_ENCODINGS:
        assert HeuristicCounter().count(source) >= counter_for(name).count(source)


# --- model names -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("model", "encoding"),
    [
        ("gpt-4o", O200K_BASE),
        ("gpt-4o-mini-2024-07-18", O200K_BASE),
        ("GPT-4.1-nano", O200K_BASE),
        ("gpt-4.5-preview", O200K_BASE),
        ("gpt-5", O200K_BASE),
        ("gpt-5-mini", O200K_BASE),
        ("o1-preview", O200K_BASE),
        ("o3", O200K_BASE),
        ("o4-mini", O200K_BASE),
        ("ft:gpt-4o-mini:org::abc", O200K_BASE),
        ("gpt-4", CL100K_BASE),
        ("gpt-4-turbo", CL100K_BASE),
        ("gpt-4-32k-0613", CL100K_BASE),
        ("gpt-3.5-turbo", CL100K_BASE),
        ("gpt-35-turbo", CL100K_BASE),
        ("text-embedding-3-small", CL100K_BASE),
        ("text-embedding-ada-002", CL100K_BASE),
        ("ft:gpt-3.5-turbo:org::abc", CL100K_BASE),
        ("openai/gpt-4", CL100K_BASE),
        ("azure/gpt-4o", O200K_BASE),
        ("claude-sonnet-4-5", O200K_BASE),
        ("Claude-3-Opus", O200K_BASE),
        ("gemini-2.5-pro", O200K_BASE),
        ("llama-3.1-70b", O200K_BASE),
        ("meta-llama/Llama-3-8B", O200K_BASE),
        ("mistral-large", O200K_BASE),
        ("qwen2.5-coder", O200K_BASE),
        ("deepseek-coder", O200K_BASE),
        ("", O200K_BASE),
        ("something-new", O200K_BASE),
    ],
)
def test_encoding_for_model(model, encoding):
    """Ensure that model names map by longest case-insensitive prefix, o200k_base otherwise."""
    assert encoding_for_model(model) == encoding


# --- cutting -----------------------------------------------------------------------------


def _numbered(n: int, width: int = 6) -> str:
    return "".join(f"value_{i} = compute({i}, 'x' * {width})\n" for i in range(n))


def test_cut_keeps_text_that_fits():
    """Ensure that a text within the budget comes back unchanged with its real count."""
    counter = counter_for()
    text = _numbered(20)
    cut = cut_to_tokens(text, counter.count(text), counter)
    assert cut == Cut(text, counter.count(text), 0)
    assert not cut.truncated
    assert cut_to_tokens("", 10, counter) == Cut("", 0, 0)


def test_cut_keeps_blank_heavy_text_that_fits():
    """Ensure that runs of blank lines, which cost a token each when counted line by line
    but merge in the joined text, do not make a fitting text look too big."""
    counter = counter_for()
    text = "x = 1\n" + "\n" * 150 + "y = 2\n"
    assert counter.count(text) <= 20
    assert cut_to_tokens(text, 20, counter) == Cut(text, counter.count(text), 0)


def test_cut_with_no_budget_is_empty():
    """Ensure that a zero or negative budget keeps nothing, not even the marker."""
    counter = counter_for()
    assert cut_to_tokens("a\nb\n", 0, counter) == Cut("", 0, 2)
    assert cut_to_tokens("a\nb", -5, counter) == Cut("", 0, 2)


def test_cut_states_exact_omitted_count():
    """Ensure that the marker names exactly the lines left out and the result fits."""
    counter = counter_for()
    text = _numbered(200)
    cut = cut_to_tokens(text, 300, counter)

    assert cut.truncated
    assert cut.tokens <= 300
    kept, last = cut.text.rsplit("\n", 1)
    assert last == f"… {cut.omitted_lines} more lines"
    assert len(kept.split("\n")) + cut.omitted_lines == 200
    _assert_valid_cut(text, cut, 300, counter)


def test_cut_uses_most_of_the_budget():
    """Ensure that the cut is not needlessly short when no clean boundary is near."""
    counter = counter_for()
    text = _numbered(400)
    cut = cut_to_tokens(text, 1000, counter)
    assert 0.9 * 1000 <= cut.tokens <= 1000


def test_cut_prefers_symbol_breaks():
    """Ensure that the cut lands before a symbol start when one is in the last 30 %."""
    counter = counter_for()
    body = ["def f{i}():\n"] + [f"    x = {j} * {j}\n" for j in range(9)]
    lines = [line.format(i=i) for i in range(30) for line in body]
    text = "".join(lines)
    breaks = [i for i, line in enumerate(lines) if line.startswith("def ")]
    free = cut_to_tokens(text, 400, counter)
    cut = cut_to_tokens(text, 400, counter, breaks=breaks)

    kept = len(lines) - cut.omitted_lines
    assert kept in breaks
    assert kept >= 0.7 * (len(lines) - free.omitted_lines)
    _assert_valid_cut(text, cut, 400, counter)


def test_cut_prefers_blank_lines_and_drops_trailing_ones():
    """Ensure that without breaks the cut lands at a paragraph end, and no blank line is
    left dangling before the marker."""
    counter = counter_for()
    paragraph = "".join(f"line {j} of a paragraph with words\n" for j in range(7))
    text = "\n".join([paragraph] * 30)
    cut = cut_to_tokens(text, 500, counter)

    lines = _split_on_newline(text)
    kept = len(lines) - cut.omitted_lines
    assert lines[kept].strip() == ""
    assert lines[kept - 1].strip() != ""
    _assert_valid_cut(text, cut, 500, counter)


def test_cut_never_splits_a_long_line():
    """Ensure that a line longer than the budget is left out whole, marker only."""
    counter = counter_for()
    text = "x = [" + ", ".join(str(i) for i in range(2000)) + "]\nshort\n"
    cut = cut_to_tokens(text, 50, counter)
    assert cut == Cut("… 2 more lines", counter.count("… 2 more lines"), 2)


def test_cut_when_even_the_marker_does_not_fit():
    """Ensure that a budget smaller than the marker gives an empty text."""
    counter = counter_for()
    assert cut_to_tokens(_numbered(50), 2, counter) == Cut("", 0, 50)


def test_cut_with_custom_marker():
    """Ensure that a caller's marker is used with the omitted count and still fits."""
    counter = counter_for()
    text = _numbered(100)

    def marker(n: int) -> str:
        return f"# [{n} lines elided; ask for more with ctx/expand]"

    cut = cut_to_tokens(text, 200, counter, marker=marker)
    _assert_valid_cut(text, cut, 200, counter, marker=marker)
    assert cut.text.endswith(marker(cut.omitted_lines))


def test_cut_reads_little_more_than_it_keeps():
    """Ensure that cutting a large file to a small budget counts only about what it keeps,
    not the whole file (the cost that made naive cutting slow)."""
    counted = []
    real = counter_for()

    @dataclasses.dataclass
    class Spy:
        name: str = "spy"

        def count(self, text):
            counted.append(len(text))
            return real.count(text)

        def count_many(self, texts):
            counted.extend(map(len, texts))
            return real.count_many(texts)

    text = _numbered(3000)  # about 45K tokens
    cut = cut_to_tokens(text, 1000, Spy())

    assert cut.truncated
    assert sum(counted) < 5 * len(cut.text)


def test_line_count_matches_cut_lines():
    """Ensure that line_count uses the same lines as the cut: "\\n" only, final one closes."""
    assert [line_count(t) for t in ["", "a", "a\n", "a\nb", "\n", "\n\n", "a\r\nb\x0cc\u2028"]] == [
        0,
        1,
        1,
        2,
        1,
        2,
        2,
    ]


_line = st.one_of(
    st.text(max_size=60),
    st.just(""),
    st.sampled_from(["def f(x):", "    return x", "<|endoftext|>", "   ", "\r", "# ☃ 日本語"]),
    st.text(alphabet="ab (),:=\t.é日🙂", min_size=200, max_size=600),
)


@st.composite
def _texts(draw) -> str:
    lines = draw(st.lists(_line, max_size=50))
    return "\n".join(lines) + draw(st.sampled_from(["", "\n"]))


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    text=_texts(),
    max_tokens=st.integers(min_value=-3, max_value=400),
    breaks=st.lists(st.integers(min_value=0, max_value=60), max_size=10),
    heuristic=st.booleans(),
)
def test_cut_invariants(text, max_tokens, breaks, heuristic):
    """Ensure that for any text and budget the cut fits, reports its real count, keeps a
    prefix of whole lines and names the exact number of lines it left out."""
    counter = HeuristicCounter() if heuristic else counter_for()
    cut = cut_to_tokens(text, max_tokens, counter, breaks=breaks)
    _assert_valid_cut(text, cut, max_tokens, counter)
