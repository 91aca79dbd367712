import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { describe, test } from "node:test";

import { hasCtxLsp } from "../src/lib/probe";
import { chooseServerExec, describeExec, type ExecProbes, expandVariables, findOnPath, MODULE_ARGS } from "../src/lib/serverExec";
import { testPython } from "./python";

interface Machine {
  /** Interpreters that can import ctx_lsp. */
  withCtxLsp?: string[];
  /** name → full path of what is on PATH. */
  onPath?: Record<string, string>;
  /** Executable files that exist. */
  files?: string[];
}

function probes(machine: Machine = {}): ExecProbes & { asked: string[] } {
  const asked: string[] = [];
  const files = new Set([...(machine.files ?? []), ...Object.values(machine.onPath ?? {}), ...(machine.withCtxLsp ?? [])]);
  return {
    asked,
    hasCtxLsp: async (python) => {
      asked.push(python);
      return (machine.withCtxLsp ?? []).includes(python);
    },
    onPath: (name) => machine.onPath?.[name],
    isExecutable: (file) => files.has(file),
  };
}

const HOME = "/home/me";
const base = { serverCommand: [] as string[], interpreter: "", home: HOME, env: {}, platform: "linux" as const, workspaceFolders: ["/ws"] };

describe("choosing the server's command line", () => {
  test("ctxLsp.serverCommand wins and is used as is, without probing interpreters", async () => {
    const p = probes({ onPath: { uvx: "/usr/bin/uvx" } });
    const choice = await chooseServerExec({ ...base, serverCommand: ["uvx", "ctx-lsp", "serve"], interpreter: "/py", activePython: "/venv/python" }, p);
    assert.deepEqual(choice.exec, { command: "uvx", args: ["ctx-lsp", "serve"], source: "serverCommand" });
    assert.equal(choice.problem, undefined);
    assert.deepEqual(p.asked, []);
  });

  test("a ctxLsp.serverCommand whose program does not exist is a problem naming the setting and the program", async () => {
    const choice = await chooseServerExec({ ...base, serverCommand: ["/nowhere/ctx-lsp", "serve"] }, probes({ files: ["/ws/.venv/bin/ctx-lsp"] }));
    assert.equal(choice.setting, "serverCommand");
    assert.match(choice.problem ?? "", /^ctxLsp\.serverCommand runs \/nowhere\/ctx-lsp, which is not an executable file\. Correct ctxLsp\.serverCommand, or remove it/);
    const bare = await chooseServerExec({ ...base, serverCommand: ["ctx-lsp-nightly", "serve"] }, probes());
    assert.match(bare.problem ?? "", /ctx-lsp-nightly, which is not on the extension host's PATH/);
  });

  test("then ctxLsp.interpreter, run as python -m ctx_lsp serve, once it is known to have ctx_lsp", async () => {
    const choice = await chooseServerExec(
      { ...base, interpreter: "/opt/py/bin/python", activePython: "/venv/python" },
      probes({ withCtxLsp: ["/opt/py/bin/python", "/venv/python"] }),
    );
    assert.deepEqual(choice.exec, { command: "/opt/py/bin/python", args: ["-m", "ctx_lsp", "serve"], source: "interpreter" });
    assert.equal(choice.problem, undefined);
  });

  test("a ctxLsp.interpreter that is missing, or lacks ctx_lsp, is a problem that says which", async () => {
    const missing = await chooseServerExec({ ...base, interpreter: "/opt/py/bin/python" }, probes());
    assert.match(missing.problem ?? "", /ctxLsp\.interpreter is \/opt\/py\/bin\/python, which is not an executable file/);
    const without = await chooseServerExec({ ...base, interpreter: "/opt/py/bin/python" }, probes({ files: ["/opt/py/bin/python"] }));
    assert.match(without.problem ?? "", /cannot import ctx_lsp: install it there \(\/opt\/py\/bin\/python -m pip install ctx-lsp\)/);
    assert.equal(without.setting, "interpreter");
  });

  test("then the Python extension's interpreter, if it can import ctx_lsp", async () => {
    const choice = await chooseServerExec(
      { ...base, activePython: "/venv/python" },
      probes({ withCtxLsp: ["/venv/python"], files: ["/ws/.venv/bin/ctx-lsp"] }),
    );
    assert.deepEqual(choice.exec, { command: "/venv/python", args: [...MODULE_ARGS], source: "pythonExtension" });
  });

  test("then the workspace's .venv: its ctx-lsp script, as pip installs it", async () => {
    const choice = await chooseServerExec(
      { ...base, activePython: "/usr/bin/python3" },
      probes({ files: ["/ws/.venv/bin/ctx-lsp", "/ws/.venv/bin/python"], onPath: { "ctx-lsp": "/usr/local/bin/ctx-lsp" } }),
    );
    assert.deepEqual(choice.exec, { command: "/ws/.venv/bin/ctx-lsp", args: ["serve"], source: "workspaceVenv" });
    assert.match(choice.notes[0], /\/usr\/bin\/python3 cannot import ctx_lsp/);
  });

  test("or its python -m ctx_lsp when there is no script; venv/ is tried after .venv/, in every folder", async () => {
    const viaPython = await chooseServerExec({ ...base, workspaceFolders: ["/a", "/b"] }, probes({ files: ["/a/.venv/bin/python"], withCtxLsp: ["/b/venv/bin/python"] }));
    assert.deepEqual(viaPython.exec, { command: "/b/venv/bin/python", args: [...MODULE_ARGS], source: "workspaceVenv" });
    assert.match(viaPython.notes.join("\n"), /\/a\/\.venv\/bin\/python cannot import ctx_lsp/);
  });

  test("on Windows the venv's Scripts folder", async () => {
    const choice = await chooseServerExec(
      { ...base, platform: "win32", workspaceFolders: ["C:\\ws"] },
      probes({ files: ["C:\\ws\\.venv\\Scripts\\ctx-lsp.exe"] }),
    );
    assert.deepEqual(choice.exec, { command: "C:\\ws\\.venv\\Scripts\\ctx-lsp.exe", args: ["serve"], source: "workspaceVenv" });
  });

  test("then ctx-lsp on PATH", async () => {
    const choice = await chooseServerExec(base, probes({ onPath: { "ctx-lsp": "/usr/local/bin/ctx-lsp" }, files: [`${HOME}/.local/bin/ctx-lsp`] }));
    assert.deepEqual(choice.exec, { command: "/usr/local/bin/ctx-lsp", args: ["serve"], source: "path" });
  });

  test("then pipx's bin directory ($PIPX_BIN_DIR, else ~/.local/bin), which a desktop launcher's PATH often lacks", async () => {
    const pipx = await chooseServerExec(base, probes({ files: [`${HOME}/.local/bin/ctx-lsp`] }));
    assert.deepEqual(pipx.exec, { command: `${HOME}/.local/bin/ctx-lsp`, args: ["serve"], source: "pipx" });
    const custom = await chooseServerExec({ ...base, env: { PIPX_BIN_DIR: "/opt/pipx/bin" } }, probes({ files: ["/opt/pipx/bin/ctx-lsp"] }));
    assert.equal(custom.exec.command, "/opt/pipx/bin/ctx-lsp");
  });

  test("last, python -m ctx_lsp with the interpreters on PATH", async () => {
    const choice = await chooseServerExec(base, probes({ onPath: { python3: "/usr/bin/python3", python: "/usr/local/bin/python" }, withCtxLsp: ["/usr/local/bin/python"] }));
    assert.deepEqual(choice.exec, { command: "/usr/local/bin/python", args: [...MODULE_ARGS], source: "pythonOnPath" });
  });

  test("nothing found: the problem lists every place tried and what to set", async () => {
    const choice = await chooseServerExec(
      { ...base, workspaceFolders: [`${HOME}/shop`], activePython: "/usr/bin/python3" },
      probes({ onPath: { python3: "/usr/bin/python3" } }),
    );
    assert.equal(
      choice.problem,
      "ctx-lsp was not found. Tried: the Python extension's interpreter (/usr/bin/python3); ~/shop/.venv and ~/shop/venv; " +
        "ctx-lsp on PATH; ~/.local/bin/ctx-lsp; python -m ctx_lsp with python3 and python on PATH. " +
        "Install it into the workspace's .venv (.venv/bin/python -m pip install ctx-lsp) or with pipx install ctx-lsp, " +
        "or set ctxLsp.interpreter to a Python that has it, or ctxLsp.serverCommand to the command that runs it.",
    );
  });

  test("the exec has no transport: vscode-languageclient would append --stdio, which ctx-lsp serve rejects", async () => {
    const choice = await chooseServerExec({ ...base, interpreter: "/py" }, probes({ withCtxLsp: ["/py"] }));
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
