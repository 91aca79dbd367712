import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as path from "node:path";
import { describe, test } from "node:test";

import { clientOptionsSpec, DOCUMENT_SELECTOR, FILE_EVENTS_GLOB, StderrLevels } from "../src/lib/client";
import { PACKAGE_ROOT } from "./paths";

const extensionSource = fs.readFileSync(path.join(PACKAGE_ROOT, "src", "extension.ts"), "utf8");

describe("client options", () => {
  test("every file-backed document is synced, whatever its language", () => {
    assert.deepEqual(DOCUMENT_SELECTOR, [{ scheme: "file" }]);
    const spec = clientOptionsSpec({ tokenizer: "cl100k_base" }, false);
    assert.deepEqual(spec, {
      documentSelector: [{ scheme: "file" }],
      initializationOptions: { tokenizer: "cl100k_base" },
      fileEventsGlob: undefined,
      revealOutputChannelOn: "never",
    });
  });

  test("VS Code's file watcher feeds the server only when the server does not watch", () => {
    assert.equal(clientOptionsSpec({}, true).fileEventsGlob, FILE_EVENTS_GLOB);
  });

  test("extension.ts builds LanguageClientOptions from the spec, progress through the middleware", () => {
    assert.match(extensionSource, /documentSelector: spec\.documentSelector/);
    assert.match(extensionSource, /initializationOptions: spec\.initializationOptions/);
    assert.match(extensionSource, /handleWorkDoneProgress:/);
    assert.doesNotMatch(extensionSource, /TransportKind/, "a transport makes the client append --stdio");
  });
});

describe("server stderr", () => {
  test("each log record at its own level; a traceback keeps its record's level", () => {
    const levels = new StderrLevels();
    const seen = [
      "Traceback (most recent call last):",
      "2026-11-23 06:13:02,569 INFO ctx_lsp.server.app: indexed 5 files in 0.38s",
      "2026-11-23 06:13:02,600 DEBUG pygls.protocol: sending",
      "2026-11-23 06:13:03,001 WARNING ctx_lsp.server.app: config: unknown config key 'x' ignored",
      "2026-11-23 06:13:04,002 ERROR ctx_lsp.server.app: indexing failed",
      "Traceback (most recent call last):",
      '  File "x.py", line 1',
      "2026-11-23 06:13:05,003 CRITICAL root: out of memory",
      "2026-11-23 06:13:06,004 INFO ctx_lsp: back to normal",
    ].map((line) => levels.level(line));
    assert.deepEqual(seen, ["error", "info", "debug", "warn", "error", "error", "error", "error", "info"]);
  });

  test("extension.ts routes stderr through it (the client's default logs every line as an error)", () => {
    assert.match(extensionSource, /stderr: \(input, channel\) => lines\(input, \(line\) => channel\[levels\.level\(line\)\]\(line\)\)/);
  });
});
