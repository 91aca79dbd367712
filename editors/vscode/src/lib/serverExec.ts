/**
 * Which program runs the server, in the order Microsoft's vscode-python-tools-extension-template
 * uses: an explicit setting, else the Python extension's active interpreter, else a fallback
 * (here: `ctx-lsp` on PATH).
 *
 * Unlike the template, whose server ships inside the extension, ctx-lsp must be installed
 * in the interpreter that runs it; the Python extension's interpreter is only used when it
 * can import `ctx_lsp` (a project's venv often does not have it).
 */
import * as fs from "node:fs";
import * as path from "node:path";

/** Arguments after an interpreter: `python -m ctx_lsp serve` works whatever is on PATH. */
export const MODULE_ARGS: readonly string[] = ["-m", "ctx_lsp", "serve"];
export const SERVER_SCRIPT = "ctx-lsp";
export const SERVE_ARGS: readonly string[] = ["serve"];

export type ExecSource = "serverCommand" | "interpreter" | "pythonExtension" | "path";

/**
 * A process to spawn over stdio. Deliberately no `transport`: given `TransportKind.stdio`,
 * vscode-languageclient appends `--stdio`, which `ctx-lsp serve` rejects.
 */
export interface ServerExec {
  command: string;
  args: string[];
  source: ExecSource;
}

export interface ExecInputs {
  /** `ctxLsp.serverCommand`: a whole command line, used as is. */
  serverCommand: readonly string[];
  /** `ctxLsp.interpreter`, already expanded. */
  interpreter: string;
  /** The Python extension's active interpreter, if it is installed and has one. */
  activePython?: string;
}

export interface ExecChoice {
  exec: ServerExec;
  /** What was tried and skipped, for the log. */
  notes: string[];
  /** Set when the chosen program is known to be missing: say so, with the fix. */
  problem?: string;
}

export interface ExecProbes {
  /** Whether this interpreter can import ctx_lsp. */
  hasCtxLsp(python: string): Promise<boolean>;
  /** The full path of an executable on PATH, or undefined. */
  onPath(name: string): string | undefined;
}

export interface VariableContext {
  workspaceFolder?: string;
  home: string;
  env: Readonly<Record<string, string | undefined>>;
}

/** `${workspaceFolder}`, `${userHome}`, `${env:NAME}` and a leading `~`, as in VS Code settings. */
export function expandVariables(value: string, ctx: VariableContext): string {
  let out = value.replace(/\$\{(workspaceFolder|userHome|env:([^}]+))\}/g, (match, name: string, envName?: string) => {
    if (name === "workspaceFolder") return ctx.workspaceFolder ?? match;
    if (name === "userHome") return ctx.home;
    return ctx.env[envName ?? ""] ?? "";
  });
  if (out === "~" || out.startsWith("~/") || out.startsWith("~\\")) out = ctx.home + out.slice(1);
  return out;
}

/** The command line as one string, for logs and restart decisions. */
export function describeExec(exec: ServerExec): string {
  return [exec.command, ...exec.args].map((part) => (/\s/.test(part) ? JSON.stringify(part) : part)).join(" ");
}

/** Pick the server's command line. Explicit settings are used without probing. */
export async function chooseServerExec(inputs: ExecInputs, probes: ExecProbes): Promise<ExecChoice> {
  const notes: string[] = [];
  if (inputs.serverCommand.length > 0) {
    const [command, ...args] = inputs.serverCommand;
    return { exec: { command, args, source: "serverCommand" }, notes };
  }
  if (inputs.interpreter) {
    return { exec: { command: inputs.interpreter, args: [...MODULE_ARGS], source: "interpreter" }, notes };
  }
  if (inputs.activePython) {
    if (await probes.hasCtxLsp(inputs.activePython)) {
      return { exec: { command: inputs.activePython, args: [...MODULE_ARGS], source: "pythonExtension" }, notes };
    }
    notes.push(`the Python extension's interpreter ${inputs.activePython} cannot import ctx_lsp; trying ${SERVER_SCRIPT} on PATH`);
  }
  const found = probes.onPath(SERVER_SCRIPT);
  const exec: ServerExec = { command: found ?? SERVER_SCRIPT, args: [...SERVE_ARGS], source: "path" };
  if (found) return { exec, notes };
  const install = inputs.activePython
    ? `install it into ${inputs.activePython} (python -m pip install ctx-lsp)`
    : "install it (python -m pip install ctx-lsp)";
  return {
    exec,
    notes,
    problem: `ctx-lsp was not found: ${install}, or set ctxLsp.interpreter to a Python that has it, or ctxLsp.serverCommand`,
  };
}

/** `which`: the first executable `name` on `env.PATH` (with PATHEXT on Windows). */
export function findOnPath(
  name: string,
  env: Readonly<Record<string, string | undefined>> = process.env,
  platform: NodeJS.Platform = process.platform,
): string | undefined {
  const dirs = (env.PATH ?? env.Path ?? "").split(path.delimiter).filter(Boolean);
  const exts = platform === "win32" ? ["", ...(env.PATHEXT ?? ".EXE;.CMD;.BAT").split(";").filter(Boolean)] : [""];
  for (const dir of dirs) {
    for (const ext of exts) {
      const candidate = path.join(dir, name + ext);
      try {
        const stat = fs.statSync(candidate);
        if (!stat.isFile()) continue;
        if (platform !== "win32") fs.accessSync(candidate, fs.constants.X_OK);
        return candidate;
      } catch {
        // not here
      }
    }
  }
  return undefined;
}
