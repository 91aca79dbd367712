/**
 * The bundled extension (out/extension.js, what the .vsix ships) activated against a
 * stand-in `vscode` module, for what the run in a real VS Code (test/real/) does not reach:
 * no folder open, no server anywhere, the Python extension's interpreter (that extension
 * cannot be installed there), Reindex and Prewarm Docs, and the restart when a setting is
 * removed. The commands, the status bar item, the clipboard, settings changes and a wrong
 * serverCommand are checked in the real workbench instead.
 *
 * Needs `npm run compile` first (skipped otherwise).
 */
import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { after, before, describe, test } from "node:test";

import { COMMAND_IDS, COMMANDS } from "../src/lib/commands";
import { SERVER_COMMANDS } from "../src/lib/protocol";
import { PACKAGE_ROOT } from "./paths";
import { testPython } from "./python";
import {
  contributedDefaults,
  createVscodeStub,
  extensionContext,
  fakePythonExtension,
  type LoadedExtension,
  loadExtension,
  type StubOptions,
  type VscodeStub,
} from "./vscodeStub";
import { makeWorkspace } from "./workspace";

const BUNDLE = path.join(PACKAGE_ROOT, "out", "extension.js");
const compiled = fs.existsSync(BUNDLE);
const skip = compiled ? false : "out/extension.js is missing: run npm run compile first";

interface Item {
  text: string;
  tooltip: string;
  command: string;
  visible: boolean;
  history: string[];
}

async function waitFor<T>(what: string, probe: () => T | undefined | false | Promise<T | undefined | false>, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

interface Session {
  stub: VscodeStub;
  ext: LoadedExtension;
  ctx: Record<string, unknown>;
  item: () => Item;
  run: (id: string) => Promise<unknown>;
  close: () => Promise<void>;
}

async function activated(settings: Record<string, unknown>, folders: string[], more: StubOptions = {}): Promise<Session> {
  const stub = createVscodeStub({ settings, folders, defaults: contributedDefaults(PACKAGE_ROOT), ...more });
  const ext = loadExtension(BUNDLE, stub);
  const ctx = extensionContext(PACKAGE_ROOT);
  await ext.activate(ctx);
  return {
    stub,
    ext,
    ctx,
    item: () => stub.statusItems[0] as unknown as Item,
    run: async (id: string) => {
      const command = stub.commands.get(id);
      assert.ok(command, `${id} is registered`);
      return command();
    },
    close: async () => {
      await ext.deactivate();
      for (const d of ctx.subscriptions as { dispose(): unknown }[]) d.dispose();
      ext.unload();
    },
  };
}

describe("activation without a folder", { skip }, () => {
  let s: Session;
  before(async () => {
    s = await activated({}, []);
  });
  after(async () => s?.close());

  test("registers exactly the contributed commands", () => {
    assert.deepEqual([...s.stub.commands.keys()].sort(), [...COMMAND_IDS].sort());
  });

  test("the status bar item says why nothing runs, and opens the status", async () => {
    const item = await waitFor("the item to leave 'starting'", () => (s.item().text.includes("loading") ? undefined : s.item()));
    assert.equal(item.text, "$(error) ctx");
    assert.match(item.tooltip, /not running: no folder is open/);
    assert.equal(item.command, COMMANDS.showStatus);
    assert.equal(item.visible, true);
    await s.run(COMMANDS.showStatus);
    assert.match(s.stub.channel("ctx-lsp status")!.text, /ctx-lsp is not running: no folder is open/);
  });

  test("a command that needs the server says so", async () => {
    await s.run(COMMANDS.copyBundle);
    assert.deepEqual(s.stub.shown.pop(), {
      level: "warning",
      message: "ctx-lsp: the server is not running: no folder is open",
      items: [],
    });
  });
});

describe("activation when no server can be found", { skip }, () => {
  let s: Session;
  let emptyDir: string;
  const ws = makeWorkspace("ctx-vscode-missing-");
  const savedPath = process.env.PATH;
  before(async () => {
    emptyDir = fs.mkdtempSync(path.join(os.tmpdir(), "ctx-empty-path-"));
    process.env.PATH = emptyDir;
    s = await activated({}, [ws.root]);
  });
  after(async () => {
    process.env.PATH = savedPath;
    await s?.close();
    ws.remove();
    fs.rmSync(emptyDir, { recursive: true, force: true });
  });

  test("no setting, no Python extension, nothing on PATH: an error that says how to fix it", async () => {
    const error = await waitFor("the error message", () => s.stub.shown.find((m) => m.level === "error"));
    assert.match(error.message, /^ctx-lsp: ctx-lsp was not found\. Tried: .*ctx-lsp on PATH.*\. Install it into the workspace's \.venv .*ctxLsp\.interpreter/);
    assert.deepEqual(error.items, ["Open Settings", "Show Log"]);
    assert.equal(s.item().text, "$(error) ctx");
  });
});

describe("the Python extension's interpreter", { skip, timeout: 60_000 }, () => {
  let s: Session;
  const ws = makeWorkspace("ctx-vscode-python-");
  const python = fakePythonExtension(testPython());
  const savedPath = process.env.PATH;
  const log = () => s.stub.channel("ctx-lsp")?.text ?? "";
  before(async () => {
    // ctx-lsp on PATH is the venv's, next to the test interpreter.
    process.env.PATH = [path.dirname(testPython()), savedPath].join(path.delimiter);
    s = await activated({ "ctxLsp.index.cache": false }, [ws.root], { extensions: { "ms-python.python": python.extension } });
  });
  after(async () => {
    process.env.PATH = savedPath;
    await s?.close();
    ws.remove();
  });

  test("runs the server as `<active interpreter> -m ctx_lsp serve` when it has ctx-lsp", async () => {
    await waitFor("the server", () => (s.stub.commands.has(SERVER_COMMANDS.status) ? true : undefined));
    assert.ok(log().includes(`starting ${testPython()} -m ctx_lsp serve (from pythonExtension)`), log());
    await s.run(COMMANDS.showStatus);
    assert.match(s.stub.channel("ctx-lsp status")!.text, /Config sources: +defaults → client/, "python.interpreter was sent");
  });

  test("switching to an interpreter without ctx-lsp falls back to ctx-lsp on PATH, with a restart", async () => {
    python.setInterpreter(path.join(ws.root, "no-such-python"));
    await waitFor("the restart", () => (/starting \S*ctx-lsp serve \(from path\)/.test(log()) ? true : undefined));
    assert.match(log(), /the Python extension's interpreter \S*no-such-python cannot import ctx_lsp/);
    await waitFor("the server again", async () => {
      try {
        await s.run(COMMANDS.showStatus);
        return /ctx-lsp \S+ — /.test(s.stub.channel("ctx-lsp status")!.text) ? true : undefined;
      } catch {
        return undefined;
      }
    });
  });
});

describe("the bundled extension with the real server", { skip, timeout: 120_000 }, () => {
  let s: Session;
  const ws = makeWorkspace("ctx-vscode-activate-");
  const log = () => s.stub.channel("ctx-lsp")?.text ?? "";
  const statusText = async () => {
    await s.run(COMMANDS.showStatus);
    return s.stub.channel("ctx-lsp status")!.text;
  };

  before(async () => {
    s = await activated(
      { "ctxLsp.interpreter": testPython(), "ctxLsp.index.cache": false, "ctxLsp.index.workers": 1, "ctxLsp.tokenizer": "o200k_base" },
      [ws.root],
    );
    await waitFor("the index", async () => {
      if (!s.stub.commands.has(SERVER_COMMANDS.status)) return undefined;
      const text = await statusText();
      return /— ready/.test(text) && /Files indexed: +[4-9]/.test(text) ? text : undefined;
    });
  });
  after(async () => {
    if (s) await s.close();
    ws.remove();
  });

  test("started `<interpreter> -m ctx_lsp serve`; the client registered the server's ctx.* commands next to ours", () => {
    assert.match(log(), /starting \S+ -m ctx_lsp serve \(from interpreter\)/);
    for (const id of Object.values(SERVER_COMMANDS)) assert.ok(s.stub.commands.has(id), id);
    for (const id of COMMAND_IDS) assert.ok(s.stub.commands.has(id), id);
  });

  test("Reindex and Prewarm Docs report what they did", async () => {
    await s.run(COMMANDS.reindex);
    assert.match(s.stub.shown.pop()?.message ?? "", /^ctx-lsp reindexed [4-9] files, \d+ symbols in [\d.]+ s\.$/);
    await s.run(COMMANDS.prewarmDocs);
    assert.match(s.stub.shown.pop()?.message ?? "", /^ctx-lsp (found no declared dependencies|prewarmed the docs of \d+ of \d+)/);
  });

  test("a removed setting restarts the server, which then uses the project's value", async () => {
    // (A changed setting reaching the running server is checked in a real VS Code: test/real/.)
    delete s.stub.settings["ctxLsp.tokenizer"];
    s.stub.fireConfigurationChange("ctxLsp");
    await waitFor("the restart", () => (/restarting the server: settings were removed \(tokenizer\)/.test(log()) ? true : undefined));
    await waitFor("the default tokenizer", async () => {
      if (!s.stub.commands.has(SERVER_COMMANDS.status)) return undefined;
      try {
        return (await statusText()).includes("(o200k_base)") ? true : undefined;
      } catch {
        return undefined;
      }
    });
  });

  test("the run touched only API the stub models (a diagnostic, not a failure)", (t) => {
    const unknown = [...s.stub.unknown].filter((k) => !k.includes("()"));
    t.diagnostic(`vscode API answered by the auto-stub: ${unknown.join(", ") || "none"}`);
    const errors = log().split("\n").filter((l) => l.startsWith("[error]"));
    assert.deepEqual(errors, [], "the server's INFO records are not logged as errors");
    assert.match(log(), /^\[info\] \S+ \S+ INFO ctx_lsp\.server\.app: indexed \d+ files/m);
  });
});
