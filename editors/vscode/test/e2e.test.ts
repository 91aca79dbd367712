/**
 * The protocol end to end, in Node, against the real server: the same JSON-RPC stack the
 * extension uses (vscode-jsonrpc), the command line and initializationOptions the
 * extension would build, then what the real workbench run (test/real/) does not show:
 * incremental edits, every setting's key arriving without a warning, agents from settings,
 * a refused parameter, the restart decision, the editor's file events, shutdown and exit.
 * (Progress in the status bar, Explain and Show Symbol are checked in the workbench.)
 *
 * The server runs under $CTX_LSP_PYTHON, else the `python` on PATH.
 */
import assert from "node:assert/strict";
import { type ChildProcess, spawn } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { after, before, describe, test } from "node:test";
import { pathToFileURL } from "node:url";
import {
  createMessageConnection,
  type MessageConnection,
  ProgressType,
  ResponseError,
  StreamMessageReader,
  StreamMessageWriter,
} from "vscode-jsonrpc/node";

import { buildBundleParams } from "../src/lib/bundle";
import { clientOptionsSpec } from "../src/lib/client";
import {
  type BundleResult,
  ERROR_CODES,
  METHODS,
  SERVER_COMMANDS,
  type StatusResult,
  type SymbolResult,
  type WorkDoneProgressValue,
} from "../src/lib/protocol";
import { chooseServerExec, describeExec } from "../src/lib/serverExec";
import {
  buildInitializationOptions,
  configurationChange,
  type LaunchSettings,
  readClientSettings,
  restartReason,
  SERVER_SETTINGS,
} from "../src/lib/settings";
import { renderStatus, StatusBarModel } from "../src/lib/status";
import { symbolParams } from "../src/lib/symbol";
import { testPython } from "./python";
import { ENGINE_PY, makeWorkspace } from "./workspace";

const TIMEOUT_MS = 90_000;

/** Every server setting set to its example, as a user's settings.json might. */
function userSettings(python: string, overrides: Record<string, unknown> = {}): Record<string, unknown> {
  const values: Record<string, unknown> = {};
  for (const spec of SERVER_SETTINGS) if (spec.example !== undefined) values[spec.setting] = spec.example;
  values["python.interpreter"] = python;
  values["bundle.format"] = "markdown";
  return { ...values, ...overrides };
}

async function waitFor<T>(what: string, probe: () => T | undefined | Promise<T | undefined>, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined && value !== (false as unknown)) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe("ctx-lsp serve, driven like the extension drives it", { timeout: TIMEOUT_MS }, () => {
  const python = testPython();
  const ws = makeWorkspace("ctx-vscode-e2e-");
  const settings = userSettings(python);
  const built = buildInitializationOptions((key) => settings[key]);
  const client = readClientSettings((key) => settings[key]);
  const model = new StatusBarModel();
  const progress: { token: string | number; value: WorkDoneProgressValue }[] = [];
  const progressViews: string[] = [];
  const logs: string[] = [];
  let stderr = "";
  let proc: ChildProcess;
  let conn: MessageConnection;
  let running: LaunchSettings;
  let initializeResult: { capabilities: Record<string, any>; serverInfo?: { name: string } };

  const engineUri = ws.uri("pkg/engine.py");
  const otherUri = ws.uri("pkg/other.py");
  const outsideUri = pathToFileURL(path.join(os.tmpdir(), "outside-the-workspace.py")).href;
  let engineText = ENGINE_PY;

  const request = <T>(method: string, params: unknown) => conn.sendRequest(method, params) as Promise<T>;
  const command = <T>(name: string) => request<T>("workspace/executeCommand", { command: name, arguments: [] });

  before(async () => {
    assert.deepEqual(built.warnings, []);
    const choice = await chooseServerExec(
      { serverCommand: client.serverCommand, interpreter: python },
      { hasCtxLsp: async () => true, onPath: () => undefined, isExecutable: () => true },
    );
    assert.equal(choice.exec.source, "interpreter");
    running = { command: describeExec(choice.exec), editorWatchesFiles: client.editorWatchesFiles, options: built.options };
    proc = spawn(choice.exec.command, choice.exec.args, { cwd: ws.root, env: process.env, stdio: ["pipe", "pipe", "pipe"] });
    proc.stderr!.on("data", (chunk) => (stderr += String(chunk)));
    conn = createMessageConnection(new StreamMessageReader(proc.stdout!), new StreamMessageWriter(proc.stdin!));
    conn.onRequest("window/workDoneProgress/create", (params: { token: string | number }) => {
      conn.onProgress(new ProgressType<WorkDoneProgressValue>(), params.token, (value) => {
        progress.push({ token: params.token, value });
        model.onProgress(params.token, value);
        progressViews.push(model.view().text);
      });
      return null;
    });
    conn.onRequest((method: string, params: any) => (method === "workspace/configuration" ? (params?.items ?? []).map(() => null) : null));
    conn.onNotification("window/logMessage", (params: { message: string }) => {
      logs.push(params.message);
    });
    conn.onNotification(() => undefined);
    conn.listen();
    const spec = clientOptionsSpec(built.options, client.editorWatchesFiles);
    initializeResult = await request("initialize", {
      processId: process.pid,
      clientInfo: { name: "Visual Studio Code", version: "1.91.0" },
      rootUri: ws.folderUri,
      workspaceFolders: [{ uri: ws.folderUri, name: path.basename(ws.root) }],
      initializationOptions: spec.initializationOptions,
      capabilities: {
        window: { workDoneProgress: true },
        workspace: {
          workspaceFolders: true,
          configuration: true,
          didChangeConfiguration: { dynamicRegistration: true },
          didChangeWatchedFiles: { dynamicRegistration: true },
          executeCommand: { dynamicRegistration: true },
        },
        textDocument: { synchronization: { dynamicRegistration: true, didSave: true } },
      },
    });
    model.setState("running");
    await conn.sendNotification("initialized", {});
  });

  after(async () => {
    try {
      if (proc && proc.exitCode === null) {
        proc.kill();
      }
      conn?.dispose();
    } finally {
      ws.remove();
    }
  });

  const context = () => `\n--- server log ---\n${logs.join("\n")}\n--- stderr ---\n${stderr.slice(-4000)}`;

  test("initialize: incremental sync and the ctx.* commands", () => {
    const caps = initializeResult.capabilities;
    const sync = caps.textDocumentSync;
    assert.equal(typeof sync === "number" ? sync : sync.change, 2, "incremental sync");
    if (typeof sync === "object") assert.equal(sync.openClose, true);
    const commands: string[] = caps.executeCommandProvider?.commands ?? [];
    for (const name of Object.values(SERVER_COMMANDS)) assert.ok(commands.includes(name), `${name} in ${commands}`);
    assert.equal(initializeResult.serverInfo?.name, "ctx-lsp");
  });

  test("ctx/bundle with the editor's params shows an unsaved, incrementally edited buffer", async () => {
    engineText = `${ENGINE_PY}\n\ndef unsaved_marker_fn():\n    return "only in the buffer"\n`;
    await conn.sendNotification("textDocument/didOpen", {
      textDocument: { uri: engineUri, languageId: "python", version: 1, text: engineText },
    });
    const lines = engineText.split("\n");
    const end = { line: lines.length - 1, character: lines[lines.length - 1].length };
    const typed = "\ndef typed_later_fn():\n    return 1\n";
    await conn.sendNotification("textDocument/didChange", {
      textDocument: { uri: engineUri, version: 2 },
      contentChanges: [{ range: { start: end, end }, text: typed }],
    });
    engineText += typed;
    const focusLine = engineText.split("\n").findIndex((l) => l.startsWith("def unsaved_marker_fn"));
    const { params, skipped } = buildBundleParams({
      agent: "implementer",
      query: "unsaved_marker_fn typed_later_fn",
      active: { uri: engineUri, line: focusLine, character: 4 },
      visible: [engineUri, otherUri, outsideUri],
      folders: [ws.folderUri],
      settings: client.bundle,
    });
    assert.deepEqual(skipped, [outsideUri]);
    assert.deepEqual(params.open, [otherUri]);
    const result = await request<BundleResult>(METHODS.bundle, params);
    assert.ok(result.text.includes("unsaved_marker_fn"), `the didOpen text is in the bundle${context()}`);
    assert.ok(result.text.includes("typed_later_fn"), `the didChange edit is in the bundle${context()}`);
    assert.equal(result.budget, 6000, "the implementer's budget");
    assert.ok(result.total_tokens > 0 && result.total_tokens <= result.budget);
    assert.ok(result.sections.length > 0);
    assert.equal(result.snapshot?.context_window_type, "token-efficient", "ctxLsp.defaultContextWindowType reached the server");
    assert.equal(result.snapshot?.tokenizer, "cl100k_base", "ctxLsp.tokenizer reached the server");
    model.onBundle("implementer", result);
    assert.match(model.view().text, /^\$\(layers\) ctx [\d.]+K?\/6K \(\d+%\)$/);
  });

  test("an agent configured in settings gets its budget", async () => {
    const result = await request<BundleResult>(METHODS.bundle, { agent: "reviewer", query: "Engine status" });
    assert.equal(result.budget, 3000);
    const custom = await request<BundleResult>(METHODS.bundle, { agent: "release-notes", query: "Engine" });
    assert.equal(custom.budget, 2000);
    assert.ok(custom.total_tokens <= 2000);
  });

  test("ctx.status: the settings arrived without warnings, generated/ was ignored, the buffer is open", async () => {
    const status = await command<StatusResult>(SERVER_COMMANDS.status);
    assert.deepEqual(status.config?.warnings, [], "every key the extension sends is one the server knows");
    assert.ok(status.config?.sources?.includes("client"));
    assert.equal(status.tokenizer, "cl100k_base");
    assert.equal(status.open_documents, 1);
    assert.equal(status.indexing, false);
    assert.notEqual(status.watcher?.state, "running", "ctxLsp.index.watch: false");
    assert.ok((status.files_indexed ?? 0) >= 4, `files_indexed ${status.files_indexed}`);
    const text = renderStatus(status, running.command);
    assert.match(text, /^ctx-lsp \S+ — ready/);
    assert.match(text, /Files indexed: +\d+ \(/);
    assert.match(text, /Config sources: .*client/);
    assert.match(text, /Last bundle: /);
  });

  test("a bad parameter is refused with -32602 naming the field", async () => {
    await assert.rejects(request(METHODS.bundle, { agent: "default", budget: "8k" }), (err: unknown) => {
      assert.ok(err instanceof ResponseError);
      assert.equal(err.code, ERROR_CODES.invalidParams);
      assert.match(err.message, /^budget: /);
      return true;
    });
  });

  test("a settings change is a didChangeConfiguration, not a restart", async () => {
    const changed = userSettings(python, { tokenizer: "o200k_base", defaultContextWindowType: "balanced" });
    const next = buildInitializationOptions((key) => changed[key]);
    const wanted: LaunchSettings = { ...running, options: next.options };
    assert.equal(restartReason(running, wanted), undefined);
    await conn.sendNotification("workspace/didChangeConfiguration", configurationChange(next.options));
    const status = await waitFor("the new tokenizer", async () => {
      const s = await command<StatusResult>(SERVER_COMMANDS.status);
      return s.tokenizer === "o200k_base" ? s : undefined;
    });
    assert.deepEqual(status.config?.warnings, []);
    const result = await request<BundleResult>(METHODS.bundle, { agent: "default", query: "Engine" });
    assert.equal(result.snapshot?.context_window_type, "balanced");
    assert.equal(result.snapshot?.tokenizer, "o200k_base");
  });

  test("with index.watch off, the editor's file events reach the index", async (t) => {
    fs.writeFileSync(path.join(ws.root, "pkg", "late.py"), "def late_disk_fn():\n    return 42\n");
    await conn.sendNotification("workspace/didChangeWatchedFiles", { changes: [{ uri: ws.uri("pkg/late.py"), type: 1 }] });
    const found = await waitFor("late.py in the index", async () => {
      const s = await command<StatusResult>(SERVER_COMMANDS.status);
      return (s.files_indexed ?? 0) >= 5 ? s : undefined;
    });
    assert.ok(found);
    try {
      const result = await request<SymbolResult>(METHODS.symbol, symbolParams("late_disk_fn"));
      assert.equal(result.matches[0]?.qualname, "late_disk_fn");
    } catch (err) {
      if (err instanceof ResponseError && err.code === ERROR_CODES.methodNotFound) t.diagnostic("no ctx/symbol");
      else throw err;
    }
  });

  test("didClose, shutdown and exit end the server cleanly", async () => {
    await conn.sendNotification("textDocument/didClose", { textDocument: { uri: engineUri } });
    const status = await command<StatusResult>(SERVER_COMMANDS.status);
    assert.equal(status.open_documents, 0);
    const exited = new Promise<number | null>((resolve) => proc.once("exit", (code) => resolve(code)));
    await request("shutdown", null);
    await conn.sendNotification("exit");
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<string>((resolve) => {
      timer = setTimeout(() => resolve("no exit within 10 s"), 10_000);
    });
    const code = await Promise.race([exited, timeout]);
    clearTimeout(timer);
    assert.equal(code, 0, `exit code${context()}`);
  });
});
