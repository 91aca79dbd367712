import assert from "node:assert/strict";
import { describe, test } from "node:test";

import { documentName, MAX_DOCUMENT_NAME } from "../src/lib/documents";

describe("document names", () => {
  test("a qualname or a title stays as it is", () => {
    assert.equal(documentName("Symbol Inventory.add"), "Symbol Inventory.add");
    assert.equal(documentName("Explain Last Bundle"), "Explain Last Bundle");
  });

  test("separators and characters a file name cannot hold become _, never a path", () => {
    assert.equal(documentName("Symbol a/b\\c:d"), "Symbol a_b_c_d");
    assert.equal(documentName("..hidden"), "hidden");
    assert.equal(documentName("  \n "), "ctx-lsp");
  });

  test("long names are cut", () => {
    assert.equal(documentName("x".repeat(200)).length, MAX_DOCUMENT_NAME);
  });
});
