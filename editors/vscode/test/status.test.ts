import assert from "node:assert/strict";
import { describe, test } from "node:test";

import type { StatusResult } from "../src/lib/protocol";
import { formatBudgetUse, formatCount, formatTokens, percentOf, renderStatus, StatusBarModel } from "../src/lib/status";

describe("token formatting", () => {
  test("compact counts, rounded down", () => {
    const cases: [number, string][] = [
      [0, "0"],
      [950, "950"],
      [999, "999"],
      [1000, "1K"],
      [7600, "7.6K"],
      [7960, "7.9K"],
      [8000, "8K"],
      [12345, "12.3K"],
      [128000, "128K"],
      [999999, "999K"],
      [1_200_000, "1.2M"],
    ];
    for (const [n, text] of cases) assert.equal(formatTokens(n), text, String(n));
  });

  test("budget use: the example from the brief, and never 100% before the budget is used up", () => {
    assert.equal(formatBudgetUse(7600, 8000), "7.6K/8K (95%)");
    assert.equal(formatBudgetUse(7999, 8000), "7.9K/8K (99%)");
    assert.equal(formatBudgetUse(8000, 8000), "8K/8K (100%)");
    assert.equal(percentOf(10, 0), 0);
  });

  test("thousands separators", () => {
    assert.equal(formatCount(1234567), "1,234,567");
    assert.equal(formatCount(12), "12");
    assert.equal(formatCount(undefined), "?");
  });
});

describe("status bar", () => {
  test("starting, then indexing until the first index ends, then ready", () => {
    const model = new StatusBarModel();
    assert.match(model.view().text, /loading~spin/);
    model.setState("running");
    assert.equal(model.view().text, "$(sync~spin) ctx", "not 'ready' before the server's first progress");
    model.onProgress("t0", { kind: "begin", title: "Indexing workspace", percentage: 0 });
    model.onProgress("t0", { kind: "end" });
    assert.equal(model.view().text, "$(layers) ctx");
    assert.equal(model.view().warning, false);
  });

  test("a server that reports no index is ready once the grace period is over; a restart waits again", () => {
    const model = new StatusBarModel();
    model.setState("running");
    model.firstIndexOverdue();
    assert.equal(model.view().text, "$(layers) ctx");
    model.setState("running");
    assert.equal(model.view().text, "$(layers) ctx", "still running: no new wait");
    model.setState("stopped");
    model.setState("running");
    assert.equal(model.view().text, "$(sync~spin) ctx");
  });

  test("indexing progress shows its percentage and message, and clears at the end", () => {
    const model = new StatusBarModel();
    model.setState("running");
    model.onProgress("t1", { kind: "begin", title: "Indexing workspace", percentage: 0 });
    assert.equal(model.view().text, "$(sync~spin) ctx 0%");
    model.onProgress("t1", { kind: "report", message: "parsing (45/100)", percentage: 45 });
    assert.equal(model.view().text, "$(sync~spin) ctx 45%");
    assert.match(model.view().tooltip, /^Indexing workspace: parsing \(45\/100\)/);
    assert.equal(model.busy, true);
    model.onProgress("t1", { kind: "end", message: "done" });
    assert.equal(model.busy, false);
    assert.equal(model.view().text, "$(layers) ctx");
  });

  test("the last bundle's budget use", () => {
    const model = new StatusBarModel();
    model.setState("running");
    model.onBundle("debugger", { total_tokens: 7600, budget: 8000, sections: new Array(14).fill({}) });
    assert.equal(model.view().text, "$(layers) ctx 7.6K/8K (95%)");
    assert.match(model.view().tooltip, /Last bundle \(debugger\): 7,600 of 8,000 tokens, 95% of its budget, 14 sections/);
    model.onProgress(1, { kind: "begin", title: "Re-indexing workspace" });
    assert.equal(model.view().text, "$(sync~spin) ctx", "progress without a percentage");
    model.onProgress(1, { kind: "end" });
    assert.equal(model.view().text, "$(layers) ctx 7.6K/8K (95%)");
  });

  test("a server that failed is shown as a warning with the reason", () => {
    const model = new StatusBarModel();
    model.onProgress("t", { kind: "begin", title: "x" });
    model.setState("failed", "ctx-lsp was not found");
    const view = model.view();
    assert.equal(view.text, "$(error) ctx");
    assert.equal(view.warning, true);
    assert.match(view.tooltip, /not running: ctx-lsp was not found/);
    assert.equal(model.busy, false);
  });
});

describe("status report", () => {
  const status: StatusResult = {
    version: "0.1.0",
    folders: ["/ws"],
    indexing: false,
    files_indexed: 1234,
    files_by_language: { python: 1000, markdown: 200, text: 34 },
    skipped: { binary: 3, gitignored: 40 },
    too_large: [],
    ignored_dirs: 7,
    problems: [],
    symbols: 5678,
    tokens: 1_234_567,
    tokens_estimated: 890,
    tokenizer: "o200k_base",
    open_documents: 2,
    watcher: { state: "running", error: null, events: 12 },
    cache: { locations: [], warnings: [], docs: { lookups: 4, hit_rate: 0.75, hit_p50_ms: 0.4, miss_p50_ms: 31 } },
    config: { sources: ["defaults", "pyproject.toml [tool.ctx-lsp]", "client"], warnings: ["unknown config key 'x' ignored"] },
    last_index: { seconds: 1.25, parsed: 1200, reused: 34 },
    last_snapshot: {
      context_window_type: "balanced",
      available_budget: 8000,
      total_used: 7600,
      utilization_pct: 95,
      tokenizer: "o200k_base",
      contributions: [{ contributor: "working_files", allocated: 2240, used: 2200, items: 3, condensed: 0 }],
      warnings: [],
    },
  };

  test("every part of ctx.status has a line", () => {
    const text = renderStatus(status, "ctx-lsp serve");
    for (const expected of [
      "ctx-lsp 0.1.0 — ready",
      "Server:          ctx-lsp serve",
      "Files indexed:   1,234 (python 1,000, markdown 200, text 34)",
      "Symbols:         5,678",
      "Tokens:          1,234,567 counted + 890 estimated (o200k_base)",
      "Skipped:         gitignored 40, binary 3; ignored directories 7",
      "Watcher:         running (12 events)",
      "Last index:      1.25 s (1,200 parsed, 34 from cache)",
      "Docs cache:      4 lookups, hit rate 75%, hit p50 0.4 ms, miss p50 31 ms",
      "Config sources:  defaults → pyproject.toml [tool.ctx-lsp] → client",
      "Config warning:  unknown config key 'x' ignored",
      "Last bundle:     7,600 of 8,000 tokens (95%), balanced, o200k_base",
      "working_files      2,240     2,200      3          0",
    ]) {
      assert.ok(text.includes(expected), `missing ${JSON.stringify(expected)} in\n${text}`);
    }
  });

  test("an empty or older answer does not throw", () => {
    const text = renderStatus({});
    assert.match(text, /ctx-lsp \? — ready/);
    assert.match(text, /Docs cache:      not used yet/);
  });
});
