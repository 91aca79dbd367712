import assert from "node:assert/strict";
import { describe, test } from "node:test";

import {
  buildInitializationOptions,
  configurationChange,
  type LaunchSettings,
  readClientSettings,
  restartReason,
  SERVER_SETTINGS,
} from "../src/lib/settings";

const reader = (values: Record<string, unknown>) => (key: string) => values[key];

describe("settings → initializationOptions", () => {
  test("nothing set sends nothing, so the project's config files decide", () => {
    const { options, warnings } = buildInitializationOptions(reader({}));
    assert.deepEqual(options, {});
    assert.deepEqual(warnings, []);
  });

  test("every server setting lands on its snake_case key path", () => {
    const values: Record<string, unknown> = {};
    for (const spec of SERVER_SETTINGS) if (spec.example !== undefined) values[spec.setting] = spec.example;
    values["python.interpreter"] = "/usr/bin/python3";
    const { options, warnings } = buildInitializationOptions(reader(values));
    assert.deepEqual(warnings, []);
    assert.deepEqual(options, {
      tokenizer: "cl100k_base",
      default_context_window_type: "token-efficient",
      agents: { reviewer: { budget: 3000 }, "release-notes": { tier: 1, budget: 2000, docs_cap: 500 } },
      model_limits: { "gpt-4o": 64000 },
      artifacts_budget: 3000,
      index: { ignore: ["generated/"], max_file_bytes: 200000, respect_gitignore: true, watch: false, workers: 1, cache: false },
      docs: { require_topic: true, allow_full_library: ["pygls"], folders: { mylib: ["docs/mylib"] } },
      python: { interpreter: "/usr/bin/python3" },
    });
  });

  test("a value of the wrong type is left out with a warning naming the setting", () => {
    const { options, warnings } = buildInitializationOptions(
      reader({ "index.maxFileBytes": "1MB", tokenizer: "gpt2", "index.watch": "yes", "index.workers": -1, "index.ignore": ["ok", 3] }),
    );
    assert.deepEqual(options, {});
    assert.equal(warnings.length, 5);
    assert.match(warnings.join("\n"), /ctxLsp\.index\.maxFileBytes: expected a positive integer, got "1MB"/);
    assert.match(warnings.join("\n"), /ctxLsp\.tokenizer: expected one of o200k_base, cl100k_base/);
  });

  test("agents: docsCap becomes docs_cap; a bad row drops the setting, not the others", () => {
    const good = buildInitializationOptions(reader({ agents: { tester: { docsCap: 1000, tier: 3 } } }));
    assert.deepEqual(good.options, { agents: { tester: { docs_cap: 1000, tier: 3 } } });
    const bad = buildInitializationOptions(reader({ agents: { tester: { tier: 4 } }, artifactsBudget: 100 }));
    assert.deepEqual(bad.options, { artifacts_budget: 100 });
    assert.match(bad.warnings[0], /ctxLsp\.agents: tester\.tier: expected 1, 2 or 3/);
    const unknown = buildInitializationOptions(reader({ agents: { tester: { bugdet: 5 } } }));
    assert.match(unknown.warnings[0], /tester\.bugdet: unknown field/);
  });

  test("the Python extension's interpreter is the docs environment unless one is set", () => {
    assert.deepEqual(buildInitializationOptions(reader({}), { activePython: "/venv/bin/python" }).options, {
      python: { interpreter: "/venv/bin/python" },
    });
    const set = buildInitializationOptions(reader({ "python.interpreter": "${workspaceFolder}/.venv/bin/python" }), {
      activePython: "/venv/bin/python",
      expand: (s) => s.replace("${workspaceFolder}", "/ws"),
    });
    assert.deepEqual(set.options, { python: { interpreter: "/ws/.venv/bin/python" } });
    assert.deepEqual(buildInitializationOptions(reader({ "python.interpreter": "  " })).options, {});
  });

  test("didChangeConfiguration nests the options under the ctxLsp section the server reads", () => {
    assert.deepEqual(configurationChange({ tokenizer: "cl100k_base" }), { settings: { ctxLsp: { tokenizer: "cl100k_base" } } });
  });
});

describe("client settings", () => {
  test("defaults and wrong types fall back", () => {
    const s = readClientSettings(reader({ serverCommand: ["ctx-lsp", "", "serve", 3], "bundle.budget": 0, "bundle.format": "html" }));
    assert.deepEqual(s.serverCommand, ["ctx-lsp", "serve"]);
    assert.equal(s.interpreter, "");
    assert.deepEqual(s.bundle, { budget: undefined, profile: undefined, format: "markdown", includeVisibleEditors: true });
    assert.equal(s.editorWatchesFiles, false);
  });

  test("bundle settings and the editor's file watching", () => {
    const s = readClientSettings(
      reader({ "bundle.budget": 8000, "bundle.profile": " token-efficient ", "bundle.format": "xml", "bundle.includeVisibleEditors": false, "index.watch": false }),
    );
    assert.deepEqual(s.bundle, { budget: 8000, profile: "token-efficient", format: "xml", includeVisibleEditors: false });
    assert.equal(s.editorWatchesFiles, true);
  });
});

describe("restart or reconfigure", () => {
  const base: LaunchSettings = { command: "ctx-lsp serve", editorWatchesFiles: false, options: { tokenizer: "cl100k_base", index: { ignore: ["a/"] } } };

  test("a changed value is sent as a configuration change", () => {
    assert.equal(restartReason(base, { ...base, options: { tokenizer: "o200k_base", index: { ignore: [] } } }), undefined);
    assert.equal(restartReason(base, { ...base, options: { ...base.options, artifacts_budget: 10 } }), undefined);
  });

  test("a new command, the watcher moving, or a removed key restarts", () => {
    assert.match(restartReason(base, { ...base, command: "/py -m ctx_lsp serve" }) ?? "", /server command/);
    assert.match(restartReason(base, { ...base, editorWatchesFiles: true }) ?? "", /index\.watch/);
    assert.match(restartReason(base, { ...base, options: { index: { ignore: ["a/"] } } }) ?? "", /removed \(tokenizer\)/);
  });
});
