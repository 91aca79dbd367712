import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { describe, test } from "node:test";

import { hasCtxLsp } from "../src/lib/probe";
import { chooseServerExec, describeExec, type ExecProbes, expandVariables, findOnPath, MODULE_ARGS } from "../src/lib/serverExec";
import { testPython } from "./python";

function probes(withCtxLsp: string[], onPath: Record<string, string> = {}): ExecProbes & { asked: string[] } {
  const asked: string[] = [];
  return {
    asked,
    hasCtxLsp: async (python) => {
      asked.push(python);
      return withCtxLsp.includes(python);
    },
    onPath: (name) => onPath[name],
  };
}

describe("choosing the server's command line", () => {
  test("ctxLsp.serverCommand wins and is used as is", async () => {
    const p = probes([]);
    const choice = await chooseServerExec({ serverCommand: ["uvx", "ctx-lsp", "serve"], interpreter: "/py", activePython: "/venv/python" }, p);
    assert.deepEqual(choice.exec, { command: "uvx", args: ["ctx-lsp", "serve"], source: "serverCommand" });
    assert.deepEqual(p.asked, []);
  });

  test("then ctxLsp.interpreter, run as python -m ctx_lsp serve, without probing", async () => {
    const p = probes([]);
    const choice = await chooseServerExec({ serverCommand: [], interpreter: "/opt/py/bin/python", activePython: "/venv/python" }, p);
    assert.deepEqual(choice.exec, { command: "/opt/py/bin/python", args: ["-m", "ctx_lsp", "serve"], source: "interpreter" });
    assert.equal(choice.problem, undefined);
    assert.deepEqual(p.asked, []);
  });

  test("then the Python extension's interpreter, if it can import ctx_lsp", async () => {
    const choice = await chooseServerExec({ serverCommand: [], interpreter: "", activePython: "/venv/python" }, probes(["/venv/python"]));
    assert.deepEqual(choice.exec, { command: "/venv/python", args: [...MODULE_ARGS], source: "pythonExtension" });
  });

  test("else ctx-lsp on PATH, with a note about the interpreter that lacked it", async () => {
    const choice = await chooseServerExec(
      { serverCommand: [], interpreter: "", activePython: "/venv/python" },
      probes([], { "ctx-lsp": "/usr/local/bin/ctx-lsp" }),
    );
    assert.deepEqual(choice.exec, { command: "/usr/local/bin/ctx-lsp", args: ["serve"], source: "path" });
    assert.match(choice.notes[0], /\/venv\/python cannot import ctx_lsp/);
    assert.equal(choice.problem, undefined);
  });

  test("nothing found: a problem that says how to fix it", async () => {
    const choice = await chooseServerExec({ serverCommand: [], interpreter: "", activePython: "/venv/python" }, probes([]));
    assert.equal(choice.exec.source, "path");
    assert.match(choice.problem ?? "", /ctx-lsp was not found: install it into \/venv\/python .*ctxLsp\.interpreter/);
  });

  test("the exec has no transport: vscode-languageclient would append --stdio, which ctx-lsp serve rejects", async () => {
    const choice = await chooseServerExec({ serverCommand: [], interpreter: "/py", activePython: undefined }, probes([]));
    assert.deepEqual(Object.keys(choice.exec).sort(), ["args", "command", "source"]);
    assert.ok(!choice.exec.args.includes("--stdio"));
  });

  test("describeExec quotes parts with spaces", () => {
    assert.equal(describeExec({ command: "/My Py/python", args: ["-m", "ctx_lsp", "serve"], source: "interpreter" }), '"/My Py/python" -m ctx_lsp serve');
  });
});

describe("variables in path settings", () => {
  const ctx = { workspaceFolder: "/ws", home: "/home/me", env: { VENV: "/venvs/a" } };
  test("workspaceFolder, userHome, env and ~", () => {
    assert.equal(expandVariables("${workspaceFolder}/.venv/bin/python", ctx), "/ws/.venv/bin/python");
    assert.equal(expandVariables("${userHome}/py", ctx), "/home/me/py");
    assert.equal(expandVariables("${env:VENV}/bin/python", ctx), "/venvs/a/bin/python");
    assert.equal(expandVariables("${env:NOPE}x", ctx), "x");
    assert.equal(expandVariables("~/venv/bin/python", ctx), "/home/me/venv/bin/python");
    assert.equal(expandVariables("a~b", ctx), "a~b");
  });
  test("no folder: ${workspaceFolder} is left as is", () => {
    assert.equal(expandVariables("${workspaceFolder}/x", { home: "/h", env: {} }), "${workspaceFolder}/x");
  });
});

describe("finding programs", () => {
  test("findOnPath finds an executable file and skips others", () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "ctx-path-"));
    const other = fs.mkdtempSync(path.join(os.tmpdir(), "ctx-path-"));
    try {
      fs.writeFileSync(path.join(other, "ctx-lsp"), "not executable");
      fs.chmodSync(path.join(other, "ctx-lsp"), 0o644);
      fs.writeFileSync(path.join(dir, "ctx-lsp"), "#!/bin/sh\n");
      fs.chmodSync(path.join(dir, "ctx-lsp"), 0o755);
      const env = { PATH: [other, dir].join(path.delimiter) };
      assert.equal(findOnPath("ctx-lsp", env, "linux"), path.join(dir, "ctx-lsp"));
      assert.equal(findOnPath("nothing-here", env, "linux"), undefined);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
      fs.rmSync(other, { recursive: true, force: true });
    }
  });

  test("hasCtxLsp asks the interpreter: yes for the test Python, no for a missing one", async () => {
    assert.equal(await hasCtxLsp(testPython()), true);
    assert.equal(await hasCtxLsp(path.join(os.tmpdir(), "no-such-python")), false);
  });
});
