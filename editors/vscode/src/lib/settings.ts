/**
 * `ctxLsp.*` settings → the server's configuration (`initializationOptions` and
 * `workspace/didChangeConfiguration`), and which setting changes need a restart.
 *
 * Only settings the user set explicitly are sent. The server merges, later wins:
 * defaults → `pyproject.toml` / `ctx-lsp.toml` → what the editor sends; sending VS Code's
 * defaults would silently override a project's own config files.
 *
 * Values are checked here as well as by VS Code's schema (which only warns): the server
 * answers a value of the wrong type by dropping the *whole* client configuration, so one
 * bad value is left out with a warning instead.
 */

/** The settings section: `ctxLsp.<key>`. */
export const SECTION = "ctxLsp";

/** Returns a setting's explicitly set value (user, workspace or folder), else undefined. */
export type SettingReader = (key: string) => unknown;

type Kind =
  | "string"
  | "choice"
  | "boolean"
  | "positiveInt"
  | "nonNegativeInt"
  | "stringList"
  | "stringListMap"
  | "tokenMap"
  | "agents"
  | "path";

export interface ServerSetting {
  /** Key under `ctxLsp.` in VS Code. */
  readonly setting: string;
  /** The server's config key path, snake_case as in `ctx-lsp.toml` (ctx_lsp/config.py). */
  readonly server: readonly string[];
  readonly kind: Kind;
  readonly choices?: readonly string[];
  /** A valid value: the tests send every key with its example to a real server. */
  readonly example?: unknown;
}

/** Every setting that is server configuration, with the server key it becomes. */
export const SERVER_SETTINGS: readonly ServerSetting[] = [
  { setting: "tokenizer", server: ["tokenizer"], kind: "choice", choices: ["o200k_base", "cl100k_base"], example: "cl100k_base" },
  { setting: "defaultContextWindowType", server: ["default_context_window_type"], kind: "string", example: "token-efficient" },
  {
    setting: "agents",
    server: ["agents"],
    kind: "agents",
    example: { reviewer: { budget: 3000 }, "release-notes": { tier: 1, budget: 2000, docsCap: 500 } },
  },
  { setting: "modelLimits", server: ["model_limits"], kind: "tokenMap", example: { "gpt-4o": 64000 } },
  { setting: "artifactsBudget", server: ["artifacts_budget"], kind: "positiveInt", example: 3000 },
  { setting: "index.ignore", server: ["index", "ignore"], kind: "stringList", example: ["generated/"] },
  { setting: "index.maxFileBytes", server: ["index", "max_file_bytes"], kind: "positiveInt", example: 200000 },
  { setting: "index.respectGitignore", server: ["index", "respect_gitignore"], kind: "boolean", example: true },
  { setting: "index.watch", server: ["index", "watch"], kind: "boolean", example: false },
  { setting: "index.workers", server: ["index", "workers"], kind: "nonNegativeInt", example: 1 },
  { setting: "index.cache", server: ["index", "cache"], kind: "boolean", example: false },
  { setting: "docs.requireTopic", server: ["docs", "require_topic"], kind: "boolean", example: true },
  { setting: "docs.allowFullLibrary", server: ["docs", "allow_full_library"], kind: "stringList", example: ["pygls"] },
  { setting: "docs.folders", server: ["docs", "folders"], kind: "stringListMap", example: { mylib: ["docs/mylib"] } },
  // No example: it must name a real interpreter (the tests pass their own).
  { setting: "python.interpreter", server: ["python", "interpreter"], kind: "path" },
];

/** Settings the extension itself reads (they are never sent to the server). */
export const CLIENT_SETTINGS: readonly string[] = [
  "serverCommand",
  "interpreter",
  "trace.server",
  "bundle.budget",
  "bundle.profile",
  "bundle.format",
  "bundle.includeVisibleEditors",
];

/** Settings that may run a program; read from user settings only in untrusted workspaces. */
export const RESTRICTED_SETTINGS: readonly string[] = ["serverCommand", "interpreter", "python.interpreter"];

export interface OptionsContext {
  /** The Python extension's active interpreter: the docs environment when none is set. */
  activePython?: string;
  /** Expands `${workspaceFolder}`, `~`, … in path settings (see serverExec.expandVariables). */
  expand?: (value: string) => string;
}

export interface BuiltOptions {
  options: Record<string, unknown>;
  /** One line per value left out, naming the setting and what was wrong. */
  warnings: string[];
}

const MAX_TOKENS = 2_000_000;

type Checked = { ok: true; value: unknown } | { ok: false; problem: string };

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function isInt(value: unknown, min: number): value is number {
  return typeof value === "number" && Number.isInteger(value) && value >= min;
}

function describe(value: unknown): string {
  return JSON.stringify(value) ?? String(value);
}

function checkAgents(value: unknown): Checked {
  if (!isRecord(value)) return { ok: false, problem: `expected an object of agent name → {tier, budget, docsCap}, got ${describe(value)}` };
  const agents: Record<string, Record<string, number>> = {};
  for (const [name, row] of Object.entries(value)) {
    if (!isRecord(row)) return { ok: false, problem: `${name}: expected {tier, budget, docsCap}, got ${describe(row)}` };
    const out: Record<string, number> = {};
    for (const [key, field] of Object.entries(row)) {
      const serverKey = key === "docsCap" || key === "docs_cap" ? "docs_cap" : key;
      if (serverKey === "tier") {
        if (!isInt(field, 1) || field > 3) return { ok: false, problem: `${name}.tier: expected 1, 2 or 3, got ${describe(field)}` };
      } else if (serverKey === "budget" || serverKey === "docs_cap") {
        if (!isInt(field, 1) || field > MAX_TOKENS) return { ok: false, problem: `${name}.${key}: expected a positive token count, got ${describe(field)}` };
      } else {
        return { ok: false, problem: `${name}.${key}: unknown field; use tier, budget or docsCap` };
      }
      out[serverKey] = field;
    }
    agents[name] = out;
  }
  return { ok: true, value: agents };
}

function check(spec: ServerSetting, value: unknown, ctx: OptionsContext): Checked {
  switch (spec.kind) {
    case "string":
      return typeof value === "string" && value.trim() !== ""
        ? { ok: true, value: value.trim() }
        : { ok: false, problem: `expected a non-empty string, got ${describe(value)}` };
    case "choice":
      return typeof value === "string" && (spec.choices ?? []).includes(value)
        ? { ok: true, value }
        : { ok: false, problem: `expected one of ${(spec.choices ?? []).join(", ")}, got ${describe(value)}` };
    case "boolean":
      return typeof value === "boolean" ? { ok: true, value } : { ok: false, problem: `expected true or false, got ${describe(value)}` };
    case "positiveInt":
      return isInt(value, 1) ? { ok: true, value } : { ok: false, problem: `expected a positive integer, got ${describe(value)}` };
    case "nonNegativeInt":
      return isInt(value, 0) ? { ok: true, value } : { ok: false, problem: `expected 0 or a positive integer, got ${describe(value)}` };
    case "stringList":
      return Array.isArray(value) && value.every((v) => typeof v === "string")
        ? { ok: true, value: [...value] }
        : { ok: false, problem: `expected a list of strings, got ${describe(value)}` };
    case "stringListMap":
      return isRecord(value) && Object.values(value).every((v) => Array.isArray(v) && v.every((s) => typeof s === "string"))
        ? { ok: true, value: { ...value } }
        : { ok: false, problem: `expected an object of name → list of strings, got ${describe(value)}` };
    case "tokenMap":
      return isRecord(value) && Object.values(value).every((v) => isInt(v, 1))
        ? { ok: true, value: { ...value } }
        : { ok: false, problem: `expected an object of name → positive token count, got ${describe(value)}` };
    case "agents":
      return checkAgents(value);
    case "path": {
      if (typeof value !== "string") return { ok: false, problem: `expected a path, got ${describe(value)}` };
      const expanded = (ctx.expand ?? ((s: string) => s))(value.trim());
      return { ok: true, value: expanded };
    }
  }
}

function setPath(target: Record<string, unknown>, path: readonly string[], value: unknown): void {
  let node = target;
  for (const key of path.slice(0, -1)) {
    if (!isRecord(node[key])) node[key] = {};
    node = node[key] as Record<string, unknown>;
  }
  node[path[path.length - 1]] = value;
}

/** The server configuration the current settings ask for. */
export function buildInitializationOptions(read: SettingReader, ctx: OptionsContext = {}): BuiltOptions {
  const options: Record<string, unknown> = {};
  const warnings: string[] = [];
  for (const spec of SERVER_SETTINGS) {
    const raw = read(spec.setting);
    if (raw === undefined || raw === null) continue;
    const checked = check(spec, raw, ctx);
    if (!checked.ok) {
      warnings.push(`${SECTION}.${spec.setting}: ${checked.problem}; not sent to the server`);
      continue;
    }
    if (spec.kind === "path" && checked.value === "") continue;
    setPath(options, spec.server, checked.value);
  }
  const python = options.python as Record<string, unknown> | undefined;
  if (!python?.interpreter && ctx.activePython) {
    setPath(options, ["python", "interpreter"], ctx.activePython);
  }
  return { options, warnings };
}

/** The `workspace/didChangeConfiguration` params: the server reads the `ctxLsp` section. */
export function configurationChange(options: Record<string, unknown>): { settings: Record<string, unknown> } {
  return { settings: { [SECTION]: options } };
}

export interface BundleSettings {
  budget?: number;
  profile?: string;
  format: "markdown" | "xml";
  includeVisibleEditors: boolean;
}

export interface ClientSettings {
  serverCommand: string[];
  interpreter: string;
  bundle: BundleSettings;
  /** The server does not watch the disk (`index.watch: false`): VS Code's watcher reports changes. */
  editorWatchesFiles: boolean;
}

/**
 * What the extension itself needs. `get` returns the effective value (defaults included);
 * anything of the wrong type falls back to the default.
 */
export function readClientSettings(get: (key: string) => unknown): ClientSettings {
  const command = get("serverCommand");
  const interpreter = get("interpreter");
  const budget = get("bundle.budget");
  const profile = get("bundle.profile");
  const format = get("bundle.format");
  const visible = get("bundle.includeVisibleEditors");
  return {
    serverCommand: Array.isArray(command) ? command.filter((s): s is string => typeof s === "string" && s !== "") : [],
    interpreter: typeof interpreter === "string" ? interpreter.trim() : "",
    bundle: {
      budget: isInt(budget, 1) && budget <= MAX_TOKENS ? budget : undefined,
      profile: typeof profile === "string" && profile.trim() !== "" ? profile.trim() : undefined,
      format: format === "xml" ? "xml" : "markdown",
      includeVisibleEditors: visible !== false,
    },
    editorWatchesFiles: get("index.watch") === false,
  };
}

/** What a running server was started with. */
export interface LaunchSettings {
  /** The resolved command line (see serverExec.describeExec). */
  command: string;
  editorWatchesFiles: boolean;
  options: Record<string, unknown>;
}

/**
 * Why the server must restart to take `wanted`, or undefined if a configuration change
 * notification is enough.
 *
 * The server applies a change as `{...initializationOptions, ...settings}` (a shallow
 * merge), so a top-level key that was sent at start-up and is now unset would keep its
 * start-up value until a restart.
 */
export function restartReason(running: LaunchSettings, wanted: LaunchSettings): string | undefined {
  if (running.command !== wanted.command) return `the server command is now ${wanted.command}`;
  if (running.editorWatchesFiles !== wanted.editorWatchesFiles) return `${SECTION}.index.watch changed`;
  const removed = Object.keys(running.options).filter((key) => !(key in wanted.options));
  if (removed.length > 0) {
    return `settings were removed (${removed.join(", ")}); the server keeps its start-up values for them until it restarts`;
  }
  return undefined;
}
