import assert from "node:assert/strict";
import { describe, test } from "node:test";

import {
  agentPickItems,
  agentTable,
  buildBundleParams,
  bundleMessage,
  DEFAULT_AGENTS,
  isInsideFolders,
  renderExplanation,
} from "../src/lib/bundle";
import type { Explanation } from "../src/lib/protocol";
import type { BundleSettings } from "../src/lib/settings";

const md: BundleSettings = { format: "markdown", includeVisibleEditors: true };

describe("agents", () => {
  test("the default table is DESIGN.md's", () => {
    assert.deepEqual(Object.keys(DEFAULT_AGENTS), [
      "default", "planner", "analyst", "reviewer", "architect", "designer", "implementer", "tester", "debugger",
    ]);
    assert.deepEqual(DEFAULT_AGENTS.debugger, { tier: 3, budget: 8000, docsCap: 3000 });
  });

  test("configured agents change rows; a new one starts from default", () => {
    const table = agentTable({ reviewer: { budget: 3000 }, "release-notes": { tier: 1, docs_cap: 500 } });
    assert.deepEqual(table.reviewer, { tier: 1, budget: 3000, docsCap: 3000 });
    assert.deepEqual(table["release-notes"], { tier: 1, budget: 4000, docsCap: 500 });
    assert.deepEqual(agentTable(undefined), agentTable({}));
  });

  test("pick items: the last agent first, each with tier, budget and docs cap", () => {
    const items = agentPickItems(agentTable({}), "debugger");
    assert.equal(items[0].agent, "debugger");
    assert.equal(items[0].description, "tier 3 (full) · 8,000 tokens · docs cap 3,000");
    assert.equal(items.length, Object.keys(DEFAULT_AGENTS).length);
    assert.equal(agentPickItems(agentTable({}), "gone")[0].agent, "default");
  });
});

describe("ctx/bundle params", () => {
  const folders = ["file:///ws"];

  test("active editor is the focus, other visible editors are open, outsiders are left out", () => {
    const { params, skipped } = buildBundleParams({
      agent: "implementer",
      query: "  fix the cache  ",
      active: { uri: "file:///ws/a.py", line: 9, character: 4 },
      visible: ["file:///ws/a.py", "file:///ws/b.py", "file:///ws/b.py", "file:///elsewhere/c.py", "untitled:Untitled-1", "file:///wsx/d.py"],
      folders,
      settings: md,
    });
    assert.deepEqual(params, {
      agent: "implementer",
      query: "fix the cache",
      focus: { uri: "file:///ws/a.py", position: { line: 9, character: 4 } },
      open: ["file:///ws/b.py"],
      format: "markdown",
    });
    assert.deepEqual(skipped, ["file:///elsewhere/c.py", "untitled:Untitled-1", "file:///wsx/d.py"]);
  });

  test("no editor and an empty query: only the agent and format", () => {
    assert.deepEqual(buildBundleParams({ agent: "default", query: "", visible: [], folders, settings: md }).params, {
      agent: "default",
      format: "markdown",
    });
  });

  test("an active editor outside the workspace is not the focus", () => {
    const built = buildBundleParams({ agent: "a", query: "q", active: { uri: "file:///tmp/x.py", line: 0, character: 0 }, visible: [], folders, settings: md });
    assert.equal(built.params.focus, undefined);
    assert.deepEqual(built.skipped, ["file:///tmp/x.py"]);
  });

  test("budget, profile and format settings; visible editors can be left out", () => {
    const { params } = buildBundleParams({
      agent: "tester",
      query: "q",
      visible: ["file:///ws/b.py"],
      folders,
      settings: { budget: 8000, profile: "token-efficient", format: "xml", includeVisibleEditors: false },
    });
    assert.deepEqual(params, { agent: "tester", query: "q", budget: 8000, profile: "token-efficient", format: "xml" });
  });

  test("isInsideFolders needs a path separator after the folder", () => {
    assert.equal(isInsideFolders("file:///ws/a.py", ["file:///ws/"]), true);
    assert.equal(isInsideFolders("file:///ws2/a.py", ["file:///ws"]), false);
    assert.equal(isInsideFolders("vscode-remote://x/ws/a.py", ["file:///ws"]), false);
  });
});

describe("after the bundle", () => {
  test("the message says tokens against the budget", () => {
    const message = bundleMessage("implementer", { total_tokens: 5800, budget: 6000, sections: [{}, {}] as never[] });
    assert.equal(message, "Copied the implementer bundle: 5.8K of 6K tokens (96%), 2 sections.");
    const warned = bundleMessage("a", { total_tokens: 1, budget: 10, sections: [{}] as never[], snapshot: { warnings: ["unknown model"] } });
    assert.match(warned, /1 section\. 1 warning: see Explain Last Bundle\./);
  });

  test("ctx.explain renders what went in by rank, then what stayed out", () => {
    const ex: Explanation = {
      query: "cache | lookups",
      agent: "implementer",
      budget: 6000,
      total_tokens: 5800,
      elapsed_ms: 12.5,
      candidates: [
        { id: "m", contributor: "codebase_map", path: "x.py", salience: 0.2, rank: 0.04, reason: "map", outcome: "out: outranked", included: false, tier: null, tokens: 0 },
        { id: "a", contributor: "working_files", path: "a.py", salience: 1, rank: 0.4, reason: "focus file", outcome: "in: tier 2", included: true, tier: 2, tokens: 900 },
        { id: "b", contributor: "retrieval", path: "b.py", salience: 0.9, rank: 0.225, reason: "hit: a|b", outcome: "in: tier 1", included: true, tier: 1, tokens: 300 },
      ],
    };
    const text = renderExplanation(ex);
    assert.match(text, /Query: `cache \| lookups`/);
    assert.match(text, /Tokens: 5,800 of 6,000 \(96%\), assembled in 12\.5 ms/);
    assert.match(text, /Candidates: 3 \(2 in, 1 out\)/);
    const inAt = text.indexOf("| 0.400 | 1.00 | working_files | a.py | 2 | 900 | in: tier 2 | focus file |");
    const secondAt = text.indexOf("| 0.225 | 0.90 | retrieval | b.py | 1 | 300 | in: tier 1 | hit: a\\|b |");
    const outAt = text.indexOf("## Left out");
    assert.ok(inAt > 0 && secondAt > inAt && outAt > secondAt, text);
    assert.ok(text.indexOf("codebase_map") > outAt);
  });
});
