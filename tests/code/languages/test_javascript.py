"""Tests for ctx_lsp/code/languages/javascript.py (JavaScript and JSX)."""

from __future__ import annotations

from tests.code.languages.conftest import by_qualname, outline_of

SOURCE = """
const path = require("path")
import { helper } from "./helper.js"

/**
 * Counts words.
 */
function countWords(text) {
  return text.split(/\\s+/).filter(Boolean).length
}

class Counter extends Base {
  total = 0
  onClick = () => { this.increment() }
  /** Adds one. */
  increment() { this.total = plus(this.total, 1) }
  static from(list) { return new Counter(list) }
}

const handlers = {
  open() { return openFile(path.join("a", "b")) },
  close: function () { return closeFile() },
}

export const App = () => <div>{countWords("a b")}</div>
export const LIMIT = 100

exports.slugify = function (text) { return normalize(text) }
Counter.prototype.reset = function () { this.total = 0 }
"""


def test_javascript_outline() -> None:
    """Ensure that functions, classes with fields and methods, object-literal methods and
    JSX arrow components are outlined, with doc comments, calls and `require` imports."""
    o = outline_of("src/app.jsx", SOURCE)
    assert o.language == "javascript" and not o.has_errors
    symbols = by_qualname(o)
    assert {q: s.kind for q, s in symbols.items()} == {
        "countWords": "function",
        "Counter": "class",
        "Counter.onClick": "method",
        "Counter.increment": "method",
        "Counter.from": "method",
        "handlers": "module",
        "handlers.open": "function",
        "handlers.close": "function",
        "App": "function",
        "slugify": "function",
        "Counter.reset": "method",
    }
    assert symbols["slugify"].calls == ("normalize",) and symbols["Counter.reset"].parent == "Counter"
    assert symbols["countWords"].doc == "Counts words."
    assert symbols["countWords"].signature == "function countWords(text)"
    assert symbols["Counter.increment"].doc == "Adds one."
    assert symbols["Counter.increment"].calls == ("plus",)
    assert symbols["Counter.from"].calls == ("Counter",)
    assert symbols["handlers.open"].calls == ("openFile",)
    assert [(i.module, i.names) for i in o.imports] == [("path", ("path",)), ("./helper.js", ("helper",))]
    assert [c.name for c in o.constants] == ["LIMIT"]
    assert "console" not in dict(o.references)
