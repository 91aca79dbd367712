/** Names of the read-only Markdown documents the commands open (extension.ts `ReadOnlyDocuments`). */

/** Longest name kept: it is the editor tab's title. */
export const MAX_DOCUMENT_NAME = 80;

/**
 * A tab title that is also a safe path segment: no separators or characters a file name
 * cannot hold (the name shows in "Save As"), no leading dot, at most MAX_DOCUMENT_NAME.
 */
export function documentName(title: string): string {
  const name = title
    .replace(/\s+/g, " ")
    .replace(/[\u0000-\u001f/\\:*?"<>|]+/g, "_")
    .trim()
    .replace(/^\.+/, "")
    .slice(0, MAX_DOCUMENT_NAME)
    .trim();
  return name || "ctx-lsp";
}
