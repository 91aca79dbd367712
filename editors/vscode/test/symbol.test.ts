import assert from "node:assert/strict";
import { describe, test } from "node:test";

import type { SymbolMatch, SymbolResult } from "../src/lib/protocol";
import {
  fenceLanguage,
  pickedMatchParams,
  renderSymbolMatches,
  SYMBOL_NAME_PATTERN,
  symbolParams,
  symbolPickItems,
  validateSymbolName,
} from "../src/lib/symbol";

const engine: SymbolMatch = {
  path: "pkg/engine.py",
  uri: "file:///ws/pkg/engine.py",
  qualname: "Engine.bundle",
  kind: "method",
  range: { start_line: 10, end_line: 14 },
  signature: "def bundle(self, request: BundleRequest) -> BundleResult",
  body: "    def bundle(self, request):\n        return assemble(request)\n",
  tokens: 20,
  truncated: false,
};
const other: SymbolMatch = { ...engine, path: "pkg/other.py", qualname: "Other.bundle", range: { start_line: 3, end_line: 3 }, body: undefined, tokens: 0 };

describe("ctx/symbol", () => {
  test("params ask for the body", () => {
    assert.deepEqual(symbolParams("  Engine.bundle "), { name: "Engine.bundle", include_body: true });
  });

  test("input validation", () => {
    assert.match(validateSymbolName("  ") ?? "", /Type a symbol name/);
    assert.match(validateSymbolName("a b") ?? "", /no spaces/);
    assert.equal(validateSymbolName("Engine.bundle"), undefined);
  });

  test("the word under the cursor is one identifier", () => {
    assert.equal("self.engine.bundle(x)".slice(12).match(SYMBOL_NAME_PATTERN)?.[0], "bundle");
  });

  test("pick items for an ambiguous name", () => {
    assert.deepEqual(symbolPickItems([engine, other]), [
      { label: "Engine.bundle", description: "method · pkg/engine.py:10-14", detail: engine.signature, index: 0 },
      { label: "Other.bundle", description: "method · pkg/other.py:3", detail: engine.signature, index: 1 },
    ]);
  });

  test("a picked match without its body is asked for again by qualname and path", () => {
    assert.equal(pickedMatchParams(engine), undefined);
    assert.deepEqual(pickedMatchParams(other), { name: "Other.bundle", path: "pkg/other.py", include_body: true });
    assert.deepEqual(pickedMatchParams({ ...engine, truncated: true }), { name: "Engine.bundle", path: "pkg/engine.py", include_body: true });
  });

  test("the document: heading, place, fenced body (or the signature), and the note", () => {
    const result: SymbolResult = { name: "bundle", matches: [engine, other], ambiguous: true, total_matches: 3, note: "1 more match not listed" };
    const text = renderSymbolMatches(result);
    assert.match(text, /<!-- showing 2 of 3 matches for bundle -->/);
    assert.match(text, /# Engine\.bundle\n\nmethod in `pkg\/engine\.py`, lines 10-14 · 20 tokens\n\n```python\n    def bundle\(self, request\):\n        return assemble\(request\)\n```/);
    assert.match(text, /# Other\.bundle\n\nmethod in `pkg\/other\.py`, lines 3 · 0 tokens\n\n```python\ndef bundle\(self, request: BundleRequest\) -> BundleResult\n```/);
    assert.match(text, /> 1 more match not listed/);
  });

  test("a body holding a code fence gets a longer fence", () => {
    const text = renderSymbolMatches({ matches: [{ ...engine, path: "README.md", body: "```py\nx\n```" }] });
    assert.match(text, /````markdown\n```py\nx\n```\n````/);
  });

  test("no match: says so, with the server's note", () => {
    const text = renderSymbolMatches({ name: "nope", matches: [], ambiguous: false, total_matches: 0, note: "close names: nape" });
    assert.match(text, /# nope\n\nNo symbol by that name in the index\.\n\nclose names: nape/);
  });

  test("fence languages", () => {
    assert.equal(fenceLanguage("a/b.py"), "python");
    assert.equal(fenceLanguage("x.TS"), "typescript");
    assert.equal(fenceLanguage("Makefile"), "");
  });
});
