/**
 * The VS Code side of ctx-lsp: starts `ctx-lsp serve`, keeps its configuration in step with
 * the `ctxLsp.*` settings, shows indexing and the last bundle's budget in the status bar,
 * and offers the commands (status, copy a bundle for an agent, explain it, show a symbol,
 * reindex, prewarm docs).
 *
 * Decisions live in `lib/` (no `vscode` import, tested in plain Node); this file wires them
 * to the editor.
 */
import * as os from "node:os";
import * as readline from "node:readline";
import * as vscode from "vscode";
import {
  DidChangeConfigurationNotification,
  ExecuteCommandRequest,
  type Executable,
  LanguageClient,
  type LanguageClientOptions,
  ResponseError,
  RevealOutputChannelOn,
  State,
} from "vscode-languageclient/node";

import { agentPickItems, agentTable, buildBundleParams, bundleMessage, renderExplanation } from "./lib/bundle";
import { CLIENT_ID, CLIENT_NAME, clientOptionsSpec, StderrLevels } from "./lib/client";
import { COMMANDS } from "./lib/commands";
import { documentName } from "./lib/documents";
import { hasCtxLsp } from "./lib/probe";
import {
  type BundleResult,
  ERROR_CODES,
  type Explanation,
  METHODS,
  type PrewarmResult,
  SERVER_COMMANDS,
  type StatusResult,
  type SymbolResult,
} from "./lib/protocol";
import { chooseServerExec, describeExec, expandVariables, type ExecChoice, findOnPath, isExecutableFile } from "./lib/serverExec";
import {
  buildInitializationOptions,
  type BuiltOptions,
  type ClientSettings,
  configurationChange,
  type LaunchSettings,
  readClientSettings,
  RESTRICTED_SETTINGS,
  restartReason,
  SECTION,
} from "./lib/settings";
import { FIRST_INDEX_GRACE_MS, formatCount, renderStatus, StatusBarModel } from "./lib/status";
import {
  pickedMatchParams,
  renderSymbolMatches,
  SYMBOL_NAME_PATTERN,
  symbolParams,
  symbolPickItems,
  validateSymbolName,
} from "./lib/symbol";
import { activePythonInterpreter, onDidChangePythonInterpreter } from "./python";

const LAST_AGENT_KEY = "ctxLsp.lastAgent";
/** URI scheme of the read-only documents the commands open (never synced to the server). */
const DOCUMENT_SCHEME = "ctx-lsp";
const LAST_QUERY_KEY = "ctxLsp.lastQuery";

/** Everything one start of the server is decided from. */
interface Launch {
  folder?: vscode.WorkspaceFolder;
  choice: ExecChoice;
  built: BuiltOptions;
  client: ClientSettings;
  settings: LaunchSettings;
}

class CtxLspExtension implements vscode.Disposable {
  private client: LanguageClient | undefined;
  private clientDisposables: vscode.Disposable[] = [];
  private running: LaunchSettings | undefined;
  private lastSent = "";
  private failure = "";
  private queue: Promise<void> = Promise.resolve();
  private readonly model = new StatusBarModel();
  private readonly item: vscode.StatusBarItem;
  private readonly log: vscode.LogOutputChannel;
  private readonly statusChannel: vscode.OutputChannel;
  private readonly documents = new ReadOnlyDocuments();

  constructor(private readonly context: vscode.ExtensionContext) {
    this.log = vscode.window.createOutputChannel(CLIENT_NAME, { log: true });
    this.statusChannel = vscode.window.createOutputChannel(`${CLIENT_NAME} status`);
    this.item = vscode.window.createStatusBarItem("ctxLsp.status", vscode.StatusBarAlignment.Right, 100);
    this.item.name = CLIENT_NAME;
    this.item.command = COMMANDS.showStatus;
    this.render();
    this.item.show();
  }

  dispose(): void {
    this.documents.dispose();
    this.item.dispose();
    this.statusChannel.dispose();
    this.log.dispose();
  }

  // ---------------------------------------------------------------- settings

  /** A setting's explicitly set value; restricted ones only from user settings when untrusted. */
  private explicit(config: vscode.WorkspaceConfiguration, key: string): unknown {
    const info = config.inspect(key);
    if (!info) return undefined;
    if (!vscode.workspace.isTrusted && RESTRICTED_SETTINGS.includes(key)) return info.globalValue;
    return info.workspaceFolderValue ?? info.workspaceValue ?? info.globalValue;
  }

  private effective(config: vscode.WorkspaceConfiguration, key: string): unknown {
    if (!vscode.workspace.isTrusted && RESTRICTED_SETTINGS.includes(key)) {
      const info = config.inspect(key);
      return info?.globalValue ?? info?.defaultValue;
    }
    return config.get(key);
  }

  private async resolveLaunch(): Promise<Launch> {
    const folder = vscode.workspace.workspaceFolders?.[0];
    const config = vscode.workspace.getConfiguration(SECTION, folder?.uri);
    const vars = { workspaceFolder: folder?.uri.fsPath, home: os.homedir(), env: process.env };
    const expand = (value: string) => expandVariables(value, vars);
    const client = readClientSettings((key) => this.effective(config, key));
    const activePython = await activePythonInterpreter(folder?.uri, this.log);
    const cwd = folder?.uri.fsPath;
    const choice = await chooseServerExec(
      {
        serverCommand: client.serverCommand.map(expand),
        interpreter: expand(client.interpreter),
        activePython,
        workspaceFolders: (vscode.workspace.workspaceFolders ?? []).filter((f) => f.uri.scheme === "file").map((f) => f.uri.fsPath),
        home: os.homedir(),
        env: process.env,
      },
      { hasCtxLsp: (python) => hasCtxLsp(python, cwd), onPath: (name) => findOnPath(name), isExecutable: (file) => isExecutableFile(file) },
    );
    const built = buildInitializationOptions((key) => this.explicit(config, key), { activePython, expand });
    return {
      folder,
      choice,
      built,
      client,
      settings: { command: describeExec(choice.exec), editorWatchesFiles: client.editorWatchesFiles, options: built.options },
    };
  }

  // ---------------------------------------------------------------- lifecycle

  /** Run lifecycle changes one at a time (settings and interpreter events can overlap). */
  enqueue(work: () => Promise<void>): Promise<void> {
    this.queue = this.queue.then(work).catch((err) => this.log.error(`ctx-lsp: ${errorMessage(err)}`));
    return this.queue;
  }

  private render(): void {
    const view = this.model.view();
    this.item.text = view.text;
    this.item.tooltip = view.tooltip;
    this.item.backgroundColor = view.warning ? new vscode.ThemeColor("statusBarItem.warningBackground") : undefined;
  }

  private fail(detail: string): void {
    this.failure = detail;
    this.model.setState("failed", detail);
    this.render();
  }

  private async start(): Promise<void> {
    if (!vscode.workspace.workspaceFolders?.length) {
      this.failure = "no folder is open";
      this.model.setState("stopped", this.failure);
      this.render();
      return;
    }
    this.model.setState("starting");
    this.render();
    const launch = await this.resolveLaunch();
    for (const note of launch.choice.notes) this.log.info(note);
    for (const warning of launch.built.warnings) this.log.warn(warning);
    if (launch.choice.problem) {
      this.log.error(launch.choice.problem);
      this.fail(launch.choice.problem);
      void this.offerFixes(launch.choice.problem, launch.choice.setting);
      return;
    }
    const { exec } = launch.choice;
    this.log.info(`starting ${launch.settings.command} (from ${exec.source}) in ${launch.folder?.uri.fsPath ?? "?"}`);
    const serverOptions: Executable = { command: exec.command, args: exec.args, options: { cwd: launch.folder?.uri.fsPath, env: process.env } };
    const spec = clientOptionsSpec(launch.built.options, launch.client.editorWatchesFiles);
    const disposables: vscode.Disposable[] = [];
    let fileEvents: vscode.FileSystemWatcher | undefined;
    if (spec.fileEventsGlob) {
      fileEvents = vscode.workspace.createFileSystemWatcher(spec.fileEventsGlob);
      disposables.push(fileEvents);
    }
    const clientOptions: LanguageClientOptions = {
      documentSelector: spec.documentSelector,
      initializationOptions: spec.initializationOptions,
      outputChannel: this.log,
      traceOutputChannel: this.log,
      revealOutputChannelOn: RevealOutputChannelOn.Never,
      synchronize: fileEvents ? { fileEvents } : undefined,
      middleware: {
        handleWorkDoneProgress: (token, params, next) => {
          this.model.onProgress(token, params);
          this.render();
          next(token, params);
        },
      },
      initializationFailedHandler: (error) => {
        this.log.error(`initialize failed: ${errorMessage(error)}`);
        return false;
      },
    };
    const levels = new StderrLevels();
    clientOptions.stdioOptions = {
      stdout: (input, channel) => lines(input, (line) => channel.info(line)),
      stderr: (input, channel) => lines(input, (line) => channel[levels.level(line)](line)),
    };
    const client = new LanguageClient(CLIENT_ID, CLIENT_NAME, serverOptions, clientOptions);
    disposables.push(
      client.onDidChangeState((event) => {
        if (event.newState === State.Running) {
          this.failure = "";
          this.model.setState("running");
          const overdue = setTimeout(() => {
            this.model.firstIndexOverdue();
            this.render();
          }, FIRST_INDEX_GRACE_MS);
          disposables.push({ dispose: () => clearTimeout(overdue) });
        } else if (event.newState === State.Starting) {
          this.model.setState("starting");
        } else {
          this.model.setState("stopped", this.failure || "the server stopped; see the ctx-lsp log");
        }
        this.render();
      }),
    );
    this.client = client;
    this.clientDisposables = disposables;
    this.running = launch.settings;
    this.lastSent = JSON.stringify(launch.built.options);
    try {
      await client.start();
    } catch (err) {
      // vscode-languageclient has already shown the failure (with "Go to output").
      const detail = `${launch.settings.command} did not start: ${errorMessage(err)}`;
      this.log.error(detail);
      this.fail(detail);
    }
  }

  async stop(): Promise<void> {
    const client = this.client;
    this.client = undefined;
    this.running = undefined;
    try {
      // dispose() stops a running server (shutdown, exit) and frees the client.
      await client?.dispose();
    } catch (err) {
      this.log.warn(`stopping the server: ${errorMessage(err)}`);
    } finally {
      for (const d of this.clientDisposables) d.dispose();
      this.clientDisposables = [];
    }
  }

  restart(reason: string): Promise<void> {
    return this.enqueue(async () => {
      this.log.info(`restarting the server: ${reason}`);
      await this.stop();
      await this.start();
    });
  }

  initialStart(): Promise<void> {
    return this.enqueue(() => this.start());
  }

  /** Settings, trust or the Python interpreter changed: reconfigure, or restart if needed. */
  settingsChanged(): Promise<void> {
    return this.enqueue(async () => {
      if (!this.client || !this.running || this.client.state !== State.Running) {
        await this.stop();
        await this.start();
        return;
      }
      const launch = await this.resolveLaunch();
      const reason = restartReason(this.running, launch.settings);
      if (reason) {
        this.log.info(`restarting the server: ${reason}`);
        await this.stop();
        await this.start();
        return;
      }
      const payload = JSON.stringify(launch.built.options);
      if (payload === this.lastSent) return;
      for (const warning of launch.built.warnings) this.log.warn(warning);
      await this.client.sendNotification(DidChangeConfigurationNotification.type, configurationChange(launch.built.options));
      this.lastSent = payload;
      this.log.info("sent the new configuration to the server");
    });
  }

  private async offerFixes(problem: string, setting?: string): Promise<void> {
    const choice = await vscode.window.showErrorMessage(`ctx-lsp: ${problem}`, "Open Settings", "Show Log");
    if (choice === "Open Settings") {
      await vscode.commands.executeCommand("workbench.action.openSettings", setting ? `${SECTION}.${setting}` : SECTION);
    }
    else if (choice === "Show Log") this.log.show();
  }

  // ---------------------------------------------------------------- requests

  private runningClient(): LanguageClient {
    const client = this.client;
    if (!client || client.state !== State.Running) {
      throw new UserError(`the server is not running${this.failure ? `: ${this.failure}` : ""}`);
    }
    return client;
  }

  private executeServerCommand<T>(command: string): Promise<T> {
    return this.runningClient().sendRequest(ExecuteCommandRequest.type, { command, arguments: [] }) as Promise<T>;
  }

  private openMarkdown(name: string, content: string): Promise<void> {
    return this.documents.show(name, content);
  }

  // ---------------------------------------------------------------- commands

  async showStatus(): Promise<void> {
    this.statusChannel.clear();
    if (!this.client || this.client.state !== State.Running) {
      this.statusChannel.appendLine(`ctx-lsp is not running${this.failure ? `: ${this.failure}` : "."}`);
      this.statusChannel.appendLine("Run 'ctx-lsp: Restart Server' after fixing it; 'ctx-lsp: Show Server Log' has the details.");
      this.statusChannel.show(true);
      return;
    }
    const status = await this.executeServerCommand<StatusResult>(SERVER_COMMANDS.status);
    this.statusChannel.appendLine(renderStatus(status, this.running?.command));
    this.statusChannel.show(true);
  }

  async copyBundle(): Promise<void> {
    const client = this.runningClient();
    const folder = vscode.workspace.workspaceFolders?.[0];
    const config = vscode.workspace.getConfiguration(SECTION, folder?.uri);
    const options = buildInitializationOptions((key) => this.explicit(config, key)).options;
    const lastAgent = this.context.workspaceState.get<string>(LAST_AGENT_KEY);
    const pick = await vscode.window.showQuickPick(agentPickItems(agentTable(options.agents), lastAgent), {
      title: "Copy Context Bundle for Agent",
      placeHolder: "Which agent is the bundle for? (sets its tier, budget and docs cap)",
      matchOnDescription: true,
    });
    if (!pick) return;
    const query = await vscode.window.showInputBox({
      title: `Context bundle for ${pick.agent}`,
      prompt: "The task, in words and identifiers (leave empty for the files being worked on only)",
      value: this.context.workspaceState.get<string>(LAST_QUERY_KEY) ?? "",
      ignoreFocusOut: true,
    });
    if (query === undefined) return;
    const editor = vscode.window.activeTextEditor;
    const settings = readClientSettings((key) => this.effective(config, key));
    const built = buildBundleParams({
      agent: pick.agent,
      query,
      active: editor
        ? { uri: editor.document.uri.toString(), line: editor.selection.active.line, character: editor.selection.active.character }
        : undefined,
      visible: vscode.window.visibleTextEditors.map((e) => e.document.uri.toString()),
      folders: (vscode.workspace.workspaceFolders ?? []).map((f) => f.uri.toString()),
      settings: settings.bundle,
    });
    if (built.skipped.length) this.log.info(`not in the bundle (outside the workspace folders): ${built.skipped.join(", ")}`);
    const result = await vscode.window.withProgress(
      { location: vscode.ProgressLocation.Window, title: `ctx: bundle for ${pick.agent}` },
      () => client.sendRequest<BundleResult>(METHODS.bundle, built.params),
    );
    await vscode.env.clipboard.writeText(result.text);
    this.model.onBundle(pick.agent, result);
    this.render();
    await this.context.workspaceState.update(LAST_AGENT_KEY, pick.agent);
    await this.context.workspaceState.update(LAST_QUERY_KEY, query);
    const action = await vscode.window.showInformationMessage(bundleMessage(pick.agent, result), "Explain", "Open");
    if (action === "Explain") await this.explainLastBundle();
    else if (action === "Open") await this.openMarkdown(`Bundle for ${pick.agent}`, result.text);
  }

  async explainLastBundle(): Promise<void> {
    let explanation: Explanation;
    try {
      explanation = await this.executeServerCommand<Explanation>(SERVER_COMMANDS.explain);
    } catch (err) {
      if (err instanceof ResponseError && err.code === ERROR_CODES.requestFailed) {
        throw new UserError(`${err.message} (run 'ctx-lsp: Copy Context Bundle for Agent…' first)`);
      }
      throw err;
    }
    await this.openMarkdown("Explain Last Bundle", renderExplanation(explanation));
  }

  async showSymbol(): Promise<void> {
    const client = this.runningClient();
    const editor = vscode.window.activeTextEditor;
    let initial = "";
    if (editor) {
      const { document, selection } = editor;
      if (!selection.isEmpty && selection.isSingleLine) initial = document.getText(selection).trim();
      else {
        const range = document.getWordRangeAtPosition(selection.active, SYMBOL_NAME_PATTERN);
        if (range) initial = document.getText(range);
      }
    }
    const name = await vscode.window.showInputBox({
      title: "Show Symbol",
      prompt: "A qualified name (Engine.bundle) or a bare one (bundle)",
      value: initial,
      validateInput: validateSymbolName,
    });
    if (!name) return;
    let result: SymbolResult;
    try {
      result = await client.sendRequest<SymbolResult>(METHODS.symbol, symbolParams(name));
    } catch (err) {
      if (err instanceof ResponseError && err.code === ERROR_CODES.methodNotFound) {
        throw new UserError("this ctx-lsp server has no ctx/symbol request; update ctx-lsp");
      }
      throw err;
    }
    let matches = result.matches ?? [];
    if (matches.length === 0) {
      void vscode.window.showInformationMessage(`ctx-lsp: no symbol named ${name.trim()}.${result.note ? ` ${result.note}` : ""}`);
      return;
    }
    if (result.ambiguous && matches.length > 1) {
      const total = result.total_matches ?? matches.length;
      const pick = await vscode.window.showQuickPick(symbolPickItems(matches), {
        title: `${name.trim()}: ${total} matches`,
        placeHolder: "Which one?",
        matchOnDescription: true,
        matchOnDetail: true,
      });
      if (!pick) return;
      matches = [matches[pick.index]];
      const again = pickedMatchParams(matches[0]);
      if (again) {
        const one = await client.sendRequest<SymbolResult>(METHODS.symbol, again);
        const same = (one.matches ?? []).find((m) => m.qualname === matches[0].qualname && m.path === matches[0].path);
        if (same) matches = [same];
      }
    }
    await this.openMarkdown(`Symbol ${matches.length === 1 ? matches[0].qualname : name.trim()}`, renderSymbolMatches(result, matches));
  }

  async reindex(): Promise<void> {
    const status = await this.executeServerCommand<StatusResult>(SERVER_COMMANDS.reindex);
    const seconds = status.last_index?.seconds;
    void vscode.window.showInformationMessage(
      `ctx-lsp reindexed ${formatCount(status.files_indexed)} files, ${formatCount(status.symbols)} symbols` +
        (typeof seconds === "number" ? ` in ${seconds} s.` : "."),
    );
  }

  async prewarmDocs(): Promise<void> {
    const result = await this.executeServerCommand<PrewarmResult>(SERVER_COMMANDS.prewarmDocs);
    const declared = result.declared ?? [];
    const message =
      declared.length === 0
        ? "ctx-lsp found no declared dependencies (pyproject.toml, requirements*.txt) to prewarm."
        : `ctx-lsp prewarmed the docs of ${result.warmed ?? 0} of ${declared.length} declared dependencies` +
          ` (the others are not installed in the workspace's Python environment).`;
    void vscode.window.showInformationMessage(message);
  }

  showOutput(): void {
    this.log.show();
  }
}

/**
 * The Markdown the commands show (a bundle, its explanation, a symbol), as read-only
 * documents of their own scheme. Untitled documents, used before, each stayed as an unsaved
 * "Untitled-N" tab named after its first line, and closing VS Code asked to save every one.
 */
class ReadOnlyDocuments implements vscode.TextDocumentContentProvider, vscode.Disposable {
  private readonly contents = new Map<string, string>();
  private readonly changed = new vscode.EventEmitter<vscode.Uri>();
  private readonly registration = vscode.workspace.registerTextDocumentContentProvider(DOCUMENT_SCHEME, this);
  readonly onDidChange = this.changed.event;

  provideTextDocumentContent(uri: vscode.Uri): string {
    return this.contents.get(uri.toString()) ?? "";
  }

  async show(name: string, content: string): Promise<void> {
    const uri = vscode.Uri.from({ scheme: DOCUMENT_SCHEME, path: `/${documentName(name)}.md` });
    this.contents.set(uri.toString(), content);
    this.changed.fire(uri);
    let doc = await vscode.workspace.openTextDocument(uri);
    if (doc.languageId !== "markdown") doc = await vscode.languages.setTextDocumentLanguage(doc, "markdown");
    await vscode.window.showTextDocument(doc, { preview: true });
  }

  dispose(): void {
    this.registration.dispose();
    this.changed.dispose();
  }
}

/** Call `each` for every line of a stream (the server's stdout or stderr). */
function lines(input: NodeJS.ReadableStream, each: (line: string) => void): void {
  readline.createInterface({ input, crlfDelay: Infinity, terminal: false, historySize: 0 }).on("line", each);
}

/** A failure the user can act on: shown as is, without "see the log". */
class UserError extends Error {}

function errorMessage(err: unknown): string {
  if (err instanceof Error) return err.message;
  return String(err);
}

/** Wrap a command so a failure becomes one readable message instead of an unhandled rejection. */
function guarded(name: string, log: () => void, work: () => unknown): () => Promise<void> {
  return async () => {
    try {
      await work();
    } catch (err) {
      if (err instanceof UserError) {
        void vscode.window.showWarningMessage(`ctx-lsp: ${err.message}`);
        return;
      }
      const choice = await vscode.window.showErrorMessage(`ctx-lsp: ${name} failed: ${errorMessage(err)}`, "Show Log");
      if (choice === "Show Log") log();
    }
  };
}

let extension: CtxLspExtension | undefined;

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  const ext = new CtxLspExtension(context);
  extension = ext;
  const showLog = () => ext.showOutput();
  context.subscriptions.push(
    ext,
    vscode.commands.registerCommand(COMMANDS.showStatus, guarded("Show Status", showLog, () => ext.showStatus())),
    vscode.commands.registerCommand(COMMANDS.copyBundle, guarded("Copy Context Bundle", showLog, () => ext.copyBundle())),
    vscode.commands.registerCommand(COMMANDS.explainLastBundle, guarded("Explain Last Bundle", showLog, () => ext.explainLastBundle())),
    vscode.commands.registerCommand(COMMANDS.showSymbol, guarded("Show Symbol", showLog, () => ext.showSymbol())),
    vscode.commands.registerCommand(COMMANDS.reindex, guarded("Reindex", showLog, () => ext.reindex())),
    vscode.commands.registerCommand(COMMANDS.prewarmDocs, guarded("Prewarm Docs", showLog, () => ext.prewarmDocs())),
    vscode.commands.registerCommand(COMMANDS.restartServer, guarded("Restart Server", showLog, () => ext.restart("asked for"))),
    vscode.commands.registerCommand(COMMANDS.showOutput, showLog),
    vscode.workspace.onDidChangeConfiguration((event) => {
      if (event.affectsConfiguration(SECTION)) void ext.settingsChanged();
    }),
    vscode.workspace.onDidGrantWorkspaceTrust(() => void ext.settingsChanged()),
    vscode.workspace.onDidChangeWorkspaceFolders(() => void ext.settingsChanged()),
  );
  // Neither waits for the other, nor holds up activation: asking the Python extension can
  // take seconds while it discovers environments.
  void ext.initialStart();
  void onDidChangePythonInterpreter(() => void ext.settingsChanged()).then((listener) => {
    if (listener) context.subscriptions.push(listener);
  });
}

export async function deactivate(): Promise<void> {
  await extension?.stop();
  extension = undefined;
}
