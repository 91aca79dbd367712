/**
 * VS Code command ids this extension contributes (package.json `contributes.commands`).
 *
 * They live under `ctxLsp.`, never `ctx.`: vscode-languageclient registers the server's
 * own `workspace/executeCommand` commands (`ctx.status`, `ctx.reindex`, …) as VS Code
 * commands by those names, and a second registration of the same id would fail.
 */
export const COMMANDS = {
  showStatus: "ctxLsp.showStatus",
  copyBundle: "ctxLsp.copyBundle",
  explainLastBundle: "ctxLsp.explainLastBundle",
  showSymbol: "ctxLsp.showSymbol",
  reindex: "ctxLsp.reindex",
  prewarmDocs: "ctxLsp.prewarmDocs",
  restartServer: "ctxLsp.restartServer",
  showOutput: "ctxLsp.showOutput",
} as const;

export type CommandId = (typeof COMMANDS)[keyof typeof COMMANDS];

export const COMMAND_IDS: readonly CommandId[] = Object.values(COMMANDS);
