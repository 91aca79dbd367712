"""Tests for ctx_lsp/code/languages/rust.py."""

from __future__ import annotations

from tests.code.languages.conftest import by_qualname, outline_of

SOURCE = """
//! Buffered sources.
use std::io::{self, Read};
use crate::codec::Decoder as Dec;
mod inner;

pub const MAX: usize = 10;

/// A growable buffer.
#[derive(Debug, Clone)]
pub struct Buf<T> {
    data: Vec<T>,
}

pub trait Source {
    /// Reads into the buffer.
    fn read(&mut self) -> usize;
}

impl<T: Clone> Source for Buf<T> {
    /// Reads everything.
    fn read(&mut self) -> usize {
        refill(self);
        Self::compact(&mut self.data);
        self.data.len()
    }
}

impl Buf<u8> {
    pub fn new() -> Self { Buf { data: Vec::new() } }
}

pub enum Kind { A, B }

pub fn top(x: i32) -> i32 { codec::decode(x) }
"""


def test_rust_impl_methods_are_qualified_by_the_impl_type() -> None:
    """Ensure that methods of `impl<T> Source for Buf<T>` and `impl Buf<u8>` are `Buf.read`
    and `Buf.new`, trait methods `Source.read`, and attributes and `///` docs belong to
    the item below them."""
    o = outline_of("src/buf.rs", SOURCE)
    symbols = by_qualname(o)
    assert [(s.qualname, s.kind) for s in o.symbols] == [
        ("Buf", "struct"),
        ("Source", "trait"),
        ("Source.read", "method"),
        ("Buf", "impl"),
        ("Buf.read", "method"),
        ("Buf", "impl"),
        ("Buf.new", "method"),
        ("Kind", "enum"),
        ("top", "function"),
    ]
    buf = o.symbols[0]
    assert buf.decorators == ("#[derive(Debug, Clone)]",) and buf.doc == "A growable buffer."
    assert o.symbols[3].signature == "impl<T: Clone> Source for Buf<T>"
    read = symbols["Buf.read"]
    assert read.doc == "Reads everything." and read.calls == ("compact", "refill")
    assert symbols["top"].calls == ("decode",)


def test_rust_uses_mods_constants_and_module_doc() -> None:
    """Ensure that `use` and `mod x;` are imports, `const` items constants, `//!` the module doc."""
    o = outline_of("src/buf.rs", SOURCE)
    assert o.docstring == "Buffered sources."
    assert [(i.module, i.names) for i in o.imports] == [
        ("std::io", ("self", "Read")),
        ("crate::codec", ("Decoder",)),
        ("inner", ("inner",)),
    ]
    assert [c.name for c in o.constants] == ["MAX"]
    assert "Vec" not in dict(o.references) and "refill" in dict(o.references)


def test_rust_outlines_leave_out_attributes_that_say_nothing() -> None:
    """Ensure that `#[inline]` and `#[must_use]` are the symbol's (its range starts at
    them) but not outline rows, while `#[derive(...)]` is shown."""
    from ctx_lsp.code.tiers import render
    from ctx_lsp.tokens import counter_for
    from ctx_lsp.vocabulary import Tier

    source = (
        "#[derive(Debug)]\npub struct S;\n\nimpl S {\n    #[inline]\n    #[must_use]\n"
        "    pub fn get(&self) -> u8 { 1 }\n}\n"
    )
    outline = outline_of("src/s.rs", source)
    get = by_qualname(outline)["S.get"]
    assert get.decorators == ("#[inline]", "#[must_use]") and get.start_line == 5
    shown = render("src/s.rs", source, outline, Tier.OUTLINE, counter_for("o200k_base")).content
    assert "#[derive(Debug)]" in shown and "#[inline]" not in shown and "#[must_use]" not in shown
    assert "7│     pub fn get(&self) -> u8" in shown


def test_rust_pruned_outline_notes_folded_members_as_rust_comments() -> None:
    """Ensure that an outline pruned to its cap says what it folded in a `//` comment."""
    from ctx_lsp.code.tiers import render
    from ctx_lsp.tokens import counter_for
    from ctx_lsp.vocabulary import Tier

    methods = "".join(f"    pub fn method_{n}(&self, value: usize) -> usize {{ value + {n} }}\n" for n in range(40))
    source = f"pub struct Big;\n\nimpl Big {{\n{methods}}}\n"
    outline = outline_of("src/big.rs", source)
    shown = render("src/big.rs", source, outline, Tier.OUTLINE, counter_for("o200k_base"), cap_tokens=120).content
    assert "impl Big  // (+" in shown and "# (+" not in shown
