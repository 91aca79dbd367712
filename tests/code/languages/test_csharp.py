"""Tests for ctx_lsp/code/languages/csharp.py."""

from __future__ import annotations

from tests.code.languages.conftest import by_qualname, outline_of

SOURCE = """
using System.Text;

namespace Shop.Core
{
    /// <summary>
    /// Computes totals.
    /// </summary>
    [Serializable]
    public class Cart : Base, ITotals
    {
        public Cart() {}
        /// <summary>Adds an item.</summary>
        public async Task<int> Add(Item item) { Recompute(item); return items.Count; }
    }

    public interface ITotals { int Total(); }
    public record Price(long Cents);
    public struct Point { }
}
"""


def test_csharp_classes_members_attributes_and_xml_docs() -> None:
    """Ensure that classes, records, structs and interfaces are outlined without their
    namespace in qualified names, `[Attributes]` as decorators and `///` docs without tags."""
    o = outline_of("Shop/Cart.cs", SOURCE)
    symbols = by_qualname(o)
    assert {q: s.kind for q, s in symbols.items()} == {
        "Cart": "class",
        "Cart.Cart": "method",
        "Cart.Add": "method",
        "ITotals": "interface",
        "ITotals.Total": "method",
        "Price": "class",
        "Point": "struct",
    }
    assert symbols["Cart"].decorators == ("[Serializable]",) and symbols["Cart"].doc == "Computes totals."
    assert symbols["Cart.Add"].doc == "Adds an item." and symbols["Cart.Add"].is_async
    assert symbols["Cart.Add"].calls == ("Recompute",)
    assert [i.module for i in o.imports] == ["System.Text"]
