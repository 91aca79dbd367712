/**
 * package.json against the code: contributed commands and settings, activation, packaging,
 * and the rule that `src/lib` (what the other tests load) never touches the editor API.
 */
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import { builtinModules } from "node:module";
import * as path from "node:path";
import { describe, test } from "node:test";

import { DEFAULT_AGENTS } from "../src/lib/bundle";
import { COMMAND_IDS, COMMANDS } from "../src/lib/commands";
import { CLIENT_SETTINGS, RESTRICTED_SETTINGS, SECTION, SERVER_SETTINGS } from "../src/lib/settings";
import { PACKAGE_ROOT, REPO_ROOT } from "./paths";
import { testPython } from "./python";

interface Property {
  type?: string | string[];
  enum?: unknown[];
  default?: unknown;
  description?: string;
  markdownDescription?: string;
  scope?: string;
  ignoreSync?: boolean;
}

const manifest = JSON.parse(fs.readFileSync(path.join(PACKAGE_ROOT, "package.json"), "utf8"));
const properties: Record<string, Property> = manifest.contributes.configuration.properties;
const read = (rel: string) => fs.readFileSync(path.join(PACKAGE_ROOT, rel), "utf8");
const extensionSource = read("src/extension.ts");

function sorted<T>(items: Iterable<T>): T[] {
  return [...items].sort();
}

describe("commands", () => {
  const contributed: { command: string; title: string; category: string }[] = manifest.contributes.commands;

  test("every contributed command is in COMMANDS and every one in COMMANDS is contributed", () => {
    assert.deepEqual(sorted(contributed.map((c) => c.command)), sorted(COMMAND_IDS));
    for (const c of contributed) {
      assert.ok(c.title && c.category === "ctx-lsp", `${c.command} needs a title and the ctx-lsp category`);
    }
  });

  test("extension.ts registers exactly the contributed commands", () => {
    const registered = [...extensionSource.matchAll(/registerCommand\(\s*COMMANDS\.(\w+)/g)].map((m) => {
      const key = m[1] as keyof typeof COMMANDS;
      assert.ok(key in COMMANDS, `COMMANDS.${key} does not exist`);
      return COMMANDS[key];
    });
    assert.deepEqual(sorted(registered), sorted(COMMAND_IDS));
    assert.equal(new Set(registered).size, registered.length, "a command is registered twice");
    assert.doesNotMatch(extensionSource, /registerCommand\(\s*["'`]/, "register through COMMANDS, not a literal id");
  });

  test("no id collides with the server's ctx.* commands, which the language client registers itself", () => {
    for (const id of COMMAND_IDS) assert.ok(id.startsWith("ctxLsp."), id);
  });

  test("the commands the titles promise", () => {
    const titles = Object.fromEntries(contributed.map((c) => [c.command, c.title]));
    assert.equal(titles[COMMANDS.showStatus], "Show Status");
    assert.equal(titles[COMMANDS.copyBundle], "Copy Context Bundle for Agent…");
    assert.equal(titles[COMMANDS.explainLastBundle], "Explain Last Bundle");
    assert.match(titles[COMMANDS.showSymbol], /^Show Symbol/);
    assert.match(titles[COMMANDS.reindex], /^Reindex/);
    assert.match(titles[COMMANDS.prewarmDocs], /^Prewarm/);
  });
});

describe("settings", () => {
  test("contributed settings are exactly the server and client settings the code reads", () => {
    const expected = [...SERVER_SETTINGS.map((s) => s.setting), ...CLIENT_SETTINGS].map((k) => `${SECTION}.${k}`);
    assert.deepEqual(sorted(Object.keys(properties)), sorted(expected));
  });

  test("each has a description and a type, and each example fits its type", () => {
    for (const [key, prop] of Object.entries(properties)) {
      assert.ok(prop.description || prop.markdownDescription, `${key} has no description`);
      assert.ok(prop.type, `${key} has no type`);
    }
    for (const spec of SERVER_SETTINGS) {
      if (spec.example === undefined) continue;
      const prop = properties[`${SECTION}.${spec.setting}`];
      const types = ([] as string[]).concat(prop.type ?? []);
      const actual = Array.isArray(spec.example) ? "array" : Number.isInteger(spec.example) ? "integer" : typeof spec.example;
      assert.ok(types.includes(actual), `${spec.setting}: example is ${actual}, schema says ${types}`);
      if (prop.enum) assert.ok(prop.enum.includes(spec.example), `${spec.setting}: example not in enum`);
      if (spec.choices) assert.deepEqual(prop.enum, [...spec.choices], `${spec.setting}: enum and choices differ`);
    }
  });

  test("settings that start programs are restricted in untrusted workspaces, and apply from User settings in remote windows", () => {
    const restricted: string[] = manifest.capabilities.untrustedWorkspaces.restrictedConfigurations;
    assert.deepEqual(sorted(restricted), sorted(RESTRICTED_SETTINGS.map((k) => `${SECTION}.${k}`)));
    for (const key of restricted) {
      // "machine" and "machine-overridable" values in User settings are not applied in a remote
      // window (code-server, Remote-SSH, WSL): seen in code-server, where ctxLsp.serverCommand
      // in User settings was ignored. "resource" applies from User, Remote, Workspace and
      // Folder settings; ignoreSync keeps a machine's paths out of Settings Sync instead.
      assert.equal(properties[key].scope, "resource", key);
      assert.equal(properties[key].ignoreSync, true, key);
    }
  });

  test("the trace setting is the one vscode-languageclient reads for the client id", () => {
    assert.ok(properties[`${SECTION}.trace.server`]);
    assert.match(extensionSource, /new LanguageClient\(CLIENT_ID,/);
  });

  test("every server key path exists in ctx_lsp/config.py's Config", () => {
    const paths = JSON.stringify(SERVER_SETTINGS.map((s) => s.server));
    const script = [
      "import dataclasses, json, sys, typing",
      "from ctx_lsp.config import Config",
      "bad = []",
      "for path in json.loads(sys.argv[1]):",
      "    node = Config()",
      "    for key in path:",
      "        names = {f.name for f in dataclasses.fields(node)}",
      "        if key not in names:",
      "            bad.append('.'.join(path)); break",
      "        node = getattr(node, key)",
      "        if not dataclasses.is_dataclass(node): break",
      "print(json.dumps(bad))",
    ].join("\n");
    const out = execFileSync(testPython(), ["-c", script, paths], { encoding: "utf8", cwd: REPO_ROOT });
    assert.deepEqual(JSON.parse(out), []);
  });

  test("the agent table matches the server's defaults in ctx_lsp/config.py", () => {
    const source = fs.readFileSync(path.join(REPO_ROOT, "ctx_lsp", "config.py"), "utf8");
    const body = source.slice(source.indexOf("def _agents"), source.indexOf("return {name: AgentConfig"));
    const rows = Object.fromEntries(
      [...body.matchAll(/"([\w-]+)":\s*\((\d+),\s*(\d+),\s*(\d+)\)/g)].map((m) => [m[1], { tier: +m[2], budget: +m[3], docsCap: +m[4] }]),
    );
    assert.deepEqual(rows, DEFAULT_AGENTS);
  });
});

describe("manifest and packaging", () => {
  test("activation, entry point, engine", () => {
    assert.deepEqual(manifest.activationEvents, ["onStartupFinished"]);
    assert.equal(manifest.main, "./out/extension.js");
    assert.equal(manifest.engines.vscode, "^1.91.0");
    assert.ok(manifest.publisher && manifest.license === "MIT");
  });

  test("@types/vscode is pinned at or below engines.vscode (vsce refuses otherwise)", () => {
    const engine = manifest.engines.vscode.replace(/^\^/, "").split(".").map(Number);
    const types = manifest.devDependencies["@types/vscode"].replace(/^[\^~]/, "").split(".").map(Number);
    assert.ok(types[0] < engine[0] || (types[0] === engine[0] && types[1] <= engine[1]), `${types} > ${engine}`);
    assert.doesNotMatch(manifest.devDependencies["@types/vscode"], /^[\^~]/, "pin it exactly");
  });

  test("the .vsix holds the bundle and the docs, not sources or node_modules", () => {
    const ignore = read(".vscodeignore").split("\n").map((l) => l.trim());
    assert.ok(ignore.includes("**"));
    for (const keep of ["!out/extension.js", "!package.json", "!README.md", "!LICENSE"]) assert.ok(ignore.includes(keep), keep);
    const gitignore = read(".gitignore");
    for (const entry of ["node_modules/", "out/", "*.vsix"]) assert.ok(gitignore.includes(entry), entry);
    for (const file of ["README.md", "LICENSE", "package-lock.json"]) assert.ok(fs.existsSync(path.join(PACKAGE_ROOT, file)), file);
    assert.match(manifest.scripts.package, /vsce package --no-dependencies/);
  });

  test("src/lib never imports the editor API (these tests load it in plain Node)", () => {
    const dir = path.join(PACKAGE_ROOT, "src", "lib");
    for (const file of fs.readdirSync(dir)) {
      const text = fs.readFileSync(path.join(dir, file), "utf8");
      assert.doesNotMatch(text, /from\s+["']vscode(-languageclient[^"']*)?["']|require\(["']vscode/, `${file} imports vscode`);
    }
  });

  test("the compiled bundle needs nothing but vscode and Node built-ins", (t) => {
    const bundle = path.join(PACKAGE_ROOT, "out", "extension.js");
    if (!fs.existsSync(bundle)) {
      t.skip("out/extension.js is missing: run npm run compile first");
      return;
    }
    const text = fs.readFileSync(bundle, "utf8");
    const required = new Set([...text.matchAll(/require\(["']([^"']+)["']\)/g)].map((m) => m[1]));
    const builtins = new Set(builtinModules.flatMap((m) => [m, `node:${m}`]));
    const foreign = [...required].filter((m) => m !== "vscode" && !builtins.has(m));
    assert.deepEqual(foreign, [], "bundled with --no-dependencies, so these would be missing at run time");
    assert.ok(required.has("vscode"));
  });
});
