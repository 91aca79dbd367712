"""Tests for ctx_lsp/code/languages/c.py (and which language a `.h` is)."""

from __future__ import annotations

import os
from pathlib import Path

from ctx_lsp.code.languages import language_for
from tests.code.languages.conftest import by_qualname, outline_of

HEADER = """
#ifndef LIST_H
#define LIST_H
#include <stddef.h>
#include "node.h"

#define LIST_MAX 64

/* Appends a value to the list. */
int list_append(struct list *l, int value);

typedef struct list {
    struct node *head;
    size_t len;
} list_t;

#endif
"""

SOURCE = """
#include "list.h"

// Appends, growing the list.
int list_append(struct list *l, int value) {
    struct node *n = node_new(value);
    return link(l, n);
}

static void *grow(void *p, size_t n) { return realloc(p, n); }
"""


def test_c_headers_outline_prototypes_types_includes_and_macros() -> None:
    """Ensure that a C header's outline is its API: prototypes with their comment,
    typedefs, `#include`s and `#define`d values (not the include guard)."""
    o = outline_of("include/list.h", HEADER)
    assert o.language == "c"
    symbols = by_qualname(o)
    append = symbols["list_append"]
    assert append.signature == "int list_append(struct list *l, int value)"
    assert append.doc == "Appends a value to the list."
    assert "list_t" in symbols and symbols["list_t"].kind == "type"
    assert [i.module for i in o.imports] == ["stddef.h", "node.h"]
    assert [c.name for c in o.constants] == ["LIST_MAX"]


def test_c_functions_with_calls() -> None:
    """Ensure that definitions through pointer declarators are named and record calls."""
    symbols = by_qualname(outline_of("src/list.c", SOURCE))
    assert symbols["list_append"].calls == ("link", "node_new")
    assert symbols["list_append"].doc == "Appends, growing the list."
    assert symbols["grow"].signature == "static void *grow(void *p, size_t n)"
    assert symbols["grow"].calls == ()  # realloc is the standard library's


def test_a_header_is_cpp_by_its_content_or_its_siblings(tmp_path: Path) -> None:
    """Ensure that `.h` is C unless C++ keywords are in it or a C++ source is beside it."""
    assert language_for("a.h", b"int f(void);\n").name == "c"
    assert language_for("a.h", b"namespace ns {\nint f();\n}\n").name == "cpp"
    assert language_for("a.h", b"class Widget;\n").name == "cpp"
    (tmp_path / "widget.cpp").write_text("int x;\n")
    header = tmp_path / "widget.h"
    header.write_text("int f(void);\n")
    assert language_for(str(header), b"int f(void);\n").name == "cpp"


def test_cpp_evidence_is_read_at_line_starts_and_from_std() -> None:
    """Ensure that the C++ evidence of a header holds for every form it names (indented,
    after a blank line, `std::` anywhere, access specifiers, `using namespace`) and not
    for C that only mentions the words (in a comment, mid-line)."""
    cpp = [
        b"int a;\n\n  class Widget;\n",
        b"int a;\n\ttemplate <typename T> T id(T);\n",
        b"void f(std::string s);\n",
        b"struct S {\npublic:\n  int x;\n};\n",
        b"using namespace std;\n",
        b"\fnamespace ns {}\n",
    ]
    c = [
        b"/* a device class */\nint f(void);\n",
        b"int class_count; /* namespace of ids */\n",
        b"int x; // public: API\n",
        b"#define USING namespace\n",
    ]
    assert [language_for("a.h", src).name for src in cpp] == ["cpp"] * len(cpp)
    assert [language_for("a.h", src).name for src in c] == ["c"] * len(c)


def test_headers_of_one_folder_share_its_listing_until_it_changes(tmp_path: Path) -> None:
    """Ensure that the headers of a folder are decided with one listing of it (not one per
    header: quadratic in a big include folder), and that a C++ source added to the folder
    (its mtime moves) makes them C++."""
    from ctx_lsp.code.languages.cpp import _holds_cpp_sources

    headers = [tmp_path / f"h{i}.h" for i in range(20)]
    for header in headers:
        header.write_text("int f(void);\n")
    before = _holds_cpp_sources.cache_info()
    assert {language_for(str(h), b"int f(void);\n").name for h in headers} == {"c"}
    after = _holds_cpp_sources.cache_info()
    assert after.misses - before.misses == 1 and after.hits - before.hits == len(headers) - 1
    (tmp_path / "impl.cc").write_text("int x;\n")
    stamp = tmp_path.stat().st_mtime_ns + 1_000_000_000  # past the filesystem's timestamp tick
    os.utime(tmp_path, ns=(stamp, stamp))
    assert language_for(str(headers[0]), b"int f(void);\n").name == "cpp"
