/**
 * The language client's options, as plain data (extension.ts turns them into
 * `LanguageClientOptions`).
 *
 * Document sync: every file-backed document is sent, whatever its language. The server
 * indexes every text file of the workspace, and an open buffer overrides the disk until it
 * is closed, so a bundle shows unsaved edits. The sync kind (incremental) is the server's
 * `textDocumentSync` answer, which vscode-languageclient follows. Untitled buffers and
 * this extension's own documents have no file path and are not sent.
 */

export const CLIENT_ID = "ctxLsp";
export const CLIENT_NAME = "ctx-lsp";

export interface DocumentFilter {
  scheme: string;
  language?: string;
  pattern?: string;
}

export const DOCUMENT_SELECTOR: readonly DocumentFilter[] = [{ scheme: "file" }];

/** What VS Code's watcher reports when the server does not watch the disk itself. */
export const FILE_EVENTS_GLOB = "**/*";

export interface ClientOptionsSpec {
  documentSelector: DocumentFilter[];
  initializationOptions: Record<string, unknown>;
  /** Glob for `synchronize.fileEvents`, or undefined: the server watches the disk itself. */
  fileEventsGlob?: string;
  /** The log channel is opened by hand (Show Server Log), never by the client on errors. */
  revealOutputChannelOn: "never";
}

export function clientOptionsSpec(initializationOptions: Record<string, unknown>, editorWatchesFiles: boolean): ClientOptionsSpec {
  return {
    documentSelector: DOCUMENT_SELECTOR.map((f) => ({ ...f })),
    initializationOptions,
    fileEventsGlob: editorWatchesFiles ? FILE_EVENTS_GLOB : undefined,
    revealOutputChannelOn: "never",
  };
}

export type LogLevelName = "trace" | "debug" | "info" | "warn" | "error";

/** `ctx-lsp serve` logs `%(asctime)s %(levelname)s %(name)s: %(message)s` to stderr. */
const LOG_RECORD = /^\d{4}-\d\d-\d\d[ T][\d:.,]+\s+(DEBUG|INFO|WARNING|ERROR|CRITICAL)\b/;

const LEVELS: Record<string, LogLevelName> = {
  DEBUG: "debug",
  INFO: "info",
  WARNING: "warn",
  ERROR: "error",
  CRITICAL: "error",
};

/**
 * The log level of each line the server writes to stderr. vscode-languageclient logs every
 * stderr line as an error, which would show the server's INFO records as errors. Lines
 * that are not a record's first line (a traceback) keep the level of the record they
 * continue; anything before the first record (Python failing to start) is an error.
 */
export class StderrLevels {
  private current: LogLevelName = "error";

  level(line: string): LogLevelName {
    const match = LOG_RECORD.exec(line);
    if (match) this.current = LEVELS[match[1]];
    return this.current;
  }
}
