"""Tests for ctx_lsp/code/languages/cpp.py."""

from __future__ import annotations

from tests.code.languages.conftest import by_qualname, outline_of

SOURCE = """
#include "widget.h"
#include <vector>

namespace ui {

/// A drawable widget.
class Widget : public Base {
 public:
  explicit Widget(int size);
  int size() const { return size_; }
  virtual void draw() = 0;
 private:
  int size_;
};

template <typename T>
T twice(T v) { return v + v; }

}  // namespace ui

// Computes the area.
int ui::Widget::area() const { return measure(size_) * size_; }

Widget::Widget(int size) : size_(size) { init(); }

using Sizes = std::vector<int>;
"""


def test_cpp_out_of_line_methods_are_qualified_by_their_class() -> None:
    """Ensure that `int ui::Widget::area()` is `Widget.area` (namespaces left out), in-class
    declarations are the class's methods, and a constructor defined outside is `Widget.Widget`."""
    o = outline_of("src/widget.cpp", SOURCE)
    assert o.language == "cpp"
    symbols = by_qualname(o)
    assert {q: s.kind for q, s in symbols.items()} == {
        "Widget": "class",
        "Widget.Widget": "method",
        "Widget.size": "method",
        "Widget.draw": "method",
        "twice": "function",
        "Widget.area": "method",
        "Sizes": "type",
    }
    area = symbols["Widget.area"]
    assert area.parent == "Widget" and area.doc == "Computes the area." and area.calls == ("measure",)
    assert area.signature == "int ui::Widget::area() const"
    assert symbols["Widget"].doc == "A drawable widget."
    assert [i.module for i in o.imports] == ["widget.h", "vector"]
