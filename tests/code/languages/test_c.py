"""Tests for ctx_lsp/code/languages/c.py (and which language a `.h` is)."""

from __future__ import annotations

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
