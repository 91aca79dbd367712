/**
 * Which program runs the server. Explicit settings first, then where users install ctx-lsp:
 * the Python extension's interpreter, the workspace's own `.venv`/`venv`, `ctx-lsp` on
 * PATH, pipx's (and uv's) bin directory, then `python -m ctx_lsp` on the interpreters on PATH.
 *
 * PATH alone is not enough: VS Code started from a desktop launcher, and a remote or web
 * extension host (code-server, Remote-SSH), get a login shell's PATH, without the venv the
 * user activated in a terminal. When nothing is found, the problem lists every place tried
 * and what to set.
 */
import * as fs from "node:fs";
import * as path from "node:path";

/** Arguments after an interpreter: `python -m ctx_lsp serve` works whatever is on PATH. */
export const MODULE_ARGS: readonly string[] = ["-m", "ctx_lsp", "serve"];
export const SERVER_SCRIPT = "ctx-lsp";
export const SERVE_ARGS: readonly string[] = ["serve"];
/** Virtual environments inside a workspace folder, in the order they are tried. */
export const WORKSPACE_VENVS: readonly string[] = [".venv", "venv"];
/** Interpreters tried on PATH, last, for `python -m ctx_lsp` (`pip install --user`, a system install). */
export const PATH_PYTHONS: readonly string[] = ["python3", "python"];

export type ExecSource =
  | "serverCommand"
  | "interpreter"
  | "pythonExtension"
  | "workspaceVenv"
  | "path"
  | "pipx"
  | "pythonOnPath";

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
  /** File-system paths of the workspace folders (their `.venv`/`venv` are tried). */
  workspaceFolders?: readonly string[];
  home?: string;
  env?: Readonly<Record<string, string | undefined>>;
  platform?: NodeJS.Platform;
}

export interface ExecChoice {
  exec: ServerExec;
  /** What was tried and skipped, for the log. */
  notes: string[];
  /** Set when no server can be started: what is wrong and what to do, for the user. */
  problem?: string;
  /** The setting the user should look at for `problem` (opened by "Open Settings"). */
  setting?: string;
}

export interface ExecProbes {
  /** Whether this interpreter can import ctx_lsp. */
  hasCtxLsp(python: string): Promise<boolean>;
  /** The full path of an executable on PATH, or undefined. */
  onPath(name: string): string | undefined;
  /** Whether this path is an executable file. */
  isExecutable(file: string): boolean;
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

/** Where pipx and uv put the scripts they install (both default to ~/.local/bin). */
export function toolBinDirs(home: string | undefined, env: Readonly<Record<string, string | undefined>>): string[] {
  const dirs = [env.PIPX_BIN_DIR, env.UV_TOOL_BIN_DIR, env.XDG_BIN_HOME, home ? path.join(home, ".local", "bin") : undefined];
  return dirs.filter((d, i): d is string => !!d && dirs.indexOf(d) === i);
}

function venvBin(venv: string, platform: NodeJS.Platform): { script: string; python: string } {
  return platform === "win32"
    ? { script: path.win32.join(venv, "Scripts", `${SERVER_SCRIPT}.exe`), python: path.win32.join(venv, "Scripts", "python.exe") }
    : { script: path.posix.join(venv, "bin", SERVER_SCRIPT), python: path.posix.join(venv, "bin", "python") };
}

function hasDirectory(program: string): boolean {
  return program.includes("/") || program.includes("\\");
}

/** `~/x` for paths under the home directory: the places tried are read by a person. */
function short(file: string, home: string | undefined): string {
  return home && file.startsWith(home + path.sep) ? `~${file.slice(home.length)}` : file;
}

/** Pick the server's command line; `problem` says what to fix when there is none to run. */
export async function chooseServerExec(inputs: ExecInputs, probes: ExecProbes): Promise<ExecChoice> {
  const notes: string[] = [];
  const platform = inputs.platform ?? process.platform;
  const env = inputs.env ?? {};
  const home = inputs.home;
  const exists = (program: string) => (hasDirectory(program) ? probes.isExecutable(program) : probes.onPath(program) !== undefined);

  if (inputs.serverCommand.length > 0) {
    const [command, ...args] = inputs.serverCommand;
    const exec: ServerExec = { command, args, source: "serverCommand" };
    if (exists(command)) return { exec, notes };
    const where = hasDirectory(command) ? "which is not an executable file" : "which is not on the extension host's PATH";
    return {
      exec,
      notes,
      setting: "serverCommand",
      problem:
        `ctxLsp.serverCommand runs ${command}, ${where}. Correct ctxLsp.serverCommand, or remove it to let the ` +
        "extension find ctx-lsp in the workspace's .venv, the Python extension's interpreter, PATH or pipx's bin directory.",
    };
  }

  if (inputs.interpreter) {
    const exec: ServerExec = { command: inputs.interpreter, args: [...MODULE_ARGS], source: "interpreter" };
    if (!exists(inputs.interpreter)) {
      return {
        exec,
        notes,
        setting: "interpreter",
        problem: `ctxLsp.interpreter is ${inputs.interpreter}, which is not an executable file. Correct it, or remove it to let the extension look for ctx-lsp.`,
      };
    }
    if (!(await probes.hasCtxLsp(inputs.interpreter))) {
      return {
        exec,
        notes,
        setting: "interpreter",
        problem:
          `ctxLsp.interpreter ${inputs.interpreter} cannot import ctx_lsp: install it there ` +
          `(${inputs.interpreter} -m pip install ctx-lsp), or change ctxLsp.interpreter.`,
      };
    }
    return { exec, notes };
  }

  const tried: string[] = [];
  if (inputs.activePython) {
    if (await probes.hasCtxLsp(inputs.activePython)) {
      return { exec: { command: inputs.activePython, args: [...MODULE_ARGS], source: "pythonExtension" }, notes };
    }
    notes.push(`the Python extension's interpreter ${inputs.activePython} cannot import ctx_lsp`);
    tried.push(`the Python extension's interpreter (${short(inputs.activePython, home)})`);
  }

  for (const folder of inputs.workspaceFolders ?? []) {
    for (const name of WORKSPACE_VENVS) {
      const bin = venvBin(platform === "win32" ? path.win32.join(folder, name) : path.posix.join(folder, name), platform);
      if (probes.isExecutable(bin.script)) {
        return { exec: { command: bin.script, args: [...SERVE_ARGS], source: "workspaceVenv" }, notes };
      }
      if (probes.isExecutable(bin.python)) {
        if (await probes.hasCtxLsp(bin.python)) {
          return { exec: { command: bin.python, args: [...MODULE_ARGS], source: "workspaceVenv" }, notes };
        }
        notes.push(`${bin.python} cannot import ctx_lsp`);
      }
    }
    tried.push(`${WORKSPACE_VENVS.map((v) => path.join(short(folder, home), v)).join(" and ")}`);
  }

  const onPath = probes.onPath(SERVER_SCRIPT);
  if (onPath) return { exec: { command: onPath, args: [...SERVE_ARGS], source: "path" }, notes };
  tried.push(`${SERVER_SCRIPT} on PATH`);

  for (const dir of toolBinDirs(home, env)) {
    const script = path.join(dir, platform === "win32" ? `${SERVER_SCRIPT}.exe` : SERVER_SCRIPT);
    if (probes.isExecutable(script)) return { exec: { command: script, args: [...SERVE_ARGS], source: "pipx" }, notes };
    tried.push(short(script, home));
  }

  const pythons = platform === "win32" ? ["python", "py"] : [...PATH_PYTHONS];
  for (const name of pythons) {
    const python = probes.onPath(name);
    if (python && (await probes.hasCtxLsp(python))) {
      return { exec: { command: python, args: [...MODULE_ARGS], source: "pythonOnPath" }, notes };
    }
  }
  tried.push(`python -m ctx_lsp with ${pythons.join(" and ")} on PATH`);

  return {
    exec: { command: SERVER_SCRIPT, args: [...SERVE_ARGS], source: "path" },
    notes,
    setting: "interpreter",
    problem:
      `ctx-lsp was not found. Tried: ${tried.join("; ")}. Install it into the workspace's .venv ` +
      "(.venv/bin/python -m pip install ctx-lsp) or with pipx install ctx-lsp, " +
      "or set ctxLsp.interpreter to a Python that has it, or ctxLsp.serverCommand to the command that runs it.",
  };
}

/** Whether `file` is an executable regular file (on Windows: a file). */
export function isExecutableFile(file: string, platform: NodeJS.Platform = process.platform): boolean {
  try {
    if (!fs.statSync(file).isFile()) return false;
    if (platform !== "win32") fs.accessSync(file, fs.constants.X_OK);
    return true;
  } catch {
    return false;
  }
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
      if (isExecutableFile(candidate, platform)) return candidate;
    }
  }
  return undefined;
}
