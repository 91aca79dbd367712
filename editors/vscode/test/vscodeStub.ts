/**
 * A hand-written stand-in for the `vscode` module, enough for the bundled extension and
 * vscode-languageclient to activate, start the real server and run every command in plain
 * Node. It records what the extension shows (messages, documents, the status bar item, the
 * clipboard) and answers quick picks and input boxes from the test.
 *
 * Members it does not define are answered by an inert auto-stub and listed in `unknown`,
 * so a test can see which parts of the API a run touched that the stub does not model.
 */
import * as fs from "node:fs";
import Module from "node:module";
import * as path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

type Listener<T> = (value: T) => unknown;

export class EventEmitter<T> {
  private readonly listeners = new Set<Listener<T>>();
  readonly event = (listener: Listener<T>, thisArg?: unknown, disposables?: Disposable[]): Disposable => {
    const bound: Listener<T> = (v) => listener.call(thisArg, v);
    this.listeners.add(bound);
    const d = new Disposable(() => this.listeners.delete(bound));
    disposables?.push(d);
    return d;
  };
  fire(value: T): void {
    for (const l of [...this.listeners]) l(value);
  }
  dispose(): void {
    this.listeners.clear();
  }
}

export class Disposable {
  constructor(private readonly callOnDispose?: () => unknown) {}
  static from(...items: { dispose(): unknown }[]): Disposable {
    return new Disposable(() => items.forEach((d) => d?.dispose?.()));
  }
  dispose(): void {
    this.callOnDispose?.();
  }
}

export class Uri {
  private constructor(
    readonly scheme: string,
    readonly authority: string,
    readonly path: string,
    readonly query = "",
    readonly fragment = "",
  ) {}
  static parse(value: string): Uri {
    const url = new URL(value);
    return new Uri(url.protocol.replace(/:$/, ""), url.host, decodeURIComponent(url.pathname), url.search.replace(/^\?/, ""), url.hash.replace(/^#/, ""));
  }
  static file(fsPath: string): Uri {
    return Uri.parse(pathToFileURL(fsPath).href);
  }
  get fsPath(): string {
    return this.scheme === "file" ? fileURLToPath(this.toString()) : this.path;
  }
  with(change: { scheme?: string; path?: string }): Uri {
    return new Uri(change.scheme ?? this.scheme, this.authority, change.path ?? this.path, this.query, this.fragment);
  }
  toString(): string {
    if (this.scheme === "file") return pathToFileURL(this.path).href;
    return `${this.scheme}:${this.authority ? `//${this.authority}` : ""}${this.path}`;
  }
  toJSON(): unknown {
    return { scheme: this.scheme, path: this.path, external: this.toString() };
  }
}

export class Position {
  constructor(
    readonly line: number,
    readonly character: number,
  ) {}
}

export class Range {
  readonly start: Position;
  readonly end: Position;
  constructor(a: Position | number, b: Position | number, c?: number, d?: number) {
    this.start = typeof a === "number" ? new Position(a, b as number) : a;
    this.end = typeof a === "number" ? new Position(c ?? 0, d ?? 0) : (b as Position);
  }
  get isEmpty(): boolean {
    return this.start.line === this.end.line && this.start.character === this.end.character;
  }
}

export class Selection extends Range {
  get active(): Position {
    return this.end;
  }
  get isSingleLine(): boolean {
    return this.start.line === this.end.line;
  }
}

export class CancellationError extends Error {}
export class ThemeColor {
  constructor(readonly id: string) {}
}
export class CancellationTokenSource {
  private readonly emitter = new EventEmitter<void>();
  readonly token = { isCancellationRequested: false, onCancellationRequested: this.emitter.event };
  cancel(): void {
    this.token.isCancellationRequested = true;
    this.emitter.fire();
  }
  dispose(): void {
    this.emitter.dispose();
  }
}

export class FakeChannel {
  readonly lines: string[] = [];
  logLevel = 3;
  readonly onDidChangeLogLevel = new EventEmitter<number>().event;
  shown = 0;
  constructor(readonly name: string) {}
  append(text: string): void {
    this.lines.push(text);
  }
  appendLine(text: string): void {
    this.lines.push(text);
  }
  replace(text: string): void {
    this.lines.length = 0;
    this.lines.push(text);
  }
  clear(): void {
    this.lines.length = 0;
  }
  show(): void {
    this.shown++;
  }
  hide(): void {}
  dispose(): void {}
  trace(m: string): void {
    this.lines.push(`[trace] ${m}`);
  }
  debug(m: string): void {
    this.lines.push(`[debug] ${m}`);
  }
  info(m: string): void {
    this.lines.push(`[info] ${m}`);
  }
  warn(m: string): void {
    this.lines.push(`[warn] ${m}`);
  }
  error(m: unknown): void {
    this.lines.push(`[error] ${m instanceof Error ? m.message : String(m)}`);
  }
  get text(): string {
    return this.lines.join("\n");
  }
}

export interface Shown {
  level: "info" | "warning" | "error";
  message: string;
  items: string[];
}

export interface StubOptions {
  /** Settings by full key (`ctxLsp.interpreter`), as the user set them. */
  settings?: Record<string, unknown>;
  folders?: string[];
  /** Contributed defaults: package.json `contributes.configuration.properties`. */
  defaults?: Record<string, { default?: unknown }>;
  /** Other installed extensions by id, e.g. a fake `ms-python.python`. */
  extensions?: Record<string, { isActive: boolean; exports: unknown; activate(): Promise<unknown> }>;
}

export interface VscodeStub {
  api: Record<string, unknown>;
  commands: Map<string, (...args: unknown[]) => unknown>;
  channels: FakeChannel[];
  statusItems: Record<string, unknown>[];
  shown: Shown[];
  documents: { language?: string; content?: string }[];
  clipboard: string[];
  unknown: Set<string>;
  settings: Record<string, unknown>;
  /** Answers for the next quick picks / input boxes (undefined = dismissed). */
  pickAnswers: ((items: unknown[]) => unknown)[];
  inputAnswers: (string | undefined)[];
  messageAnswers: (string | undefined)[];
  fireConfigurationChange(section: string): void;
  channel(name: string): FakeChannel | undefined;
}

function autoStub(name: string, unknown: Set<string>): unknown {
  const fn = function () {
    return autoStub(`${name}()`, unknown);
  };
  return new Proxy(fn, {
    get(_t, prop) {
      if (prop === "then") return undefined;
      if (prop === Symbol.toPrimitive) return () => name;
      if (prop === "dispose") return () => undefined;
      const key = `${name}.${String(prop)}`;
      unknown.add(key);
      return autoStub(key, unknown);
    },
    construct() {
      return autoStub(`new ${name}`, unknown) as object;
    },
  });
}

/** Wrap a namespace so members it does not define are auto-stubbed and recorded. */
function recorded<T extends object>(name: string, target: T, unknown: Set<string>): T {
  return new Proxy(target, {
    get(t, prop, receiver) {
      if (prop in t || typeof prop === "symbol") return Reflect.get(t, prop, receiver);
      const key = `${name}.${String(prop)}`;
      unknown.add(key);
      return autoStub(key, unknown);
    },
  });
}

export function createVscodeStub(options: StubOptions = {}): VscodeStub {
  const unknown = new Set<string>();
  const settings: Record<string, unknown> = { ...(options.settings ?? {}) };
  const defaults = options.defaults ?? {};
  const commands = new Map<string, (...args: unknown[]) => unknown>();
  const channels: FakeChannel[] = [];
  const statusItems: Record<string, unknown>[] = [];
  const shown: Shown[] = [];
  const documents: { language?: string; content?: string }[] = [];
  const clipboard: string[] = [];
  const pickAnswers: ((items: unknown[]) => unknown)[] = [];
  const inputAnswers: (string | undefined)[] = [];
  const messageAnswers: (string | undefined)[] = [];
  const configurationChanged = new EventEmitter<{ affectsConfiguration(section: string): boolean }>();
  const event = () => new EventEmitter<unknown>().event;
  const folders = (options.folders ?? []).map((p, index) => ({ uri: Uri.file(p), name: path.basename(p), index }));

  const configuration = (section?: string) => {
    const full = (key: string) => (section ? `${section}.${key}` : key);
    return {
      get(key: string, fallback?: unknown) {
        const k = full(key);
        if (k in settings) return settings[k];
        if (k in defaults) return defaults[k].default;
        return fallback;
      },
      has(key: string) {
        return full(key) in settings || full(key) in defaults;
      },
      inspect(key: string) {
        const k = full(key);
        return { key: k, defaultValue: defaults[k]?.default, globalValue: settings[k] };
      },
      update: async () => undefined,
    };
  };

  const message =
    (level: Shown["level"]) =>
    async (text: string, ...items: unknown[]) => {
      const labels = items.filter((i): i is string => typeof i === "string");
      shown.push({ level, message: text, items: labels });
      return messageAnswers.shift();
    };

  const window = recorded(
    "window",
    {
      activeTextEditor: undefined,
      visibleTextEditors: [],
      tabGroups: { all: [], onDidChangeTabs: event(), onDidChangeTabGroups: event() },
      onDidChangeActiveTextEditor: event(),
      onDidChangeVisibleTextEditors: event(),
      onDidChangeTextEditorSelection: event(),
      createOutputChannel(name: string) {
        const channel = new FakeChannel(name);
        channels.push(channel);
        return channel;
      },
      createStatusBarItem(id: string, alignment: number, priority: number) {
        const history: string[] = [];
        let text = "";
        const item: Record<string, unknown> = { id, alignment, priority, visible: false, history };
        Object.defineProperty(item, "text", {
          get: () => text,
          set: (value: string) => {
            text = value;
            if (history[history.length - 1] !== value) history.push(value);
          },
        });
        item.show = () => (item.visible = true);
        item.hide = () => (item.visible = false);
        item.dispose = () => (item.visible = false);
        statusItems.push(item);
        return item;
      },
      showInformationMessage: message("info"),
      showWarningMessage: message("warning"),
      showErrorMessage: message("error"),
      async showQuickPick(items: unknown[] | Promise<unknown[]>) {
        const answer = pickAnswers.shift();
        return answer ? answer(await items) : undefined;
      },
      async showInputBox(opts: { validateInput?: (v: string) => unknown }) {
        const answer = inputAnswers.shift();
        if (answer !== undefined && opts?.validateInput && (await opts.validateInput(answer))) return undefined;
        return answer;
      },
      async withProgress(_opts: unknown, task: (progress: unknown, token: unknown) => unknown) {
        return task({ report() {} }, new CancellationTokenSource().token);
      },
      async showTextDocument(doc: unknown) {
        return { document: doc };
      },
    },
    unknown,
  );

  const workspace = recorded(
    "workspace",
    {
      get workspaceFolders() {
        return folders.length ? folders : undefined;
      },
      isTrusted: true,
      textDocuments: [],
      notebookDocuments: [],
      getConfiguration: configuration,
      getWorkspaceFolder: (uri: Uri) => folders.find((f) => uri.toString().startsWith(f.uri.toString())),
      onDidChangeConfiguration: configurationChanged.event,
      onDidGrantWorkspaceTrust: event(),
      onDidChangeWorkspaceFolders: event(),
      onDidOpenTextDocument: event(),
      onDidChangeTextDocument: event(),
      onDidCloseTextDocument: event(),
      onDidSaveTextDocument: event(),
      onWillSaveTextDocument: event(),
      onDidOpenNotebookDocument: event(),
      onDidChangeNotebookDocument: event(),
      onDidCloseNotebookDocument: event(),
      onDidSaveNotebookDocument: event(),
      onDidCreateFiles: event(),
      onDidRenameFiles: event(),
      onDidDeleteFiles: event(),
      onWillCreateFiles: event(),
      onWillRenameFiles: event(),
      onWillDeleteFiles: event(),
      createFileSystemWatcher: () => ({
        onDidCreate: event(),
        onDidChange: event(),
        onDidDelete: event(),
        dispose() {},
      }),
      async openTextDocument(arg: { language?: string; content?: string }) {
        documents.push(arg);
        return { uri: Uri.parse(`untitled:Untitled-${documents.length}`), languageId: arg.language, getText: () => arg.content ?? "" };
      },
    },
    unknown,
  );

  const api: Record<string, unknown> = {
    version: "1.91.0",
    EventEmitter,
    Disposable,
    Uri,
    Position,
    Range,
    Selection,
    CancellationError,
    CancellationTokenSource,
    ThemeColor,
    StatusBarAlignment: { Left: 1, Right: 2 },
    ProgressLocation: { SourceControl: 1, Window: 10, Notification: 15 },
    LogLevel: { Off: 0, Trace: 1, Debug: 2, Info: 3, Warning: 4, Error: 5 },
    TabInputText: class {},
    TabInputTextDiff: class {},
    TabInputNotebook: class {},
    TabInputCustom: class {},
    window,
    workspace,
    commands: recorded(
      "commands",
      {
        registerCommand(id: string, callback: (...args: unknown[]) => unknown) {
          if (commands.has(id)) throw new Error(`command '${id}' already exists`);
          commands.set(id, callback);
          return new Disposable(() => commands.delete(id));
        },
        async executeCommand(id: string, ...args: unknown[]) {
          return commands.get(id)?.(...args);
        },
      },
      unknown,
    ),
    languages: recorded(
      "languages",
      {
        match: () => 0,
        createDiagnosticCollection: () => ({ set() {}, delete() {}, clear() {}, forEach() {}, dispose() {} }),
      },
      unknown,
    ),
    extensions: recorded(
      "extensions",
      { getExtension: (id: string) => options.extensions?.[id], all: Object.values(options.extensions ?? {}) },
      unknown,
    ),
    env: recorded(
      "env",
      {
        appName: "Visual Studio Code",
        language: "en",
        clipboard: {
          async writeText(text: string) {
            clipboard.push(text);
          },
          async readText() {
            return clipboard[clipboard.length - 1] ?? "";
          },
        },
        openExternal: async () => true,
      },
      unknown,
    ),
  };

  return {
    api: recorded("vscode", api, unknown),
    commands,
    channels,
    statusItems,
    shown,
    documents,
    clipboard,
    unknown,
    settings,
    pickAnswers,
    inputAnswers,
    messageAnswers,
    fireConfigurationChange(section: string) {
      configurationChanged.fire({ affectsConfiguration: (s: string) => s === section || s.startsWith(`${section}.`) || section.startsWith(`${s}.`) });
    },
    channel(name: string) {
      return channels.find((c) => c.name === name);
    },
  };
}

export interface LoadedExtension {
  activate(ctx: unknown): Promise<void>;
  deactivate(): Promise<void>;
  /** Stop resolving `vscode` to the stub. */
  unload(): void;
}

/**
 * Load a fresh copy of the bundled extension with `vscode` resolved to `stub`, for as long
 * as it is loaded (a bundle may require lazily).
 */
export function loadExtension(bundle: string, stub: VscodeStub): LoadedExtension {
  const mod = Module as unknown as { _load: (request: string, ...rest: unknown[]) => unknown };
  const original = mod._load;
  mod._load = function (request: string, ...rest: unknown[]) {
    if (request === "vscode") return stub.api;
    return original.call(this, request, ...rest);
  };
  const resolved = require.resolve(bundle);
  delete require.cache[resolved];
  const ext = require(resolved);
  return {
    activate: ext.activate,
    deactivate: ext.deactivate,
    unload() {
      mod._load = original;
      delete require.cache[resolved];
    },
  };
}

/** A minimal ExtensionContext. */
export function extensionContext(root: string): Record<string, unknown> {
  const memento = () => {
    const data = new Map<string, unknown>();
    return {
      get: (key: string, fallback?: unknown) => (data.has(key) ? data.get(key) : fallback),
      update: async (key: string, value: unknown) => void data.set(key, value),
      keys: () => [...data.keys()],
    };
  };
  return {
    subscriptions: [] as { dispose(): unknown }[],
    workspaceState: memento(),
    globalState: memento(),
    extensionPath: root,
    extensionUri: Uri.file(root),
    asAbsolutePath: (rel: string) => path.join(root, rel),
  };
}

export function contributedDefaults(packageRoot: string): Record<string, { default?: unknown }> {
  return JSON.parse(fs.readFileSync(path.join(packageRoot, "package.json"), "utf8")).contributes.configuration.properties;
}

/** A fake Python extension whose active interpreter the test sets and changes. */
export function fakePythonExtension(initial: string): {
  extension: { isActive: boolean; exports: unknown; activate(): Promise<unknown> };
  setInterpreter(python: string): void;
  asked: number;
} {
  let current = initial;
  const changed = new EventEmitter<unknown>();
  const state = { asked: 0 };
  const exports = {
    ready: Promise.resolve(),
    environments: {
      getActiveEnvironmentPath: () => {
        state.asked++;
        return { id: current, path: current };
      },
      resolveEnvironment: async (env: { path: string }) => ({ executable: { uri: Uri.file(env.path) } }),
      onDidChangeActiveEnvironmentPath: changed.event,
    },
  };
  const extension = { isActive: false, exports, activate: async () => ((extension.isActive = true), exports) };
  return {
    extension,
    setInterpreter(python: string) {
      current = python;
      changed.fire({ id: python, path: python });
    },
    get asked() {
      return state.asked;
    },
  };
}
