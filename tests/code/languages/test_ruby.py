"""Tests for ctx_lsp/code/languages/ruby.py."""

from __future__ import annotations

from tests.code.languages.conftest import by_qualname, outline_of

SOURCE = """
# frozen_string_literal: true

require "json"
require_relative "lib/pricing"

MAX_ITEMS = 10

# Shop things.
module Shop
  # A cart of items.
  class Cart < Base
    attr_reader :items

    # Adds one item.
    def add(item, qty = 1)
      recompute(item)
      @items.push(item)
    end

    def self.build(*args) = new(*args)
  end
end
"""


def test_ruby_modules_classes_methods_and_requires() -> None:
    """Ensure that modules qualify their classes and methods, `#` comments above a
    definition are its doc (magic comments are not a module doc), and requires are imports."""
    o = outline_of("lib/shop/cart.rb", SOURCE)
    symbols = by_qualname(o)
    assert {q: s.kind for q, s in symbols.items()} == {
        "Shop": "module",
        "Shop.Cart": "class",
        "Shop.Cart.add": "method",
        "Shop.Cart.build": "method",
    }
    add = symbols["Shop.Cart.add"]
    assert add.signature == "def add(item, qty = 1)" and add.doc == "Adds one item."
    assert add.calls == ("recompute",)
    assert symbols["Shop.Cart"].signature == "class Cart < Base" and symbols["Shop.Cart"].doc == "A cart of items."
    assert o.docstring == ""
    assert [(i.module, i.names) for i in o.imports] == [("json", ("json",)), ("lib/pricing", ("pricing",))]
    assert [c.name for c in o.constants] == ["MAX_ITEMS"]
