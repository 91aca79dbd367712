"""Tests for ctx_lsp/code/languages/java.py."""

from __future__ import annotations

from tests.code.languages.conftest import by_qualname, outline_of

SOURCE = """
package com.acme.shop;

import java.util.List;
import static org.junit.Assert.*;

/** A price in cents. */
public record Price(long cents) { }

/**
 * Computes totals.
 */
@Service
public class Cart extends Base implements Totals {
    /** Adds an item. */
    @Override
    public void add(Item item) { items.add(item); recompute(item.price()); }
    Cart() {}
    interface Listener { void changed(Cart cart); }
    enum State { OPEN, CLOSED }
}
"""


def test_java_classes_members_annotations_and_javadoc() -> None:
    """Ensure that records, classes, constructors, nested interfaces and enums are
    outlined with owner-qualified names, annotations as decorators and Javadoc docs."""
    o = outline_of("src/main/java/com/acme/shop/Cart.java", SOURCE)
    symbols = by_qualname(o)
    assert {q: s.kind for q, s in symbols.items()} == {
        "Price": "class",
        "Cart": "class",
        "Cart.add": "method",
        "Cart.Cart": "method",
        "Cart.Listener": "interface",
        "Cart.Listener.changed": "method",
        "Cart.State": "enum",
    }
    cart = symbols["Cart"]
    assert cart.signature == "public class Cart extends Base implements Totals"
    assert cart.decorators == ("@Service",) and cart.doc == "Computes totals."
    add = symbols["Cart.add"]
    assert add.decorators == ("@Override",) and add.doc == "Adds an item."
    assert add.signature == "public void add(Item item)" and add.calls == ("price", "recompute")
    assert [(i.module, i.names) for i in o.imports] == [("java.util.List", ("List",)), ("org.junit.Assert", ("*",))]
